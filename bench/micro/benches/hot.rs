//! Micro-benchmarks of the hot pure functions every task runs: argument validation, property-string
//! parse/compare/print and the plans. `cargo bench -p ferro_bench --bench hot` (or `make
//! bench-micro`); prints ns/iter per function. A plain `std::time::Instant` harness
//! (`harness = false`), so it runs on stable Rust with no extra dependency.
//!
//! Each function is warmed up, then timed in 15 batches sized to about 20 ms; the figure is the
//! median batch's time per call, with the fastest and slowest batch (on a shared machine the
//! fastest is the steadiest figure). `BENCH_FILTER=<substring>` runs only matching benchmarks.

#![allow(clippy::expect_used, clippy::print_stdout)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use module_utils::ansible::spec::Args;
use module_utils::ansible::validate::validate;
use module_utils::pve::config::VmConfig;
use module_utils::pve::propstring::{parse_size, PropertyString, DRIVE, NET};
use serde_json::{json, Map, Value};

const SAMPLES: usize = 15;
const BATCH_TARGET: Duration = Duration::from_millis(20);

fn bench<T>(name: &str, mut f: impl FnMut() -> T) {
    if let Ok(filter) = std::env::var("BENCH_FILTER") {
        if !name.contains(&filter) {
            return;
        }
    }
    // Warm up and size the batch: the fastest of three calibrations, so that one preemption on a
    // busy machine does not shrink the batch.
    let mut per = f64::INFINITY;
    for _ in 0..3 {
        let mut iters: u64 = 1;
        loop {
            let start = Instant::now();
            for _ in 0..iters {
                black_box(f());
            }
            let elapsed = start.elapsed();
            if elapsed >= BATCH_TARGET / 8 || iters >= 1 << 30 {
                per = per.min(elapsed.as_nanos().max(1) as f64 / iters as f64);
                break;
            }
            iters *= 2;
        }
    }
    let iters = ((BATCH_TARGET.as_nanos() as f64 / per) as u64).max(1);
    let mut samples: Vec<f64> = (0..SAMPLES)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iters {
                black_box(f());
            }
            start.elapsed().as_nanos() as f64 / iters as f64
        })
        .collect();
    samples.sort_by(|a, b| a.total_cmp(b));
    let median = samples[SAMPLES / 2];
    let (lo, hi) = (samples[0], samples[SAMPLES - 1]);
    println!("{name:<58} {median:>11.0} ns/iter  (min {lo:.0}, max {hi:.0}; {iters} iters x {SAMPLES})");
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => unreachable!("a JSON object literal"),
    }
}

fn no_env(_: &str) -> Option<String> {
    None
}

fn connection() -> Value {
    json!({
        "api_host": "pve1.example.org",
        "api_port": 8006,
        "api_user": "ansible@pve",
        "api_token_id": "automation",
        "api_token_secret": "5e3c1f0a-7b2d-4c8e-9f61-0d2a4b6c8e10",
        "ca_path": "/etc/ssl/pve-root-ca.pem",
    })
}

fn with_connection(task: Value) -> Map<String, Value> {
    let mut args = object(connection());
    args.extend(object(task));
    args
}

fn main() {
    println!("module_utils hot paths ({} build)", if cfg!(debug_assertions) { "debug" } else { "optimized" });

    // ---- argument validation (spec::validate), as every binary runs it on its args
    let nic_args = with_connection(json!({
        "vmid": 1001, "interface": "net0", "model": "virtio", "bridge": "vmbr0", "firewall": true,
    }));
    bench("spec::validate proxmox_nic (5 options + connection)", || validate(&proxmox_nic::SPEC, &nic_args, &no_env));
    let disk_args = with_connection(json!({
        "vmid": 1001, "disk": "scsi0", "storage": "local-lvm", "size": "8",
    }));
    bench("spec::validate proxmox_disk (4 options + connection)", || {
        validate(&proxmox_disk::SPEC, &disk_args, &no_env)
    });
    let kvm_args = with_connection(json!({
        "vmid": 1001, "name": "bench-001", "node": "pve1", "cores": 2, "memory": 2048, "update": true,
        "scsihw": "virtio-scsi-single", "scsi": {"scsi0": "local-lvm:8,discard=on"},
        "net": {"net0": "virtio,bridge=vmbr0,firewall=1"}, "tags": ["web", "prod"],
    }));
    bench("spec::validate proxmox_kvm (10 options + connection)", || validate(&proxmox_kvm::SPEC, &kvm_args, &no_env));

    // ---- property strings
    let net = "virtio=BC:24:11:0A:01:00,bridge=vmbr0,firewall=1,tag=20,mtu=1500";
    let drive = "local-lvm:vm-100-disk-0,discard=on,iothread=1,ssd=1,cache=none,size=32G";
    bench("propstring::parse NET (5 keys)", || PropertyString::parse(&NET, black_box(net)));
    bench("propstring::parse_lenient NET (5 keys)", || PropertyString::parse_lenient(&NET, black_box(net)));
    bench("propstring::parse DRIVE (6 keys)", || PropertyString::parse(&DRIVE, black_box(drive)));
    let a = PropertyString::parse(&NET, net).expect("valid net");
    let b = PropertyString::parse(&NET, "bridge=vmbr0,virtio=bc:24:11:0a:01:00,firewall=on,mtu=1500,tag=20")
        .expect("valid net");
    bench("propstring::semantically_equal NET (equal, reordered)", || a.semantically_equal(black_box(&b)));
    let d1 = PropertyString::parse(&DRIVE, drive).expect("valid drive");
    let d2 =
        PropertyString::parse(&DRIVE, "local-lvm:vm-100-disk-0,size=32768M,cache=none,ssd=on,iothread=1,discard=on")
            .expect("valid drive");
    bench("propstring::semantically_equal DRIVE (32G vs 32768M)", || d1.semantically_equal(black_box(&d2)));
    bench("propstring Display NET (canonical print)", || a.to_string());
    bench("propstring::parse_size \"32768M\"", || parse_size(black_box("32768M")));

    // ---- plans (pure: config + params in, change out)
    let nic_spec = validate(&proxmox_nic::SPEC, &nic_args, &no_env).expect("valid nic args");
    let nic_params = proxmox_nic::Params::from_spec(&nic_spec, &mut |_| {}).expect("nic params");
    let nic_same = VmConfig::from_pairs(&[
        ("cores", "1"),
        ("memory", "1024"),
        ("net0", "virtio=BC:24:11:BE:03:E9,bridge=vmbr0,firewall=1"),
        ("scsi0", "local-lvm:vm-1001-disk-0,size=8G"),
    ]);
    bench("proxmox_nic::plan no-op (same NIC)", || proxmox_nic::plan(black_box(&nic_same), false, &nic_params));
    let nic_other = VmConfig::from_pairs(&[("net0", "e1000=BC:24:11:BE:03:E9,bridge=vmbr1")]);
    bench("proxmox_nic::plan change (model, bridge)", || proxmox_nic::plan(black_box(&nic_other), true, &nic_params));
    let full_nic = || -> Args { validate(&proxmox_nic::SPEC, &nic_args, &no_env).expect("valid") };
    bench("proxmox_nic validate + Params + plan (a task's pure work)", || {
        let p = full_nic();
        let params = proxmox_nic::Params::from_spec(&p, &mut |_| {}).expect("nic params");
        proxmox_nic::plan(&nic_same, false, &params).map(|plan| plan.after)
    });

    let kvm_spec = validate(&proxmox_kvm::SPEC, &kvm_args, &no_env).expect("valid kvm args");
    let kvm_params = proxmox_kvm::Params::from_spec(&kvm_spec, &mut |_| {}).expect("kvm params");
    let kvm_config = VmConfig::from_pairs(&[
        ("boot", "order=scsi0;net0"),
        ("cores", "2"),
        ("memory", "2048"),
        ("name", "bench-001"),
        ("net0", "virtio=BC:24:11:BE:03:E9,bridge=vmbr0,firewall=1"),
        ("ostype", "l26"),
        ("scsi0", "local-lvm:vm-1001-disk-0,discard=on,size=8G"),
        ("scsihw", "virtio-scsi-single"),
        ("tags", "prod;web"),
    ]);
    bench("proxmox_kvm::converge no-op (9 keys)", || {
        proxmox_kvm::converge(black_box(&kvm_config), &kvm_params.desired)
    });
}
