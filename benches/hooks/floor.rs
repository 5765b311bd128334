//! The floor of the benchmark: a process that only reads its stdin to the end and exits.
//! Compiled on its own by the benchmark (`rustc -C opt-level=3`), so the comparison is
//! Rust process against Rust process: the same runtime start-up, no work.

use std::io::Read;

fn main() {
    let mut input = Vec::new();
    let _ = std::io::stdin().lock().read_to_end(&mut input);
}
