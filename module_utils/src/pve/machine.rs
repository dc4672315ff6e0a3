//! QEMU machine types as qemu-server's Machine.pm reads them: a type's version (`extract_version_parts`, the one parser every rule uses), the machine a start pins (`get_vm_machine`), and whether the node's QEMU can run it (`config_to_command`'s first check, docs/pve-semantics.md §73).

use std::collections::BTreeMap;

/// A machine type's version: (major, minor, pve), the `+pveN` part 0 when not given.
pub type Version = (u64, u64, u64);

/// Machine.pm `extract_version_parts`: `pc-i440fx-9.2+pve1` is (9, 2, 1), `pc-q35-8.1.pxe` (8, 1, 0),
/// `virt-9.0` (9, 0, 0) (a third number after the minor is skipped); `None` for a type without a
/// version (`pc`, `q35`, `virt`), which runs at the node's QEMU.
pub fn version(machine: &str) -> Option<Version> {
    let rest = ["pc-i440fx-", "pc-q35-", "pc-", "virt-"].iter().find_map(|p| machine.strip_prefix(p))?;
    let (major, rest) = number(rest)?;
    let (minor, rest) = number(rest.strip_prefix('.')?)?;
    let rest = rest.strip_prefix('.').and_then(number).map_or(rest, |(_, r)| r);
    let pve = rest.strip_prefix("+pve").and_then(number).map_or(0, |(n, _)| n);
    Some((major, minor, pve))
}

/// The leading digits of `s` as a number, and what follows them.
fn number(s: &str) -> Option<(u64, &str)> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    Some((s[..end].parse().ok()?, &s[end..]))
}

/// The `type` of a `machine` property string (its default key: `q35,viommu=virtio` or
/// `type=pc-q35-9.2+pve1,viommu=intel`), `None` when it has none.
pub fn type_of(machine: &str) -> Option<&str> {
    let t = machine.split(',').enumerate().find_map(|(i, part)| match part.split_once('=') {
        Some(("type", v)) => Some(v),
        None if i == 0 => Some(part),
        _ => None,
    });
    t.filter(|t| !t.is_empty())
}

/// The version of the config's `machine` type, `None` when it is not pinned.
pub fn pinned(config: &BTreeMap<String, String>) -> Option<Version> {
    version(type_of(config.get("machine")?)?)
}

/// The machine type a start runs with, when it is pinned: `vm_start_nolock` forces a resumed VM's
/// (`resume`: a `suspended` lock or a `vmstate`) `runningmachine`, else Machine.pm
/// `get_vm_machine` takes the config's `machine` type and appends `+pve0` to a version without
/// its `+pveN` (before `.pxe`), as PVE's words name it. `None` for an unpinned type (`pc`, `q35`,
/// `virt` or none): the node's latest version, or for a Windows `ostype`
/// `windows_get_pinned_machine_version`'s, which falls back to the latest when the node cannot
/// run it; never refused.
pub fn start_machine(config: &BTreeMap<String, String>) -> Option<String> {
    let resume = config.get("lock").is_some_and(|l| l == "suspended") || config.contains_key("vmstate");
    let forced = config.get("runningmachine").filter(|_| resume).and_then(|m| type_of(m));
    let machine = forced.or_else(|| type_of(config.get("machine")?))?;
    version(machine)?;
    let (base, pxe) = machine.strip_suffix(".pxe").map_or((machine, ""), |b| (b, ".pxe"));
    let revised = base.rsplit_once("+pve").is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    Some(if revised { machine.to_string() } else { format!("{base}+pve0{pxe}") })
}

/// What a start reads of its node's QEMU (§73): `machines`, the versions `GET
/// /nodes/<node>/capabilities/qemu/machines` lists for the VM's architecture (QEMU's own, the
/// highest its major.minor, and each one's `+pveN` revisions qemu-server has); `kvmver`, the
/// installed `pve-qemu-kvm` package's upstream version (`9.2.0`), which `kvm_user_version` reads
/// from the binary, read only for a start this refuses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeQemu {
    pub machines: Vec<Version>,
    pub kvmver: Option<String>,
}

impl NodeQemu {
    /// The installed QEMU's (major, minor): the package's, else the list's highest version.
    fn installed(&self) -> Option<(u64, u64)> {
        let package = self.kvmver.as_deref().and_then(|v| {
            let (major, rest) = number(v)?;
            Some((major, number(rest.strip_prefix('.')?)?.0))
        });
        package.or_else(|| self.machines.iter().map(|m| (m.0, m.1)).max())
    }

    /// A release candidate: QEMU's micro version 90 and above (`config_to_command` skips its
    /// checks with a warning); a Debian pre-release (`~rc1`) is one too.
    fn candidate(&self) -> bool {
        let Some(v) = self.kvmver.as_deref() else { return false };
        let micro = v.splitn(3, '.').nth(2).and_then(number).map(|(n, _)| n);
        v.contains('~') || micro.is_some_and(|n| n >= 90)
    }
}

/// The package version `GET /nodes/<node>/apt/versions` shows (`9.2.0-5`, `1:10.1.2-1`) as the
/// upstream version QEMU reports (`9.2.0`): no epoch, no Debian revision.
pub fn kvm_version(package: &str) -> Option<String> {
    let upstream = package.split_once(':').map_or(package, |(_, v)| v);
    let upstream = upstream.rsplit_once('-').map_or(upstream, |(v, _)| v);
    number(upstream)?;
    Some(upstream.to_string())
}

/// QemuServer.pm `config_to_command`'s first check, of the machine type a start pins
/// (`start_machine`) on node `node`: a QEMU older than the machine's major.minor (`min_version`),
/// then a `+pveN` above the highest qemu-server has for that version (Machine.pm
/// `can_run_pve_machine_version`, `get_pve_version`: the list's revisions of it; not known for
/// a version the list lacks). A release candidate skips both. PVE's words name the QEMU version
/// with its micro part, which only the package shows: without it (no `Sys.Audit` on the node, or
/// a failed read) the refusal stands, the list decides it, and `x` stands for the micro part,
/// said so after PVE's sentence.
pub fn refusal(machine: &str, qemu: &NodeQemu, node: &str) -> Option<String> {
    let (major, minor, pve) = version(machine)?;
    let installed = qemu.installed()?;
    if qemu.candidate() {
        return None;
    }
    if installed < (major, minor) {
        let (a, b) = installed;
        let (shown, why) = match &qemu.kvmver {
            Some(v) => (v.clone(), String::new()),
            None => {
                (format!("{a}.{b}.x"), format!(" (x: the micro version, shown only with Sys.Audit on /nodes/{node})"))
            }
        };
        return Some(format!(
            "Installed QEMU version '{shown}' is too old to run machine type '{machine}', please upgrade node '{node}'{why}"
        ));
    }
    let revisions: Vec<u64> = qemu.machines.iter().filter(|m| (m.0, m.1) == (major, minor)).map(|m| m.2).collect();
    let highest = revisions.iter().max().copied().filter(|_| pve > 0)?;
    (pve > highest).then(|| {
        format!(
            "Installed qemu-server (max feature level for {major}.{minor} is pve{highest}) is too old to run machine type '{machine}', please upgrade node '{node}'"
        )
    })
}

#[cfg(test)]
mod tests;
