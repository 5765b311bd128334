//! Where .cargo/config.toml's static link does not apply (other targets, or a build that
//! does not read it), Linux binaries are still linked non-PIE with lazy binding: fewer
//! relocations at each process start (BENCHMARKS.md, change 4).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // Not for musl: its self-contained start files are static-pie, and a non-PIE link of
    // them crashes at start.
    let musl = std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("musl");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") && !musl {
        println!("cargo:rustc-link-arg-bins=-no-pie");
        println!("cargo:rustc-link-arg-bins=-Wl,-z,lazy");
    }
}
