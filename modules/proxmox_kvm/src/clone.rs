//! proxmox_kvm: clone a VM, wait for the copy and the clone lock, then converge it.

use super::*;

impl Run<'_> {
    pub(crate) fn clone_vm(&mut self) -> Result<Outcome> {
        let Some(c) = self.p.clone.clone() else { return self.present() };
        let vms = self.vms()?;
        let source = match self.p.vmid {
            Some(id) => require(&vms, Some(id), None)?.clone(),
            None => resolve(&vms, None, Some(&c.source))?
                .cloned()
                .ok_or_else(|| Error::failed(format!("VM with name = {} does not exist in cluster", c.source)))?,
        };
        Self::require_qemu(&source)?;
        // The target: newid when given, else a VM with the task's name (other than the source).
        let others: Vec<VmResource> = vms.iter().filter(|v| v.vmid != source.vmid).cloned().collect();
        let target = match (c.newid, self.p.name.as_deref()) {
            (Some(id), _) => others.iter().find(|v| v.vmid == id).cloned(),
            (None, Some(name)) => resolve(&others, None, Some(name))?.cloned(),
            (None, None) => None,
        };
        if let Some(t) = target {
            Self::require_qemu(&t)?;
            // The task asks for this VM to be a configured clone: converge it (update is
            // mutually exclusive with clone, as upstream, so it cannot be asked for).
            return self.existing(&t, true);
        }
        let source_config = self.read_config(&source)?;
        let name = self.p.name.clone().unwrap_or_else(|| {
            format!("Copy-of-VM-{}", source.name.clone().unwrap_or_else(|| source.vmid.to_string()))
        });
        let base = clone_base(&source_config, &name);
        let conv = converge(&base, &self.p.desired);
        conv.check_refusals(&format!(
            "the clone of VM {} cannot be configured as the task asks (nothing was cloned)",
            source.vmid
        ))?;
        let planned = predict(&base, &conv.changes, false);
        let node = c.target.clone().unwrap_or_else(|| source.node.clone());
        let (newid, vm, after) = if self.check() {
            let newid = match c.newid {
                Some(v) => v,
                None => self.predicted_nextid(&vms)?,
            };
            // A clone is recorded as a plain VM (PVE's clone drops `template`), whatever the task sets.
            self.record(PredictedVm {
                template: false,
                ..PredictedVm::created(newid, Some(name.clone()), &node, &planned)
            })?;
            (newid, resource(newid, Some(&name), &node, "stopped"), planned.clone())
        } else {
            let newid = self.clone_with_retry(&source, &c, &name)?;
            let vm = self.wait_unlocked(newid)?;
            let config = config::read(self.api, &vm)?;
            let conv = converge(&config, &self.p.desired);
            let (_, after) = self.apply_changes(&vm, &config, &conv)?;
            (newid, vm, after)
        };
        Ok(self
            .outcome(
                true,
                format!("VM {name} with newid {newid} cloned from vm with vmid {}", source.vmid),
                &vm,
                Some(&after),
                None,
                Some(Power::Stopped),
            )
            .with("drift", Value::Object(Map::new()))
            .with_diff(Some(self.diff(newid, None, Some(&planned)))))
    }

    pub(crate) fn clone_with_retry(&mut self, source: &VmResource, c: &CloneOpts, name: &str) -> Result<u64> {
        let path = source.path().join(["clone"]);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let newid = match c.newid {
                Some(v) => v,
                None => self.nextid()?,
            };
            let mut body: Form = vec![
                ("newid".into(), newid.to_string()),
                ("name".into(), name.to_string()),
                ("full".into(), if c.full { "1" } else { "0" }.into()),
            ];
            for (k, v) in [
                ("format", &c.format),
                ("storage", &c.storage),
                ("target", &c.target),
                ("snapname", &c.snapname),
                ("pool", &self.p.pool),
            ] {
                if let Some(v) = v {
                    body.push((k.into(), v.clone()));
                }
            }
            let context = format!("Unable to clone vm {name} from vmid {}", source.vmid);
            let result = self.api.post(&path, &body).and_then(|answer| self.wait(&answer, 0));
            match result {
                Err(e) if c.newid.is_none() && already_exists(&e) && attempt < MAX_VMID_ATTEMPTS => continue,
                Err(e) => return Err(e.context(&context)),
                Ok(()) => return Ok(newid),
            }
        }
    }

    /// After the clone task: find the clone (it may be on the target node) and wait until its
    /// `lock: clone` is gone, so the configuration that follows is not refused as locked.
    pub(crate) fn wait_unlocked(&self, vmid: u64) -> Result<VmResource> {
        let deadline = Instant::now() + Duration::from_secs(self.p.timeout);
        let mut pause = Duration::from_millis(50);
        loop {
            let vms = module_utils::pve::resources::cluster_vms(self.api)?;
            if let Some(vm) = vms.into_iter().find(|v| v.vmid == vmid) {
                let config = config::read(self.api, &vm)?;
                if !config.current.contains_key("lock") {
                    return Ok(vm);
                }
            }
            if Instant::now() >= deadline {
                return Err(Error::failed(format!(
                    "the clone task ended, but VM {vmid} is still missing or locked after {}s",
                    self.p.timeout
                )));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_secs(1));
        }
    }

    // ------------------------------------------------------------------- absent
}
