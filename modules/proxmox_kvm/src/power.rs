//! proxmox_kvm: power states, template, delete/revert, migrate and removal of a VM.

use super::*;

impl Run<'_> {
    pub(crate) fn absent(&mut self) -> Result<Outcome> {
        let vms = self.vms()?;
        let Some(vm) = resolve(&vms, self.p.vmid, self.p.name.as_deref())?.cloned() else {
            let label = self.p.label();
            return Ok(Outcome::new(false, format!("VM {label} is already absent"))
                .with("vmid", self.p.vmid.map(Value::from).unwrap_or(Value::Null))
                .with("status", Value::Null)
                .with("power_state", Value::Null)
                .with("mac", json!({}))
                .with("devices", json!({}))
                .with("pending", json!([]))
                .with("reboot_required", false)
                .with_diff(Some(self.diff(self.p.vmid.unwrap_or(0), None, None))));
        };
        self.ctx.identify("vmid", vm.vmid);
        Self::require_qemu(&vm)?;
        let config = self.read_config(&vm)?;
        let lock = config.current.get("lock").cloned().or_else(|| vm.lock.clone());
        if let Some(lock) = lock.filter(|l| l != "suspended") {
            return Err(Error::failed(format!(
                "VM {} is locked ({lock}) and cannot be removed now{}; nothing was changed",
                vm.vmid,
                if lock == "clone" { ": a clone task is still running" } else { "" }
            )));
        }
        let power = self.power(&vm)?;
        let running = matches!(power, Power::Running | Power::Paused);
        if running && !self.p.force {
            return Err(Error::failed(format!(
                "VM {} is running. Stop it before deletion or use force=true.",
                vm.vmid
            )));
        }
        if self.check() {
            let mut gone = PredictedVm::of(&vm, &config);
            gone.removed = true;
            self.record(gone)?;
        } else {
            if running {
                let mut body = Vec::new();
                self.skiplock(&mut body);
                self.post_and_wait(&vm.path().join(["status", "stop"]), body, 30)
                    .map_err(|e| e.context(&format!("stopping of VM {} before its removal failed", vm.vmid)))?;
            }
            let mut query: Form = Vec::new();
            if self.p.purge {
                query.push(("purge".into(), "1".into()));
            }
            if self.p.destroy_unreferenced_disks {
                query.push(("destroy-unreferenced-disks".into(), "1".into()));
            }
            self.skiplock(&mut query);
            let context = format!("deletion of VM {} failed", vm.vmid);
            let answer = self.api.delete(&vm.path(), &query).map_err(|e| e.context(&context))?;
            self.wait(&answer, 0).map_err(|e| e.context(&context))?;
            // The task ended OK: make sure the VM is really gone before saying so.
            let still = module_utils::pve::resources::cluster_vms(self.api)?.into_iter().any(|v| v.vmid == vm.vmid);
            if still {
                return Err(Error::failed(format!(
                    "the removal task of VM {} ended, but the VM still exists",
                    vm.vmid
                )));
            }
        }
        Ok(Outcome::new(true, format!("VM {} removed", vm.vmid))
            .with("vmid", vm.vmid)
            .with("name", vm.name.clone().map(Value::String).unwrap_or(Value::Null))
            .with("node", vm.node.clone())
            .with("status", power.resource_status())
            .with("power_state", Value::Null)
            .with("mac", json!({}))
            .with("devices", json!({}))
            .with("pending", json!([]))
            .with("reboot_required", false)
            .with_diff(Some(self.diff(vm.vmid, Some(&config), None))))
    }

    // -------------------------------------------------------------------- power

    pub(crate) fn find(&mut self, vms: &[VmResource]) -> Result<VmResource> {
        let vm = match resolve(vms, self.p.vmid, self.p.name.as_deref())? {
            Some(vm) => vm.clone(),
            None => {
                return Err(Error::failed(match self.p.vmid {
                    Some(id) => format!("VM with vmid {id} does not exist in cluster"),
                    None => format!("VM with name = {} does not exist in cluster", self.p.label()),
                }))
            }
        };
        self.ctx.identify("vmid", vm.vmid);
        Self::require_qemu(&vm)?;
        Ok(vm)
    }

    /// Record a predicted power change for the later tasks of a check run.
    pub(crate) fn record_power(&self, vm: &VmResource, config: &VmConfig, power: Power, template: bool) -> Result<()> {
        let mut p = PredictedVm::of(vm, config);
        p.status = power.resource_status().to_string();
        p.template = template;
        if power == Power::Stopped || power == Power::Running {
            // Pending changes apply at a start or stop (docs/pve-semantics.md §6).
            p.current = config.effective();
            p.pending.clear();
            p.pending_delete.clear();
        }
        self.record(p)
    }

    pub(crate) fn power_state(&mut self) -> Result<Outcome> {
        let vms = self.vms()?;
        let vm = self.find(&vms)?;
        let now = self.power(&vm)?;
        let id = vm.vmid;
        let path = vm.path();
        let timeout = self.p.timeout.to_string();
        // (action, body, new state, message, extra seconds to wait)
        type Action = (&'static str, Form, Power, String);
        let action: std::result::Result<Action, String> = match (self.p.state, now) {
            (State::Started, Power::Running) => Err(format!("VM {id} is already running")),
            (State::Started, Power::Paused) => Ok(("resume", Vec::new(), Power::Running, format!("VM {id} resumed"))),
            (State::Started, _) => Ok(("start", Vec::new(), Power::Running, format!("VM {id} started"))),
            (State::Stopped, Power::Stopped | Power::Hibernated) => Err(format!("VM {id} is already stopped")),
            (State::Stopped, _) => Ok((
                "shutdown",
                form([("forceStop", if self.p.force { "1" } else { "0" }), ("timeout", timeout.as_str())]),
                Power::Stopped,
                // upstream's words (its integration test asserts them); the shutdown is waited for.
                format!("VM {id} is shutting down"),
            )),
            (State::Restarted, Power::Stopped | Power::Hibernated) => Err(format!("VM {id} is not running")),
            (State::Restarted, _) if self.p.force => {
                Ok(("reset", Vec::new(), Power::Running, format!("VM {id} is restarted")))
            }
            (State::Restarted, _) => {
                Ok(("reboot", form([("timeout", timeout.as_str())]), Power::Running, format!("VM {id} is restarted")))
            }
            (State::Paused, Power::Paused) => Err(format!("VM {id} is already paused")),
            (State::Paused, Power::Running) => Ok(("suspend", Vec::new(), Power::Paused, format!("VM {id} paused"))),
            (State::Hibernated, Power::Hibernated) => Err(format!("VM {id} is already hibernated")),
            (State::Hibernated, Power::Running | Power::Paused) => {
                Ok(("suspend", form([("todisk", "1")]), Power::Hibernated, format!("VM {id} hibernated")))
            }
            (State::Paused | State::Hibernated, _) => {
                return Err(Error::failed(format!(
                    "VM {id} is not running, so it cannot be {}",
                    if self.p.state == State::Paused { "paused" } else { "hibernated" }
                )))
            }
            _ => Err(format!("VM {id} is {}", now.as_str())),
        };
        let config = self.read_config(&vm)?;
        match action {
            Err(msg) => Ok(self.outcome(false, msg, &vm, Some(&config), Some(now.resource_status()), Some(now))),
            Ok((verb, mut body, next, msg)) => {
                let after = if self.check() {
                    self.record_power(&vm, &config, next, vm.template)?;
                    if matches!(next, Power::Stopped | Power::Running) && verb != "resume" {
                        VmConfig::from_current(config.effective())
                    } else {
                        config.clone()
                    }
                } else {
                    self.skiplock(&mut body);
                    // A shutdown may take the whole timeout before PVE gives up or stops hard.
                    let extra = if matches!(verb, "shutdown" | "reboot") { 30 } else { 0 };
                    let what = match verb {
                        "start" | "resume" => "starting",
                        "shutdown" => "stopping",
                        "reboot" | "reset" => "restarting",
                        _ => "suspending",
                    };
                    let mut context = format!("{what} of VM {id} failed");
                    if verb == "shutdown" && !self.p.force {
                        context.push_str(" (with force: true it is stopped hard after the timeout)");
                    }
                    self.post_and_wait(&path.join(["status", verb]), body, extra).map_err(|e| e.context(&context))?;
                    config::read(self.api, &vm)?
                };
                Ok(self.outcome(true, msg, &vm, Some(&after), Some(now.resource_status()), Some(next)))
            }
        }
    }

    pub(crate) fn current(&mut self) -> Result<Outcome> {
        let vms = self.vms()?;
        let vm = self.find(&vms)?;
        let now = self.power(&vm)?;
        let config = self.read_config(&vm)?;
        let name =
            config.get("name").map(str::to_string).or_else(|| vm.name.clone()).unwrap_or_else(|| "(unnamed)".into());
        Ok(self.outcome(
            false,
            format!("VM {name} with vmid = {} is {}", vm.vmid, now.as_str()),
            &vm,
            Some(&config),
            Some(now.resource_status()),
            Some(now),
        ))
    }

    pub(crate) fn template(&mut self) -> Result<Outcome> {
        let vms = self.vms()?;
        let vm = self.find(&vms)?;
        let config = self.read_config(&vm)?;
        if vm.template {
            return Ok(self.outcome(
                false,
                format!("VM {} is already a template", vm.vmid),
                &vm,
                Some(&config),
                Some("stopped"),
                Some(Power::Stopped),
            ));
        }
        let now = self.power(&vm)?;
        let running = matches!(now, Power::Running | Power::Paused);
        if running && !self.p.force {
            return Err(Error::failed(format!(
                "VM {} is running: a running VM cannot be converted to a template; stop it first or set force: true",
                vm.vmid
            )));
        }
        let planned = template_config(&config, vm.vmid);
        let mut after = planned.clone();
        if self.check() {
            self.record_power(&vm, &after, Power::Stopped, true)?;
        } else {
            if running {
                self.post_and_wait(&vm.path().join(["status", "stop"]), Vec::new(), 30)
                    .map_err(|e| e.context(&format!("stopping of VM {} failed", vm.vmid)))?;
            }
            self.post_and_wait(&vm.path().join(["template"]), Vec::new(), 0)
                .map_err(|e| e.context(&format!("conversion of VM {} to template failed", vm.vmid)))?;
            after = config::read(self.api, &vm)?;
        }
        Ok(self
            .outcome(
                true,
                format!("VM {} converted to template", vm.vmid),
                &vm,
                Some(&after),
                Some(now.resource_status()),
                Some(Power::Stopped),
            )
            .with_diff(Some(self.diff(vm.vmid, Some(&config), Some(&planned)))))
    }

    // ------------------------------------------------------ delete, revert, migrate

    pub(crate) fn delete_or_revert(&mut self) -> Result<Outcome> {
        let vms = self.vms()?;
        let vm = self.find(&vms)?;
        let config = self.read_config(&vm)?;
        self.converging(&vm, config, |run, config| run.delete_or_revert_from(&vm, config))
    }

    fn delete_or_revert_from(&mut self, vm: &VmResource, config: &VmConfig) -> Result<Outcome> {
        let vm = vm.clone();
        let running = vm.status == "running";
        let label = config.get("name").map(str::to_string).or_else(|| vm.name.clone()).unwrap_or_default();
        let (param, keys, msg): (&str, Vec<String>, String) = if !self.p.delete.is_empty() {
            let keys = self.p.delete.iter().filter(|k| config.get(k).is_some()).cloned().collect();
            ("delete", keys, format!("Settings has deleted on VM {label} with vmid {}", vm.vmid))
        } else {
            let keys = self.p.revert.iter().filter(|k| config.is_pending(k)).cloned().collect();
            ("revert", keys, format!("Settings has reverted on VM {label} with vmid {}", vm.vmid))
        };
        if keys.is_empty() {
            let msg = format!("Nothing to {param} on VM {label} with vmid {}", vm.vmid);
            return Ok(self
                .outcome(false, msg, &vm, Some(config), Some(&vm.status), Some(listed_power(&vm)))
                .with_diff(Some(self.diff(vm.vmid, Some(config), Some(config)))));
        }
        let mut predicted = config.clone();
        for k in &keys {
            if param == "delete" {
                let pending = running && module_utils::pve::hotplug::delete_waits(&config.hotplug(), k);
                predicted = predicted.with_change(k, None, pending);
            } else {
                predicted.pending.remove(k);
                predicted.pending_delete.remove(k);
            }
        }
        let after = if self.check() {
            self.record(PredictedVm::of(&vm, &predicted))?;
            predicted.clone()
        } else {
            let mut body = form([(param, keys.join(","))]);
            self.skiplock(&mut body);
            let digest = self.p.digest.clone().or_else(|| config.digest.clone());
            config::write(self.api, &vm, body, digest.as_deref())
                .map_err(|e| e.context(&format!("Unable to {param} settings on VM {label} with vmid {}", vm.vmid)))?;
            config::read(self.api, &vm)?
        };
        Ok(self
            .outcome(true, msg, &vm, Some(&after), Some(&vm.status), Some(listed_power(&vm)))
            .with_diff(Some(self.diff(vm.vmid, Some(config), Some(&predicted)))))
    }

    pub(crate) fn migrate(&mut self) -> Result<Outcome> {
        let (vms, storages) = predictions::cluster_vms_and_storages(self.api, self.plan)?;
        let vm = self.find(&vms)?;
        let node =
            self.p.node.clone().ok_or_else(|| Error::args("migrate needs node: the node to migrate the VM to"))?;
        let config = self.read_config(&vm)?;
        if vm.node == node {
            return Ok(self.outcome(
                false,
                format!("VM {} is already on {node}", vm.vmid),
                &vm,
                Some(&config),
                Some(&vm.status),
                Some(listed_power(&vm)),
            ));
        }
        let from = vm.node.clone();
        // PVE would start the qmigrate task and abort it; refusing here, before any call, lets
        // check mode predict the refusal too.
        let running = vm.status == "running";
        if let Some(problem) = migration_refusal(&config, &storages, &from, running, self.p.with_local_disks) {
            return Err(Error::failed(format!("Unable to migrate VM {} from {from} to {node}: {problem}", vm.vmid)));
        }
        let mut moved = vm.clone();
        moved.node = node.clone();
        if self.check() {
            self.record(PredictedVm::of(&moved, &config))?;
        } else {
            let body = form([
                ("target", node.as_str()),
                ("online", if vm.status == "running" { "1" } else { "0" }),
                ("with-local-disks", if self.p.with_local_disks { "1" } else { "0" }),
            ]);
            self.post_and_wait(&vm.path().join(["migrate"]), body, 0)
                .map_err(|e| e.context(&format!("Unable to migrate VM {} from {from} to {node}", vm.vmid)))?;
        }
        Ok(self.outcome(
            true,
            format!("VM {} has been migrated from {from} to {node}", vm.vmid),
            &moved,
            Some(&config),
            Some(&vm.status),
            Some(listed_power(&vm)),
        ))
    }
}

/// Why PVE would abort migrating a VM with this config away from `node`, if it would
/// (QemuMigrate.pm scan_local_volumes; pvesim's migrate follows it): a CD-ROM image on storage the
/// target cannot see, or, for a live migration without `with-local-disks`, an attached disk on
/// storage that is not shared. A storage missing from `/cluster/resources` is left to PVE.
pub(crate) fn migration_refusal(
    config: &VmConfig,
    storages: &[StorageResource],
    node: &str,
    running: bool,
    with_local_disks: bool,
) -> Option<String> {
    let is_local = |storage: &str| storages.iter().any(|s| s.node == node && s.storage == storage && !s.shared);
    let effective = config.effective();
    let mut live_local = Vec::new();
    for (key, value) in &effective {
        let Some(disk) = Disk::parse(key, value) else { continue };
        if disk.bus == "unused" {
            continue; // copied offline even in a live migration
        }
        let volume = disk.volume.as_deref().unwrap_or("");
        if volume == "cdrom" {
            return Some("can't migrate local cdrom drive".into());
        }
        let Some(storage) = disk.storage.as_deref() else { continue };
        if !is_local(storage) {
            continue;
        }
        if disk.media == "cdrom" {
            if !volume.contains("cloudinit") {
                return Some(format!("local cdrom image {volume} on {storage} (remove the CD-ROM first)"));
            }
        } else if running && !with_local_disks {
            live_local.push(volume.to_string());
        }
    }
    (!live_local.is_empty()).then(|| {
        format!(
            "can't live migrate attached local disks without with-local-disks option ({}); set with_local_disks: true",
            live_local.join(", ")
        )
    })
}
