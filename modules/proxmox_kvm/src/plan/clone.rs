//! A clone: which VMs are its source and its target (the identity rule, docs/pve-semantics.md §29), and the config PVE gives the new VM.

use std::collections::BTreeMap;

use module_utils::pve::config::VmConfig;
use module_utils::pve::resources::{resolve_as, NameOf, VmResource, NAME, VMID};
use module_utils::pve::storage::StorageConfig;
use module_utils::{Error, Result};

use super::*;

/// A clone's source: the VM `vmid` names, else the VM named `clone`. With `vmid` set, `clone`
/// may be any value, as community.proxmox documents (`clone: arbitrary_name`), unless it is the
/// name of a VM: then it must be that vmid's VM (`resolve_as`, docs/pve-semantics.md §29).
pub fn clone_source(vms: &[VmResource], vmid: Option<u64>, clone: &str, name_of: NameOf) -> Result<VmResource> {
    let names_a_vm = vmid.is_none() || vms.iter().any(|v| v.kind == "qemu" && v.name.as_deref() == Some(clone));
    let source = resolve_as(vms, (VMID, vmid), ("clone", Some(clone).filter(|_| names_a_vm)), name_of)?;
    source.cloned().ok_or_else(|| {
        Error::failed(match vmid {
            Some(id) => format!("VM with vmid {id} does not exist in cluster"),
            None => format!("VM with name = {clone} does not exist in cluster"),
        })
    })
}

/// A clone's target when it exists: `newid` and `name`, which must name one VM other than the
/// source, or none (`resolve_as`).
pub fn clone_target(
    vms: &[VmResource],
    source: &VmResource,
    newid: Option<u64>,
    name: Option<&str>,
    name_of: NameOf,
) -> Result<Option<VmResource>> {
    let others: Vec<VmResource> = vms.iter().filter(|v| v.vmid != source.vmid).cloned().collect();
    match (newid, name) {
        (None, None) => Ok(None),
        (newid, name) => Ok(resolve_as(&others, ("newid", newid), (NAME, name), name_of)?.cloned()),
    }
}

/// The config a new clone `vmid` (0: not known yet) of `source` gets from PVE's clone
/// (docs/pve-semantics.md §15): the source's applied config (Qemu.pm `clone_vm` copies the
/// config's top level and discards its pending part, "discarding for clone") without what PVE
/// does not copy,
/// each disk as the clone's own volume (`volumes::Allocator::clone_drive`), a new MAC on every
/// NIC and a new `smbios1` uuid and `vmgenid` (known after apply), and its name.
pub fn clone_base(
    source: &VmConfig,
    name: &str,
    vmid: u64,
    c: &CloneOpts,
    storages: &[StorageConfig],
    listed: &[String],
) -> VmConfig {
    let mut base = BTreeMap::new();
    let mut alloc = Allocator::new(vmid, storages, std::iter::empty(), listed);
    for (k, v) in source.current.clone() {
        if matches!(
            k.as_str(),
            "template" | "lock" | "parent" | "vmstate" | "runningmachine" | "runningcpu" | "snaptime"
        ) || k.starts_with("unused")
        {
            continue;
        }
        let value = if is_nic_key(&k) {
            match PropertyString::parse_lenient(&NET, &v) {
                Ok(mut nic) => {
                    nic.remove("macaddr");
                    mark_new_mac(&k, &nic.to_string())
                }
                Err(_) => v,
            }
        } else if is_drive_key(&k) {
            alloc.clone_drive(&k, &v, c.full, c.storage.as_deref(), c.format.as_deref())
        } else if k == "vmgenid" {
            module_utils::check::unknown::KNOWN_AFTER_APPLY.to_string()
        } else {
            v
        };
        base.insert(k, value);
    }
    base.insert("smbios1".into(), clone_smbios1(source.current.get("smbios1").map(String::as_str)));
    base.insert("name".into(), name.to_string());
    VmConfig::from_current(base)
}

/// A new clone's config (`base`, as PVE makes it) after the task's `changes`, which the clone's
/// configuring write makes once the copy is done: new disks named after the clone's own.
pub(super) fn clone_config(
    base: &VmConfig,
    vmid: u64,
    changes: &[Change],
    storages: &[StorageConfig],
    listed: &[String],
) -> VmConfig {
    let mut config = predict(base, changes, false);
    Allocator::new(vmid, storages, base.current.iter(), listed).name_changes(&mut config, changes);
    config
}

/// Clone `source` (config `source_config`) as `name`, configured as the task asks; refused
/// before any write when the task asks what only proxmox_disk may do. `taken`, and `storages`
/// with `listed`: as `create`.
pub fn clone(
    source: &VmResource,
    source_config: &VmConfig,
    c: &CloneOpts,
    name: &str,
    p: &Params,
    taken: Vec<u64>,
    (storages, listed): (&[StorageConfig], &[String]),
) -> Result<Plan> {
    let newid = c.newid.unwrap_or(0);
    let base = clone_base(source_config, name, newid, c, storages, listed);
    let conv = converge(&base, &p.desired);
    conv.check_refusals(&format!(
        "the clone of VM {} cannot be configured as the task asks (nothing was cloned)",
        source.vmid
    ))?;
    let planned = clone_config(&base, newid, &conv.changes, storages, listed);
    let node = clone_other_node(&source.node, c.target.as_deref()).unwrap_or(&source.node).to_string();
    let mut body: Form =
        vec![("name".into(), name.to_string()), ("full".into(), if c.full { "1" } else { "0" }.into())];
    for (k, v) in [
        ("format", &c.format),
        ("storage", &c.storage),
        ("target", &c.target),
        ("snapname", &c.snapname),
        ("pool", &p.pool),
    ] {
        if let Some(v) = v {
            body.push((k.into(), v.clone()));
        }
    }
    // A clone is predicted as a plain VM (PVE's clone drops `template`), whatever the task sets.
    let prediction =
        PredictedVm { template: false, ..PredictedVm::created(newid, Some(name.to_string()), &node, &planned) };
    let configure: Form = conv.changes.iter().map(|c| (c.key.clone(), c.after.clone())).collect();
    let new_config = NewConfig::Clone {
        source: Box::new(source_config.clone()),
        name: name.to_string(),
        opts: Box::new(c.clone()),
        changes: conv.changes,
        storages: storages.to_vec(),
        listed: listed.to_vec(),
    };
    Ok(Plan {
        write: Write::Clone {
            source: source.clone(),
            newid: c.newid,
            name: name.to_string(),
            node: node.clone(),
            body,
            configure,
        },
        prediction: masked(prediction),
        vm: resource(newid, Some(name), &node, "stopped"),
        after: planned,
        auto_vmid: c.newid.is_none().then_some(taken),
        new_config: Some(new_config),
    })
}
