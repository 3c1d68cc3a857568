// SPDX-License-Identifier: MIT
//! Compiles the shared C driver (../../driver.c) into a static library linked
//! into this program, so Rayon is timed, checked and reported by exactly the
//! same code as the other systems. Needs only a C compiler ($CC or cc).

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn run(cmd: &mut Command) {
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(status.success(), "{cmd:?} failed: {status}");
}

fn main() {
    let bench = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap()).join("../..");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let cc = env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let obj = out.join("driver.o");
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
        .arg(bench.join("driver.c"))
        .arg("-o")
        .arg(&obj));
    run(Command::new("ar")
        .arg("crs")
        .arg(out.join("libbenchdriver.a"))
        .arg(&obj));
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=benchdriver");
    for f in ["driver.c", "driver.h", "bench.h"] {
        println!("cargo:rerun-if-changed={}", bench.join(f).display());
    }
    println!("cargo:rerun-if-env-changed=CC");
}
