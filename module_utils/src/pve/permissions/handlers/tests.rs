//! Tests of the checks qemu-server makes inside its handlers and workers: each rule's needs, and a root@pam token refused where root@pam passes.

use std::collections::BTreeMap;

use super::super::{create, update};
use super::*;
use crate::pve::request::form;

fn vm(privilege: &'static str) -> Need {
    all("/vms/100", &[privilege])
}

fn config(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn growing_a_volume_needs_space_on_its_storage() {
    // Qemu.pm resize_vm: `Datastore.AllocateSpace` on the volume's storage, in its worker
    assert_eq!(
        resize(100, "local-lvm:vm-100-disk-0"),
        vec![vm("VM.Config.Disk"), all("/storage/local-lvm", &["Datastore.AllocateSpace"])]
    );
    assert_eq!(resize(100, "/dev/sdb"), vec![vm("VM.Config.Disk")]);
}

#[test]
fn removing_an_owned_volume_needs_space_on_its_storage() {
    // QemuServer.pm try_deallocate_drive: only a volume the VM owns, never a CD-ROM
    let space = all("/storage/local-lvm", &["Datastore.AllocateSpace"]);
    assert_eq!(volume_removal(100, "unused0", "local-lvm:vm-100-disk-1"), vec![space.clone()]);
    assert_eq!(volume_removal(100, "unused0", "local-lvm:vm-101-disk-1"), vec![]);
    assert_eq!(volume_removal(100, "ide2", "isos:iso/a.iso,media=cdrom"), vec![]);
    // unlink: an unusedN always, a drive only when the removal is applied with force
    assert_eq!(unlink(100, "unused0", "local-lvm:vm-100-disk-1", false), vec![vm("VM.Config.Disk"), space.clone()]);
    assert_eq!(unlink(100, "scsi1", "local-lvm:vm-100-disk-1,size=1G", false), vec![vm("VM.Config.Disk")]);
    assert_eq!(
        unlink(100, "scsi1", "local-lvm:vm-100-disk-1,size=1G", true),
        vec![vm("VM.Config.Disk"), space.clone()]
    );
    // a config update deleting an unusedN
    let current = config(&[("unused0", "local-lvm:vm-100-disk-1")]);
    let needs = update(100, &current, &form([("cores", "2")]), &["unused0".to_string()]);
    assert_eq!(needs.last(), Some(&space));
}

#[test]
fn a_hardware_rng_and_a_custom_cpu_model_need_their_mapping() {
    // Qemu.pm check_rng_perm, $check_cpu_model_access
    let hwrng = all("/mapping/hwrng", &["Mapping.Use"]);
    assert_eq!(rng(100, None, "source=/dev/hwrng"), vec![vm("VM.Config.HWType"), hwrng.clone()]);
    assert_eq!(rng(100, None, "/dev/urandom,max_bytes=1024"), vec![vm("VM.Config.HWType")]);
    assert!(create(100, None, None, false, &form([("rng0", "source=/dev/hwrng")])).contains(&hwrng));
    let custom = all("/mapping/cpu/fast", &["Mapping.Use"]);
    assert_eq!(cpu_model("custom-fast,flags=+aes", None), vec![custom.clone()]);
    assert_eq!(cpu_model("cputype=custom-fast", Some("custom-fast,hidden=1")), vec![]);
    assert_eq!(cpu_model("host", None), vec![]);
    assert!(create(100, None, None, false, &form([("cpu", "custom-fast")])).contains(&custom));
    let current = config(&[("cpu", "host")]);
    assert!(update(100, &current, &form([("cpu", "custom-fast")]), &[]).contains(&custom));
    // the old value of an rng0 is checked too
    let current = config(&[("rng0", "source=/dev/hwrng")]);
    assert!(update(100, &current, &form([("rng0", "source=/dev/urandom")]), &[]).contains(&hwrng));
    assert!(update(100, &current, &Vec::new(), &["rng0".to_string()]).contains(&hwrng));
}

#[test]
fn tags_need_the_options_privilege_on_the_vm() {
    // GuestHelpers.pm assert_tag_permissions: check_vm_perm without the pool
    let options = vm("VM.Config.Options");
    assert!(create(100, Some("web"), None, false, &form([("tags", "a;b")])).contains(&options));
    assert!(update(100, &config(&[]), &form([("tags", "a")]), &[]).contains(&options));
    assert!(update(100, &config(&[("tags", "a")]), &Vec::new(), &["tags".to_string()]).contains(&options));
}

#[test]
fn real_serial_devices_are_root_s_in_the_words_of_each_loop() {
    // Qemu.pm update_vm_api: "modify" in the set loop, "delete" in the delete loop
    let modify = Need::RootOnly("only root can modify 'serial0' config for real devices".into());
    let delete = Need::RootOnly("only root can delete 'serial0' config for real devices".into());
    assert_eq!(update(100, &config(&[]), &form([("serial0", "/dev/ttyS0")]), &[]).last(), Some(&modify));
    let socket = config(&[("serial0", "socket")]);
    assert_eq!(update(100, &socket, &form([("serial0", "socket")]), &[]).last(), Some(&vm("VM.Config.HWType")));
    let real = config(&[("serial0", "/dev/ttyS0")]);
    assert_eq!(update(100, &real, &form([("serial0", "socket")]), &[]).last(), Some(&modify));
    assert_eq!(update(100, &real, &Vec::new(), &["serial0".to_string()]).last(), Some(&delete));
    assert_eq!(update(100, &socket, &Vec::new(), &["serial0".to_string()]).last(), Some(&vm("VM.Config.HWType")));
    // create: "set" ($check_vm_create_serial_perm)
    let set = Need::RootOnly("only root can set 'serial0' config for real devices".into());
    assert!(create(100, None, None, false, &form([("serial0", "/dev/ttyS0")])).contains(&set));
    // a usb device's old value is checked as its new one
    let usb = config(&[("usb0", "host=1234:5678")]);
    let refused = Need::RootOnly("only root can set 'usb0' config for real devices".into());
    assert!(update(100, &usb, &form([("usb0", "spice")]), &[]).contains(&refused));
    assert!(update(100, &usb, &Vec::new(), &["usb0".to_string()]).contains(&refused));
}

#[test]
fn a_hibernation_needs_space_where_pve_saves_the_state() {
    // QemuConfig.pm find_vmstate_storage, Qemu.pm vm_suspend
    let storage = |sid: &str, shared: bool, path: Option<&str>| {
        let mut v = serde_json::json!({"storage": sid, "type": "dir", "content": "images", "shared": shared as u8});
        if let Some(path) = path {
            v["path"] = path.into();
        }
        StorageConfig::from_json(&v).unwrap()
    };
    let storages = [
        storage("local", false, Some("/var/lib/vz")),
        storage("local-lvm", false, None),
        storage("nfs", true, Some("/mnt/nfs")),
    ];
    let lvm = config(&[("scsi0", "local-lvm:vm-100-disk-0,size=4G"), ("ide2", "nfs:iso/a.iso,media=cdrom")]);
    assert_eq!(vmstate_storage(&lvm, &storages).as_deref(), Some("local-lvm"));
    let both = config(&[("scsi0", "local-lvm:vm-100-disk-0"), ("scsi1", "nfs:100/vm-100-disk-1.qcow2")]);
    assert_eq!(vmstate_storage(&both, &storages).as_deref(), Some("nfs"));
    assert_eq!(vmstate_storage(&config(&[]), &storages).as_deref(), Some("local"));
    let chosen = config(&[("vmstatestorage", "local"), ("scsi0", "nfs:100/vm-100-disk-1.qcow2")]);
    assert_eq!(vmstate_storage(&chosen, &storages).as_deref(), Some("local"));
    // a storage this user cannot see: not known
    assert_eq!(vmstate_storage(&config(&[("scsi0", "hidden:vm-100-disk-0")]), &storages), None);
    assert_eq!(
        hibernate(100, Some("local-lvm")),
        vec![vm("VM.PowerMgmt"), vm("VM.Config.Disk"), all("/storage/local-lvm", &["Datastore.AllocateSpace"])]
    );
}

#[test]
fn a_clone_s_source_devices_need_their_mapping_or_root() {
    // QemuServer.pm check_mapping_access, called by Qemu.pm clone_vm on the source's config
    let source = config(&[
        ("usb0", "spice"),
        ("usb1", "mapping=keys"),
        ("hostpci0", "mapping=gpu,pcie=1"),
        ("rng0", "source=/dev/hwrng"),
        ("virtiofs0", "share1"),
    ]);
    assert_eq!(
        mapping_access(&source),
        vec![
            all("/mapping/pci/gpu", &["Mapping.Use"]),
            all("/mapping/hwrng", &["Mapping.Use"]),
            all("/mapping/usb/keys", &["Mapping.Use"]),
            all("/mapping/dir/share1", &["Mapping.Use"]),
        ]
    );
    let host = config(&[("hostpci0", "0000:01:00.0"), ("usb0", "host=1234:5678")]);
    assert_eq!(
        mapping_access(&host),
        vec![
            Need::RootOnly("only root can set 'hostpci0' config for non-mapped devices".into()),
            Need::RootOnly("only root can set 'usb0' config for real devices".into()),
        ]
    );
}

#[test]
fn a_restore_s_archive_needs_check_volume_access_for_a_backup() {
    // Storage.pm check_volume_access with content type 'backup' (Qemu.pm create_vm)
    assert_eq!(backup_owner("backup:backup/vzdump-qemu-100-2026_12_01-00_00_00.vma.zst"), Some(100));
    assert_eq!(backup_owner("pbs:backup/vm/105/2026-12-01T00:00:00Z"), Some(105));
    assert_eq!(backup_owner("backup:backup/my-archive.vma"), None);
    let volid = "backup:backup/vzdump-qemu-100-2026_12_01-00_00_00.vma.zst";
    assert_eq!(archive(100, volid), vec![]);
    let other =
        Need::AllOf(vec![all("/storage/backup", &["Datastore.AllocateSpace"]), all("/vms/100", &["VM.Backup"])]);
    let allocate = all("/storage/backup", &["Datastore.Allocate"]);
    assert_eq!(archive(200, volid), vec![Need::OneOf { options: vec![allocate, other], bare: false }]);
    assert_eq!(
        archive(200, "local-lvm:vm-100-disk-0"),
        vec![Need::Refused("unable to use volume local-lvm:vm-100-disk-0 - content type needs to be 'backup'".into())]
    );
    assert!(matches!(&archive(200, "/root/dump.vma")[..], [Need::RootOnly(_)]));
}

#[test]
fn reading_a_vm_back_needs_vm_audit_on_it_or_on_its_pool() {
    // Qemu.pm vm_pending: VM.Audit on /vms/{vmid}; a pool member has the pool's roles
    // (RPCEnvironment.pm $compile_acl_path)
    assert_eq!(read_config(100, None), vec![vm("VM.Audit")]);
    let in_pool = read_config(100, Some("web"));
    assert_eq!(
        in_pool,
        vec![Need::OneOf { options: vec![all("/pool/web", &["VM.Audit"]), vm("VM.Audit")], bare: false }]
    );
}
