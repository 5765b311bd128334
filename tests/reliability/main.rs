//! Reliability and security: what waymark guarantees when dozens of short processes race,
//! are killed mid-write, hit a full disk, or are fed hostile input (issue 8).
//!
//! One test binary, one module per kind of trouble. `docs/guarantees.md` lists every
//! guarantee with the test here (or elsewhere) that proves it. The full-size concurrency
//! run is `#[ignore]`d in the default suite: `cargo test --test reliability -- --ignored`.

#[path = "../util/mod.rs"]
mod util;

mod capture;
mod common;
mod concurrency;
mod crash;
mod disk;
mod fuzz;
mod hostile;
mod keys;
mod nested;
mod pending;
mod secrets;
mod tamper;
