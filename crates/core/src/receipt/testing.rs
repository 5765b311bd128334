//! What the receipt tests build receipts from: a signer over a fixed master key, and a
//! run of `cargo test`.

use super::{Ed25519Signer, MasterKey, Run};

/// A signer over the master key of `seed` bytes, with the default derivation
/// (`m/44'/236'/0'/…`).
pub fn signer(seed: u8) -> Ed25519Signer {
    let derivation = crate::config::Config::default().key_derivation;
    Ed25519Signer::new(MasterKey::from_bytes([seed; 32]), derivation)
}

/// `cargo test` run now, exiting `exit_code`, on `tree` (`""`: none recorded).
pub fn run(exit_code: i32, observed: bool, tree: &str) -> Run {
    let now = chrono::Utc::now();
    Run {
        command: "cargo test".into(),
        exit_code,
        started_at: now,
        completed_at: now,
        duration: None,
        stdout_hash: String::new(),
        stderr_hash: String::new(),
        observed,
        tree: tree.into(),
    }
}
