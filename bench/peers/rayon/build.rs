// SPDX-License-Identifier: MIT
//! Compiles the shared C driver (../../driver.c and its workloads,
//! ../../wl_*.c) into a static library linked into this program, so Rayon is
//! timed, checked and reported by exactly the same code as the other systems.
//! Needs only a C compiler ($CC or cc).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn run(cmd: &mut Command) {
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(status.success(), "{cmd:?} failed: {status}");
}

/// The driver's sources: driver.c and its workloads, every wl_*.c (see
/// driver.h), in a fixed order.
fn driver_sources(bench: &Path) -> Vec<PathBuf> {
    let mut workloads: Vec<PathBuf> = fs::read_dir(bench)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", bench.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .map_or(false, |n| n.starts_with("wl_") && n.ends_with(".c"))
        })
        .collect();
    workloads.sort();
    let mut sources = vec![bench.join("driver.c")];
    sources.append(&mut workloads);
    sources
}

fn main() {
    let bench = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap()).join("../..");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let cc = env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let sources = driver_sources(&bench);
    let mut objs = Vec::new();
    for src in &sources {
        let obj = out.join(src.file_stem().unwrap()).with_extension("o");
        run(Command::new(&cc)
            .args([
                "-std=c11",
                "-O2",
                "-falign-loops=64",
                "-fopenmp-simd",
                "-fPIC",
                "-DBENCH_NO_MAIN",
                "-c",
            ])
            .arg(src)
            .arg("-o")
            .arg(&obj));
        objs.push(obj);
    }
    // A new archive: `ar r` would keep the members of sources gone since.
    let lib = out.join("libbenchdriver.a");
    let _ = fs::remove_file(&lib);
    run(Command::new("ar").arg("crs").arg(&lib).args(&objs));
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=benchdriver");
    // A new wl_*.c comes with a change to driver.c and driver.h (its
    // declaration and its row in the table), which reruns this.
    let headers = ["driver.h", "bench.h"].map(|f| bench.join(f));
    for f in sources.iter().chain(&headers) {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    println!("cargo:rerun-if-env-changed=CC");
}
