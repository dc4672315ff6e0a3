//! What proxmox_kvm checks before any write, in check and real runs alike: the node, storages, volumes, bridges and targets the write needs, the schema of each request, the privileges it needs, the VM's state, the space.
//!
//! PVE accepts some of these writes and fails later, or refuses them only once sent; a check
//! run sends nothing. Running the same checks here, before the first write of either kind of
//! run, makes `--check` fail where the real run fails, with the same message
//! (docs/pve-semantics.md §26 preflight, §27 privileges, §28 and §34 schema). `schema` checks
//! each planned request through the client (`Api::check_write`), before the privileges as PVE
//! does, with the context the real run's failure carries; the client then sends it without
//! checking it again.

use module_utils::check::world::World;
use module_utils::pve::client::Api;

use module_utils::pve::config::VmConfig;
use module_utils::pve::devices::{disk_bus, is_disk_key, is_nic_key, parse_new_cloudinit, parse_new_disk, Disk};
use module_utils::pve::permissions::{self, Listing, Need, Privileges};
use module_utils::pve::pools::{require_guest_pool, require_pool, PoolMove};
use module_utils::pve::preflight::{Content, Preflight};
use module_utils::pve::propstring::{PropertyString, NET};
use module_utils::pve::request::{describe, ApiPath, Form, Method};
use module_utils::pve::resources::{node_bridges, require_bridge, VmResource};
use module_utils::pve::schema::{boot_order_devices, drive};
use module_utils::pve::state::{self, Facts, Op};
use module_utils::pve::storage::StorageConfig;
use module_utils::pve::values;
use module_utils::pve::volume::{content_and_owner, Volume, VolumeKind};
use module_utils::{Error, Result};

use crate::params::Params;
use crate::plan::{PowerCall, Write};

mod body;
mod mappings;
mod migration;
mod privileges;
mod read_back;
mod replication;
mod restore;
mod volumes;
use body::{removed_keys, split_config_body, value};
use volumes::allocated_volumes;

/// The task option a config key comes from, for messages: `scsi.scsi1`, `net.net0`, `efidisk0`.
fn option_of(key: &str) -> String {
    if is_nic_key(key) {
        return format!("net.{key}");
    }
    match disk_bus(key) {
        Some(bus) if bus != "efidisk" && bus != "tpmstate" => format!("{bus}.{key}"),
        _ => key.to_string(),
    }
}

/// Refuse, before any write and in check mode alike, a `netN` the task sets on a bridge that
/// `node` lacks (`resources::require_bridge`); the node's bridges are read once, only when needed.
pub(crate) fn require_bridges<'k>(
    api: &dyn Api,
    node: &str,
    values: impl IntoIterator<Item = (&'k str, &'k str)>,
) -> Result<()> {
    let mut bridges: Option<Vec<String>> = None;
    for (key, value) in values {
        if !is_nic_key(key) {
            continue;
        }
        let nic = PropertyString::parse_lenient(&NET, value).ok();
        let Some(bridge) = nic.as_ref().and_then(|n| n.get("bridge")) else { continue };
        if bridges.is_none() {
            bridges = Some(node_bridges(api, node)?);
        }
        require_bridge(bridges.as_deref().unwrap_or_default(), bridge, node, &option_of(key))?;
    }
    Ok(())
}

/// The checks of one task, with the reads they share.
pub(crate) struct Checks<'a> {
    api: &'a dyn Api,
    /// The preflight's reads, also what names new volumes and what a removal frees (lib.rs).
    pub(crate) preflight: Preflight<'a>,
    pub(crate) privileges: Privileges<'a>,
}

impl<'a> Checks<'a> {
    /// `privileges`: those of the user the run authenticates as (`Session::privileges`);
    /// `world`: the run's reads (the space earlier tasks of a check run take, the nodes listed, §66).
    pub(crate) fn new(api: &'a dyn Api, privileges: Privileges<'a>, world: &World<'_>) -> Checks<'a> {
        let preflight = Preflight::new(api).reserving(world.reserved()).sharing_nodes(world.known_nodes());
        Checks { api, preflight, privileges }
    }

    /// In a check run, the space the allocations checked so far take, for the prediction.
    pub(crate) fn reserved_here(&self) -> Vec<(String, u64)> {
        self.preflight.reserved_here()
    }

    /// storage.cfg as this user sees it (read once per task): what volume names depend on.
    pub(crate) fn storages(&self) -> Result<Vec<StorageConfig>> {
        Ok(self.preflight.storages()?.as_ref().clone())
    }

    /// The drives and NICs a create or config write sets: each new disk's storage holds images (a
    /// cloud-init drive's too), each ISO or import source it names exists and parses (§62.3), each bridge is on the node.
    fn config_values(&self, node: &str, values: &Form, default_storage: Option<&str>) -> Result<()> {
        for (key, value) in values.iter().filter(|(k, _)| is_disk_key(k) && !k.starts_with("unused")) {
            let Some(disk) = Disk::parse(key, value) else { continue };
            let Some(file) = disk.volume.as_deref() else { continue };
            let option = option_of(key);
            if let Some((storage, _)) = parse_new_disk(file) {
                if let Some(sid) = storage.or(default_storage) {
                    self.preflight.new_drive(node, sid, &disk, &option)?; // with its import source (§63.3, §70)
                } else if let Some(src) = disk.other.get("import-from") {
                    self.preflight.import_source(node, key, src)?;
                }
            } else if let Some(sid) = parse_new_cloudinit(file) {
                self.preflight.storage(node, sid, Content::Images, &option)?;
            } else {
                self.preflight.existing_drive(key, value, &option)?; // its name (§57.1), its format= (§63.4)
                if Volume::parse(file).is_some_and(|v| !matches!(v.kind, VolumeKind::Image | VolumeKind::CloudInit))
                    && matches!(content_and_owner(file).0, "iso" | "images")
                {
                    // an ISO or import source (PVE fails in its task); not the VM's own images, which
                    // `check_volume_access` lets change without listing the storage; others: §42.4
                    self.preflight.attached(node, file, &option)?;
                }
            }
        }
        require_bridges(self.api, node, values.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    }

    /// The checks of `write`, in PVE's order: the preflight; the schema of each request
    /// (`schema`: PVE validates a request before its handler checks privileges in code, a
    /// root-only `hostpci`, say); the privileges; the VM's state (`state`: locks, protection,
    /// linked clones, power); then the rules the handler applies while it writes
    /// (`while_writing`). `before`: the config the write was planned from (the source's, for a
    /// clone); `vmid`: the id a new VM will have (a create or clone).
    /// A VM's move into the task's pool (`pve::pools`), in both modes before any write of the
    /// task: the pool exists, the privileges of the move, its request against PVE's schema.
    pub(crate) fn pool_move(&self, mv: &PoolMove) -> Result<()> {
        require_pool(self.api, &mv.to, "pool")?;
        let request = describe(Method::Put, &PoolMove::path(), &mv.form());
        self.privileges.require_for(&permissions::pool_move(mv.vmid, &mv.to, mv.from.as_deref()), &request)?;
        self.api.check_write(Method::Put, &PoolMove::path(), &mv.form())
    }

    /// Preflight, then privileges, of `write`. `before`: the config the write was planned from
    /// (the source's, for a clone); `vmid`: the id a new VM will have (a create or clone).
    pub(crate) fn before_write(&self, write: &Write, before: Option<&VmConfig>, vmid: u64, p: &Params) -> Result<()> {
        self.preflight(write, before, p)?;
        self.schema(write, vmid)?;
        self.require(write, before, vmid, p)?;
        if let (Write::Power { vm, call: PowerCall::Hibernate, .. }, Some(config)) = (write, before) {
            // vm_suspend's `todisk` checks: the state's storage, as PVE finds it (§44.2), or the
            // storages it may pick when one is hidden from this user (§52)
            let need = permissions::hibernate(vm.vmid, &config.current, &self.preflight.storages()?);
            self.privileges.require_for(&need, &described(write, vmid))?;
        }
        self.state(write, before, vmid, p)?;
        while_writing(write, before)?;
        self.last(write, before, vmid)
    }

    /// `before_write` for a create or clone without a vmid, which takes the id `offer` gives (the
    /// one PVE offers now) and returns it: the same checks in the same order, but the id is asked
    /// for only once the preflight and the privileges' read are done. The later the id is taken,
    /// the less likely another run creating at the same moment is offered the same one.
    pub(crate) fn before_new_vm(
        &self,
        write: &Write,
        before: Option<&VmConfig>,
        p: &Params,
        offer: impl FnOnce() -> Result<u64>,
    ) -> Result<u64> {
        self.preflight(write, before, p)?;
        self.privileges.read_ahead()?;
        let vmid = offer()?;
        self.schema(write, vmid)?;
        self.require(write, before, vmid, p)?;
        self.state(write, before, vmid, p)?;
        while_writing(write, before)?;
        self.last(write, before, vmid)?;
        Ok(vmid)
    }

    /// What the VM's state makes PVE refuse of each request of `write` (`pve::state`: its lock,
    /// protection, a template's base volumes in use, the power state the request needs), with
    /// the context the real run's failure has; checked after the privileges, as PVE's handlers
    /// check them after the method's own permissions. `before`: the config the write was
    /// planned from (a clone's source's); a create has none.
    fn state(&self, write: &Write, before: Option<&VmConfig>, vmid: u64, p: &Params) -> Result<()> {
        let (Some(config), Some(vm)) = (before, written_vm(write)) else { return Ok(()) };
        let mut running = vm.status == "running";
        for (_, path, form, context) in requests(write, vmid) {
            let deletes = removed_keys(&form, config);
            let Some(op) = op_of(write, path.segments().last().map(String::as_str), &form, &deletes) else { continue };
            let facts = Facts { vmid: vm.vmid, config, running, skiplock: p.skiplock };
            // what a start reads of its node, CPU model, storages and mappings (§61, §62, §70); a hidden CPU count warns
            let node = if op == Op::Start { self.start_facts(vm, config)? } else { Default::default() };
            if let Some(what) = (op == Op::Start).then(|| values::start_unknown(vm, config, node.cpus)).flatten() {
                self.privileges.not_known(what);
            }
            let values = || values::refusal(op, vm, config, p.purge, &node);
            if let Some(words) = self.mapped(op, config, &node, state::refusal(op, &facts), values) {
                return Err(Error::failed(format!("{context}: {words}")));
            }
            let replicated = || self.replicated_state(write, &form, config, running, p.purge);
            if let Some(words) = if matches!(op, Op::Destroy | Op::Migrate) { replicated()? } else { None } {
                return Err(Error::failed(format!("{context}: {words}")));
            }
            if op == Op::Destroy && config.current.get("template").is_some_and(|t| t == "1") {
                self.template_unused(vm.vmid, &vm.node, config).map_err(|e| e.context(&context))?;
            }
            if op == Op::Stop {
                running = false; // a stop before the removal or conversion: the next request finds it stopped
            }
        }
        Ok(())
    }

    /// QemuServer.pm destroy_vm of a template: refused while a linked clone uses one of its
    /// base volumes (each storage's volumes listed once).
    fn template_unused(&self, vmid: u64, node: &str, config: &VmConfig) -> Result<()> {
        for (storage, volid) in state::base_volumes(config) {
            // PVE looks with root's view; this user's listing may leave a clone's volume out (§52)
            let listing = permissions::volume_listing(&self.privileges, &storage)?;
            if listing != Listing::Refused {
                let listed = self.preflight.volumes_on(node, &storage)?;
                if state::base_in_use(&volid, listed.keys()) {
                    return Err(Error::failed(state::template_in_use(&volid)));
                }
            }
            if listing != Listing::Complete {
                let refusal = state::template_in_use(&volid);
                self.privileges.not_known(permissions::base_use_not_known(vmid, &storage, &volid, listing, &refusal));
            }
        }
        Ok(())
    }

    /// What PVE would refuse of `write` other than for privileges: nodes, a new VM's pool,
    /// storages, volumes, bridges, targets, a create's VNC clipboard and vIOMMU (§61).
    fn preflight(&self, write: &Write, before: Option<&VmConfig>, p: &Params) -> Result<()> {
        match write {
            Write::Create { node, form, .. } => {
                self.preflight.node(node, "node")?;
                if let Some(pool) = p.pool.as_deref() {
                    require_guest_pool(self.api, pool)?;
                }
                self.config_values(node, form, p.storage.as_deref())?;
                let words = values::request_clipboard(form).or_else(|| values::command_cpu::request_machine(form));
                words.map_or(Ok(()), |words| Err(Error::failed(words)))
            }
            Write::Config { vm, body, .. } => {
                let (set, _) = split_config_body(body);
                self.config_values(&vm.node, &set, None)?;
                // update_vm_api's check_hookscript, after the drives (§58.5, §67.1)
                value(&set, "hookscript")
                    .map_or(Ok(()), |h| self.preflight.hookscript(&self.privileges, &vm.node, h))?;
                self.replicated_drives(write)
            }
            Write::Clone { source, body, node, configure, .. } => {
                if let Some(pool) = value(body, "pool") {
                    require_guest_pool(self.api, pool)?;
                }
                let source_config = before.map(VmConfig::effective).unwrap_or_default();
                self.preflight.clone_target(
                    &source.node,
                    value(body, "target"),
                    value(body, "storage"),
                    &source_config,
                )?;
                // clone_vm parses each drive (§65.1), then its 'copy' or 'clone' feature (§51.1)
                drive::clone_refusal(&source_config).map_or(Ok(()), |words| Err(Error::failed(words)))?;
                let (full, snapshot) = (value(body, "full") != Some("0"), value(body, "snapname").is_some());
                self.preflight.clone_features(&source_config, full, snapshot)?;
                // its task's clone_disk: QEMU mirrors a running source's drives, some refused (§58)
                if full && !snapshot && source.status == "running" {
                    let storage = value(body, "storage");
                    if let Some(words) = self.preflight.mirrored_clone(source, &source_config, storage)? {
                        let option = if storage.is_some() { "storage" } else { "clone" };
                        return Err(Error::failed(format!("{option}: clone failed: {words}")));
                    }
                }
                // the configuring write's drives and NICs, on the clone's node (a composite
                // operation is checked whole before its first write)
                let configure: Form =
                    configure.iter().filter_map(|(k, v)| Some((k.clone(), stand_in(k, v)?))).collect();
                self.config_values(node, &configure, None).map_err(|e| e.context(&clone_unconfigurable(source)))
            }
            Write::Migrate { vm, body, .. } => {
                let config = before.map(VmConfig::effective).unwrap_or_default();
                self.preflight.migrate_target(&vm.node, value(body, "target").unwrap_or(""), &config, None)
            }
            Write::Power { .. } | Write::Remove { .. } | Write::Template { .. } => Ok(()),
        }
    }

    /// The space of the volumes `write` makes PVE allocate (`after`: the config the plan
    /// predicts, its volumes named with `vmid`), where the storage reserves it: the last check,
    /// as PVE allocates only in the create, config or clone work, after every other check.
    pub(crate) fn capacity(&self, write: &Write, before: Option<&VmConfig>, after: &VmConfig, vmid: u64) -> Result<()> {
        let node = match write {
            Write::Create { node, .. } => node,
            Write::Config { vm, .. } => &vm.node,
            Write::Clone { source, .. } => &source.node,
            _ => return Ok(()),
        };
        self.preflight.allocations(node, &allocated_volumes(write, before, after, vmid))?;
        // A clone's configuring write, the composite's last request: PVE's API schema on what it
        // sets, in check and real runs alike, so a value PVE refuses stops the task before the
        // clone is made (the client would refuse it only once the clone exists).
        match write {
            Write::Clone { source, node, configure, .. } if !configure.is_empty() => {
                let path = ApiPath::new(["nodes", node.as_str(), "qemu", &vmid.to_string(), "config"]);
                let form: Form = configure.iter().filter_map(|(k, v)| Some((k.clone(), stand_in(k, v)?))).collect();
                self.api.check_write(Method::Put, &path, &form).map_err(|e| e.context(&clone_unconfigurable(source)))
            }
            _ => Ok(()),
        }
    }

    /// Each request the real run sends for `write`, checked against PVE's API schema through
    /// the client (in both kinds of run, so that it comes before the privileges as in PVE; the
    /// client does not check it again when it sends it), failing with the context the real run's
    /// failure has. `vmid`: a new VM's id.
    pub(crate) fn schema(&self, write: &Write, vmid: u64) -> Result<()> {
        for (method, path, form, context) in requests(write, vmid) {
            self.api.check_write(method, &path, &form).map_err(|e| e.context(&context))?;
        }
        Ok(())
    }
}

/// A planned value as the schema can check it before PVE has decided what the plan marks
/// `(known after apply)` (a clone's new MACs, its `smbios1` uuid and `vmgenid`): the mark as a
/// value of the same kind (the real run sends what PVE gave the clone); `None` for another value
/// that holds one (a volume PVE will name), left to the real write.
fn stand_in(key: &str, value: &str) -> Option<String> {
    use module_utils::check::unknown::KNOWN_AFTER_APPLY;
    if !value.contains(KNOWN_AFTER_APPLY) {
        return Some(value.to_string());
    }
    let kind = if is_nic_key(key) {
        "BC:24:11:00:00:01"
    } else if key == "smbios1" || key == "vmgenid" {
        "00000000-0000-4000-8000-000000000000"
    } else {
        return None;
    };
    Some(value.replace(KNOWN_AFTER_APPLY, kind))
}

/// What a refusal of a clone's configuring values says was not done.
fn clone_unconfigurable(source: &VmResource) -> String {
    format!("the clone of VM {} cannot be configured as the task asks (nothing was cloned)", source.vmid)
}

/// The existing VM `write` acts on (a clone's source); `None` for a create.
fn written_vm(write: &Write) -> Option<&VmResource> {
    match write {
        Write::Create { .. } => None,
        Write::Config { vm, .. }
        | Write::Power { vm, .. }
        | Write::Remove { vm, .. }
        | Write::Template { vm, .. }
        | Write::Migrate { vm, .. } => Some(vm),
        Write::Clone { source, .. } => Some(source),
    }
}

/// The state rule of one request of `write` (its path's last segment), `None` for a create.
fn op_of<'d>(write: &Write, last: Option<&str>, form: &Form, deletes: &'d [String]) -> Option<Op<'d>> {
    Some(match (write, last) {
        (Write::Config { .. }, _) => Op::Config { deletes, force: false },
        (Write::Clone { .. }, _) => Op::Clone {
            full: value(form, "full") != Some("0"),
            storage: value(form, "storage").is_some(),
            format: value(form, "format").is_some(),
        },
        (Write::Migrate { .. }, _) => Op::Migrate,
        (Write::Remove { .. }, Some("stop")) | (Write::Template { .. }, Some("stop")) => Op::Stop,
        (Write::Remove { .. }, _) => Op::Destroy,
        (Write::Template { .. }, _) => Op::Template,
        (Write::Power { call, .. }, _) => match call {
            PowerCall::Start => Op::Start,
            PowerCall::Resume => Op::Resume,
            PowerCall::Shutdown { .. } => Op::Stop,
            PowerCall::Reboot => Op::Reboot,
            PowerCall::Reset => Op::Reset,
            PowerCall::Pause => Op::Suspend { to_disk: false },
            PowerCall::Hibernate => Op::Suspend { to_disk: true },
        },
        (Write::Create { .. }, _) => return None,
    })
}

/// The privileges `write` needs, in the order PVE checks them. `vmid`: a new VM's id.
fn needs(write: &Write, before: Option<&VmConfig>, vmid: u64, p: &Params) -> Vec<Need> {
    match write {
        Write::Create { form, .. } => permissions::create(vmid, p.pool.as_deref(), p.storage.as_deref(), false, form),
        Write::Config { vm, body, .. } => {
            let current = before.map(VmConfig::effective).unwrap_or_default();
            let (set, delete) = split_config_body(body);
            permissions::update(vm.vmid, &current, &set, &delete)
        }
        Write::Clone { source, body, configure, .. } => {
            let source_config = before.map(VmConfig::effective).unwrap_or_default();
            let mut needs =
                permissions::clone(source.vmid, vmid, p.pool.as_deref(), value(body, "storage"), &source_config);
            // the configuring write, the composite's last request: update_vm_api's privileges on
            // the new VM, which the clone gives its maker none of (a composite is checked whole
            // before its first write)
            if !configure.is_empty() {
                let copied = before.map(|c| c.current.clone()).unwrap_or_default();
                let (set, delete) = split_config_body(configure);
                needs.extend(permissions::update(vmid, &copied, &set, &delete));
            }
            needs
        }
        Write::Power { vm, .. } => permissions::power(vm.vmid),
        Write::Remove { vm, stop, .. } => {
            let mut needs = if stop.is_some() { permissions::power(vm.vmid) } else { Vec::new() };
            needs.extend(permissions::destroy(vm.vmid));
            needs
        }
        Write::Template { vm, stop_first } => {
            let mut needs = if *stop_first { permissions::power(vm.vmid) } else { Vec::new() };
            needs.extend(permissions::template(vm.vmid));
            needs
        }
        Write::Migrate { vm, .. } => permissions::migrate(vm.vmid, None),
    }
}

/// What PVE's handler refuses while it writes a config, after its privilege checks: a balloon
/// above the config's memory with the write (`pve::values::balloon`), a VNC clipboard on a display
/// that cannot take it (§43), a boot order naming a device the VM will not have (`before`, §34.3).
/// A clone's configuring write is checked before the clone, against the source's applied config,
/// which `clone_vm` copies, and what the write sets (§37.2).
pub(crate) fn while_writing(write: &Write, before: Option<&VmConfig>) -> Result<()> {
    let (body, context, pending) = match write {
        Write::Config { body, context, .. } => (body, context.clone(), true),
        Write::Clone { source, configure, .. } => (configure, clone_unconfigurable(source), false),
        _ => return Ok(()),
    };
    let stored = match before {
        Some(c) if pending => c.clone(),
        _ => VmConfig::from_current(before.map(|c| c.current.clone()).unwrap_or_default()),
    };
    let words = values::balloon(&stored, body).map(str::to_string).or_else(|| values::request_clipboard(body));
    let words = words.or_else(|| values::command_cpu::request_machine(body));
    if let Some(words) = words.or_else(|| values::drives(&stored.current, body)) {
        return Err(Error::failed(words).context(&context));
    }
    let has = |k: &str| before.is_some_and(|c| c.current.contains_key(k) || (pending && c.pending.contains_key(k)));
    boot_order_devices(&has, body).map_err(|e| Error::failed(format!("boot: {e}")).context(&context))
}

/// The requests `apply` sends for `write`, with the context it gives their failures (for a
/// new VM, `vmid` is the id it takes). A clone's configuring write is planned only from the clone
/// as PVE made it, so it is not among them.
/// The requests of `write` as a refusal names them (`request::describe`), in the order sent.
fn described(write: &Write, vmid: u64) -> String {
    requests(write, vmid)
        .iter()
        .map(|(method, path, form, _)| describe(*method, path, form))
        .collect::<Vec<_>>()
        .join(" then ")
}

pub(crate) fn requests(write: &Write, vmid: u64) -> Vec<(Method, ApiPath, Form, String)> {
    match write {
        Write::Config { vm, body, digest, context, boot_after } => {
            // with `boot_after`, `boot` follows in a second write, guarded by the digest read
            // between them (not known before)
            let (mut form, boot) = crate::plan::boot_last(body, *boot_after);
            if let Some(d) = digest {
                form.push(("digest".into(), d.clone()));
            }
            let path = vm.path().join(["config"]);
            let mut out = vec![(Method::Put, path.clone(), form, context.clone())];
            out.extend(boot.map(|b| (Method::Put, path, b, context.clone())));
            out
        }
        Write::Create { node, label, form, .. } => {
            let mut body: Form = vec![("vmid".into(), vmid.to_string())];
            body.extend(form.iter().cloned());
            let context = format!("creation of qemu VM {label} with vmid {vmid} failed");
            vec![(Method::Post, ApiPath::new(["nodes", node, "qemu"]), body, context)]
        }
        Write::Clone { source, name, body, .. } => {
            let mut form: Form = vec![("newid".into(), vmid.to_string())];
            form.extend(body.iter().cloned());
            let context = format!("Unable to clone vm {name} from vmid {}", source.vmid);
            vec![(Method::Post, source.path().join(["clone"]), form, context)]
        }
        Write::Power { vm, call, body, .. } => {
            vec![(Method::Post, vm.path().join(["status", call.verb()]), body.clone(), call.failure(vm.vmid))]
        }
        Write::Remove { vm, stop, query } => {
            let mut out = Vec::new();
            if let Some(body) = stop {
                let context = format!("stopping of VM {} before its removal failed", vm.vmid);
                out.push((Method::Post, vm.path().join(["status", "stop"]), body.clone(), context));
            }
            out.push((Method::Delete, vm.path(), query.clone(), format!("deletion of VM {} failed", vm.vmid)));
            out
        }
        Write::Template { vm, stop_first } => {
            let mut out = Vec::new();
            if *stop_first {
                let context = format!("stopping of VM {} failed", vm.vmid);
                out.push((Method::Post, vm.path().join(["status", "stop"]), Form::new(), context));
            }
            let context = format!("conversion of VM {} to template failed", vm.vmid);
            out.push((Method::Post, vm.path().join(["template"]), Form::new(), context));
            out
        }
        Write::Migrate { vm, body, context } => {
            vec![(Method::Post, vm.path().join(["migrate"]), body.clone(), context.clone())]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use module_utils::pve::request::form;
    use module_utils::pve::schema::check_write;

    fn vm(status: &str) -> VmResource {
        crate::plan::resource(170, Some("web"), "pve1", status)
    }

    #[test]
    fn marked_values_are_checked_as_values_of_their_kind() {
        let mark = module_utils::check::unknown::KNOWN_AFTER_APPLY;
        let net = format!("virtio={mark},bridge=vmbr0");
        let Some(checked) = stand_in("net0", &net) else { panic!("a NIC is checked") };
        let form: Form = vec![("net0".into(), checked)];
        assert!(check_write(Method::Put, &ApiPath::new(["nodes", "pve1", "qemu", "300", "config"]), &form).is_ok());
        assert_eq!(
            stand_in("smbios1", &format!("uuid={mark}")).as_deref(),
            Some("uuid=00000000-0000-4000-8000-000000000000")
        );
        assert_eq!(stand_in("scsi0", &format!("local-lvm:{mark},size=4G")), None);
        assert_eq!(stand_in("cores", "2").as_deref(), Some("2"));
    }

    #[test]
    fn a_revert_removes_only_what_is_pending() {
        let mut config = VmConfig::from_current([("scsi1".to_string(), "local-lvm:vm-170-disk-1".to_string())].into());
        config.pending.insert("scsi2".into(), "local-lvm:vm-170-disk-2".into());
        let body = form([("revert", "scsi1,scsi2"), ("delete", "net1")]);
        assert_eq!(removed_keys(&body, &config), vec!["scsi2".to_string(), "net1".to_string()]);
    }

    #[test]
    fn each_request_of_a_write_has_its_state_rule() {
        let remove = Write::Remove { vm: vm("running"), stop: Some(Form::new()), query: Form::new() };
        let ops: Vec<Option<Op>> = requests(&remove, 170)
            .iter()
            .map(|(_, path, form, _)| op_of(&remove, path.segments().last().map(String::as_str), form, &[]))
            .collect();
        assert_eq!(ops, vec![Some(Op::Stop), Some(Op::Destroy)]);
        let clone = Write::Clone {
            source: vm("stopped"),
            newid: Some(300),
            name: "c".into(),
            node: "pve1".into(),
            body: form([("full", "0"), ("format", "raw")]),
            configure: Form::new(),
        };
        let (_, path, body, context) = &requests(&clone, 300)[0];
        assert_eq!(
            op_of(&clone, path.segments().last().map(String::as_str), body, &[]),
            Some(Op::Clone { full: false, storage: false, format: true })
        );
        assert_eq!(context, "Unable to clone vm c from vmid 170");
    }
}
