//! The volumes a proxmox_kvm write makes PVE allocate or activate, and what `create_disks` refuses of its drives: a second cloud-init drive.

use std::collections::BTreeMap;

use module_utils::pve::config::VmConfig;
use module_utils::pve::devices::{is_disk_key, parse_new_cloudinit, parse_new_disk, second_cloudinit, Disk};
use module_utils::pve::migration;
use module_utils::pve::preflight::{current_volumes, NewVolume};
use module_utils::pve::request::Form;
use module_utils::pve::resources::VmResource;
use module_utils::pve::volume::{Volume, VolumeKind};
use module_utils::{Error, Result};

use super::{clone_unconfigurable, option_of, value, Checks};
use crate::plan::{PowerCall, Write};

impl Checks<'_> {
    /// The volumes `write` makes PVE activate, which must still be on their file storages
    /// (`Preflight::activated`, docs/pve-semantics.md §65.3): a start's, as `vm_start_nolock`
    /// activates them, and the drives a clone copies or links (`clone_vm`, inside its eval:
    /// `clone failed: `). `before`: the planned-from config (the source's, for a clone);
    /// `predicted`: whether this check run predicts a VM's config (its new volumes are not on
    /// the storage yet), which leaves it out.
    pub(crate) fn activated(
        &self,
        write: &Write,
        before: Option<&VmConfig>,
        predicted: &dyn Fn(&VmResource) -> bool,
        vmid: u64,
    ) -> Result<()> {
        let config = before.map(VmConfig::effective).unwrap_or_default();
        // create_disks of a drive naming an existing volume (an unusedN re-attached, an option of a
        // drive changed): activate_volumes after its access, content and format checks (§68); a
        // running VM's hotplug activates the same volume again after it
        let (node, form, context) = match write {
            Write::Create { node, form, label, .. } => (
                node,
                form.clone(),
                format!("creation of qemu VM {label} with vmid {vmid} failed: unable to create VM {vmid} - "),
            ),
            Write::Config { vm, body, context, .. } if !predicted(vm) => {
                (&vm.node, super::split_config_body(body).0, format!("{context}: "))
            }
            _ => (&String::new(), Form::new(), String::new()),
        };
        let mut attached: Vec<(&String, String)> = form
            .iter()
            .filter(|(k, _)| is_disk_key(k))
            .filter_map(|(k, v)| Some((k, Disk::parse(k, v)?.volume?)))
            .filter(|(_, f)| parse_new_disk(f).is_none() && parse_new_cloudinit(f).is_none())
            .collect();
        attached.sort();
        for (_, volid) in attached {
            self.preflight.activated(&self.privileges, node, std::slice::from_ref(&volid), &context)?;
        }
        let (vm, volumes, context) = match write {
            Write::Power { vm, call: PowerCall::Start, .. } => {
                (vm, current_volumes(&config), format!("{}: ", PowerCall::Start.failure(vm.vmid)))
            }
            Write::Clone { source, name, .. } => {
                // drive_is_cdrom with exclude_cloudinit: a cloud-init drive is copied, and activated
                let drives = config.iter().filter(|(k, _)| !k.starts_with("unused"));
                let copied = drives.filter_map(|(k, v)| Disk::parse(k, v)).filter_map(|d| {
                    let cdrom = d.media == "cdrom";
                    d.volume.filter(|v| Volume::parse(v).is_some_and(|v| !cdrom || v.kind == VolumeKind::CloudInit))
                });
                let volumes = copied.collect();
                (source, volumes, format!("Unable to clone vm {name} from vmid {}: clone failed: ", source.vmid))
            }
            Write::Migrate { vm, context, .. } if before.is_some() && !predicted(vm) => {
                // scan_local_volumes activates each volume on a storage that is not shared and logs
                // its error: the config's and its pending values' here; a snapshot's:
                // `Checks::migration` (R-power-158)
                let storages = self.preflight.storages()?;
                let configs: Vec<_> = before.iter().flat_map(|c| [&c.current, &c.pending]).collect();
                let volumes = migration::scanned_volumes(&configs, &storages);
                if let Some(v) = self.preflight.gone(&self.privileges, &vm.node, &volumes)? {
                    let words = format!("can't migrate local disk '{v}': volume '{v}' does not exist");
                    return Err(Error::failed(format!("{context}: {words}")));
                }
                return Ok(());
            }
            _ => return Ok(()),
        };
        if before.is_none() || predicted(vm) {
            return Ok(());
        }
        self.preflight.activated(&self.privileges, &vm.node, &volumes, &context)
    }
}

/// The volumes PVE allocates for `write`, in its order (`create_disks` and `clone_vm` take the
/// drive keys sorted; docs/pve-semantics.md §8, §15, §26.7), named and sized as the plan predicts
/// them in `after`, each with the option it comes from and PVE's words before a failed allocation:
/// a create's or config write's new disks and cloud-init drives; a clone's copies of the source's
/// drives (full copies, and the TPM state a linked clone copies; a linked clone of a base volume
/// allocates no space of its size), then the disks the task adds to the clone, which the clone's
/// configuring write allocates. A volume the plan could not name is left out.
pub(super) fn allocated_volumes(
    write: &Write,
    source: Option<&VmConfig>,
    after: &VmConfig,
    vmid: u64,
) -> Vec<NewVolume> {
    let is_request = |file: &str| parse_new_disk(file).is_some() || parse_new_cloudinit(file).is_some();
    let requested = |form: &Form| -> Vec<String> {
        let mut keys: Vec<String> = form
            .iter()
            .filter(|(k, v)| Disk::parse(k, v).and_then(|d| d.volume).is_some_and(|f| is_request(&f)))
            .map(|(k, _)| k.clone())
            .collect();
        keys.sort_unstable();
        keys
    };
    let config = after.effective();
    // a new disk's `format=` as the request asks it (create_disks passes it to vdisk_alloc)
    let asked: &Form = match write {
        Write::Create { form, .. } => form,
        Write::Config { body, .. } => body,
        Write::Clone { configure, .. } => configure,
        _ => return Vec::new(),
    };
    let format_of = |key: &str| {
        let value = asked.iter().find(|(k, _)| k == key)?.1.as_str();
        Disk::parse(key, value).filter(|d| d.volume.as_deref().is_some_and(is_request))?.format
    };
    // a new disk or cloud-init drive of the request, not a copy (its format may be storage.cfg's)
    let requested_here = |key: &str| {
        asked
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(k, v)| Disk::parse(k, v)?.volume)
            .is_some_and(|f| is_request(&f))
    };
    // (key, option, words before PVE's error)
    let order: Vec<(String, String, String)> = match write {
        Write::Create { form, .. } => {
            let during = format!("unable to create VM {vmid} - ");
            requested(form).into_iter().map(|k| (option_of(&k), k, during.clone())).collect()
        }
        Write::Config { body, .. } => requested(body).into_iter().map(|k| (option_of(&k), k, String::new())).collect(),
        Write::Clone { body, .. } => {
            let copied = source.map(VmConfig::effective).unwrap_or_default();
            let option = if value(body, "storage").is_some() { "storage" } else { "clone" };
            let copies = copied.keys().map(|k| (option.to_string(), k.clone(), "clone failed: ".to_string()));
            let added =
                config.keys().filter(|k| !copied.contains_key(*k)).map(|k| (option_of(k), k.clone(), String::new()));
            copies.chain(added).collect()
        }
        _ => Vec::new(),
    };
    order
        .into_iter()
        .filter(|(_, key, _)| is_disk_key(key) && !key.starts_with("unused"))
        .filter_map(|(option, key, during)| {
            let disk = Disk::parse(&key, config.get(&key)?)?;
            let volid = disk.volume?;
            let volume = Volume::parse(&volid)?;
            // the VM's own new volume; not a linked clone sharing its base's blocks, nor a CD-ROM
            let (format, new_disk) = (format_of(&key), requested_here(&key));
            // a new disk's or cloud-init drive's file named in a format `parse_name_dir` cannot
            // parse has no owner or kind to read: it is still this VM's, for its storage to refuse
            // (`new_volume`, §42.1)
            let unparsed = new_disk && volume.owner.is_none() && volume.volname.starts_with(&format!("{vmid}/"));
            let cdrom = disk.media == "cdrom" && volume.kind != VolumeKind::CloudInit && !unparsed;
            if (volume.owner != Some(vmid) && !unparsed) || volume.base.is_some() || cdrom {
                return None;
            }
            let (storage, bytes) = (volume.storage.to_string(), disk.size_bytes?);
            Some(NewVolume { storage, volid, bytes, option, during, format, new_disk })
        })
        .collect()
}

/// Qemu.pm `create_disks` refuses a second cloud-init drive (`devices::second_cloudinit`, §42.2):
/// in a create's drives, a config write's (against the VM's config and its pending part) and a
/// clone's configuring write (against the source's config, which the clone copies), with the
/// context of the real run's failure (`unable to create VM <vmid> - ` in a create's task).
pub(super) fn one_cloudinit(write: &Write, before: Option<&VmConfig>, vmid: u64) -> Result<()> {
    let none = BTreeMap::new();
    let (sets, current, pending, context) = match write {
        Write::Create { form, label, .. } => {
            let context = format!("creation of qemu VM {label} with vmid {vmid} failed: unable to create VM {vmid} -");
            (form, &none, &none, context)
        }
        Write::Config { body, context, .. } => {
            (body, before.map_or(&none, |c| &c.current), before.map_or(&none, |c| &c.pending), format!("{context}:"))
        }
        Write::Clone { source, configure, .. } => {
            (configure, before.map_or(&none, |c| &c.current), &none, format!("{}:", clone_unconfigurable(source)))
        }
        _ => return Ok(()),
    };
    match second_cloudinit(sets.iter().map(|(k, v)| (k.as_str(), v.as_str())), current, pending) {
        Some(words) => Err(Error::failed(format!("{context} {words}"))),
        None => Ok(()),
    }
}
