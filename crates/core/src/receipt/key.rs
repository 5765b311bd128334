//! The master key and the per-task keys derived from it (the key file is the
//! application's: `receipt::master` there).
//!
//! **Task keys.** Each task signs with its own Ed25519 key, named by a BIP44-style path
//! built from the config's `key_derivation` and the task's `task_index`:
//! `m/{purpose}'/{coin_type}'/{account}'/{task_index}` (default `m/44'/236'/0'/N`). The
//! path is recorded on every receipt as `key_path`. The task's Ed25519 seed is
//!
//! ```text
//! seed = SHA-256( "waymark/receipt-key/v1" || 0x00 || master (32 bytes) || key_path (UTF-8) )
//! ```
//!
//! The label and the master have fixed lengths, so the input is unambiguous; the seed is
//! never revealed (only the public key it gives could be), so a plain hash is a sound KDF
//! here. Verification needs nothing but the master key and the receipt: the key is
//! re-derived from the receipt's own `key_path`, so changing the configured path later
//! does not break old receipts. This is not BIP32 (there is no chain code and no public
//! derivation); the path is a name for the key, in the form of docs/design.md (Key
//! derivation).

use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::config::KeyDerivation;

/// The domain-separation label of the task-key derivation (see the module docs).
pub const DERIVATION_LABEL: &[u8] = b"waymark/receipt-key/v1";
/// The domain of the receipt chain's head key (its HMAC key, derived like a task key).
pub const HEAD_LABEL: &[u8] = b"waymark/receipt-head/v1";

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("no place for the signing key: set HOME or XDG_CONFIG_HOME (or `key_file`)")]
    NoKeyPath,
    #[error("no signing key at {0}")]
    Missing(PathBuf),
    #[error(
        "refusing signing key {path}: it is readable by others (mode {mode:03o}); run `chmod 600 {path}`"
    )]
    LoosePermissions { path: PathBuf, mode: u32 },
    #[error("signing key {path} is malformed: {why}")]
    Malformed { path: PathBuf, why: String },
    #[error("signing key {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("the signing key has not been loaded")]
    NotLoaded,
    #[error("no random numbers from the OS for a new key: {0}")]
    Random(String),
}

/// The master secret. Zeroed when dropped; never printed.
#[derive(Clone)]
pub struct MasterKey([u8; 32]);

impl MasterKey {
    pub fn from_bytes(bytes: [u8; 32]) -> MasterKey {
        MasterKey(bytes)
    }

    /// The Ed25519 seed of the key named `key_path` (see the module docs).
    pub fn derive(&self, key_path: &str) -> [u8; 32] {
        self.derive_labelled(DERIVATION_LABEL, key_path)
    }

    /// The HMAC key that authenticates the receipt chain's head of the task whose key is
    /// named `key_path` (a label of its own: never the signing seed).
    pub fn derive_head_key(&self, key_path: &str) -> [u8; 32] {
        self.derive_labelled(HEAD_LABEL, key_path)
    }

    fn derive_labelled(&self, label: &[u8], key_path: &str) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(label);
        h.update([0u8]);
        h.update(self.0);
        h.update(key_path.as_bytes());
        h.finalize().into()
    }

    /// The key file's text: 64 lowercase hex characters and a newline.
    pub fn to_file_text(&self) -> String {
        format!("{}\n", crate::text::hex(&self.0))
    }

    /// The key in the text of the key file at `path` (named in the error), or what is
    /// wrong with it.
    pub fn from_file_text(text: &str, path: &Path) -> Result<MasterKey, KeyError> {
        let malformed = |why: String| KeyError::Malformed {
            path: path.to_path_buf(),
            why,
        };
        let bytes = crate::text::unhex(text.trim()).ok_or_else(|| malformed("not hex".into()))?;
        let arr: [u8; 32] = bytes
            .try_into()
            .map_err(|b: Vec<u8>| malformed(format!("{} bytes, expected 32", b.len())))?;
        Ok(MasterKey(arr))
    }
}

impl Drop for MasterKey {
    fn drop(&mut self) {
        for b in self.0.iter_mut() {
            // SAFETY: a valid, aligned, exclusive reference to a byte we own.
            unsafe { std::ptr::write_volatile(b, 0) };
        }
    }
}

impl std::fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MasterKey(…)")
    }
}

/// The derivation path of a task's key: `m/{purpose}'/{coin_type}'/{account}'/{task_index}`.
pub fn key_path(d: &KeyDerivation, task_index: u32) -> String {
    format!(
        "m/{}'/{}'/{}'/{task_index}",
        d.purpose, d.coin_type, d.account
    )
}

/// True for a path of the shape `m/N/N'/…` (what [`key_path`] makes). Verification refuses
/// anything else rather than derive a key from arbitrary text.
pub fn is_key_path(p: &str) -> bool {
    let Some(rest) = p.strip_prefix("m/") else {
        return false;
    };
    rest.split('/').all(|c| {
        let digits = c.strip_suffix('\'').unwrap_or(c);
        !digits.is_empty() && digits.len() <= 10 && digits.bytes().all(|b| b.is_ascii_digit())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default path components, `m/44'/236'/0'/…`.
    fn derivation() -> KeyDerivation {
        crate::config::Config::default().key_derivation
    }

    #[test]
    fn derivation_is_deterministic_and_separates_paths_and_masters() {
        let a = MasterKey::from_bytes([7; 32]);
        let b = MasterKey::from_bytes([8; 32]);
        let p0 = key_path(&derivation(), 0);
        let p1 = key_path(&derivation(), 1);
        assert_eq!(p0, "m/44'/236'/0'/0");
        assert_eq!(a.derive(&p0), a.derive(&p0));
        assert_ne!(a.derive(&p0), a.derive(&p1));
        assert_ne!(a.derive(&p0), b.derive(&p0));
        let other = KeyDerivation {
            account: 1,
            ..derivation()
        };
        assert_eq!(key_path(&other, 5), "m/44'/236'/1'/5");
        assert_ne!(a.derive(&key_path(&other, 0)), a.derive(&p0));
        // A fixed vector (computed independently: SHA-256 of the label, a NUL, the master
        // and the path), so that a change of the derivation, which would orphan every
        // receipt already signed, cannot go unnoticed.
        assert_eq!(
            crate::text::hex(&a.derive(&p0)),
            "d7d57619b3596a4e55ef22200a068dd397ee6e85e074806fb5b0635325ca8400"
        );
    }

    #[test]
    fn key_path_shape() {
        assert!(is_key_path("m/44'/236'/0'/12"));
        assert!(is_key_path("m/1"));
        assert!(!is_key_path("m/"));
        assert!(!is_key_path("44'/236'"));
        assert!(!is_key_path("m/44'/x"));
        assert!(!is_key_path("m/44''"));
    }

    /// The head key is a key of its own (never the signing seed), per task key and per
    /// master; a fixed vector (SHA-256 of the head label, a NUL, the master and the path,
    /// computed independently) pins it, since changing it breaks every head kept.
    #[test]
    fn the_head_key_is_derived_apart_from_the_signing_key() {
        let a = MasterKey::from_bytes([7; 32]);
        let b = MasterKey::from_bytes([8; 32]);
        let (p0, p1) = (key_path(&derivation(), 0), key_path(&derivation(), 1));
        assert_ne!(a.derive_head_key(&p0), a.derive(&p0));
        assert_ne!(a.derive_head_key(&p0), a.derive_head_key(&p1));
        assert_ne!(a.derive_head_key(&p0), b.derive_head_key(&p0));
        assert_eq!(
            crate::text::hex(&a.derive_head_key(&p0)),
            "6cd966b259d5fd149686c7079564a1c1996672d01691293527ab96fe8e969c97"
        );
    }

    #[test]
    fn the_key_file_is_64_hex_characters_and_reads_back() {
        let path = Path::new("/home/dev/.config/waymark/key");
        let k = MasterKey::from_bytes([0xab; 32]);
        let text = k.to_file_text();
        assert_eq!(text, format!("{}\n", "ab".repeat(32)));
        let back = MasterKey::from_file_text(&text, path).unwrap();
        assert_eq!(back.derive("m/1"), k.derive("m/1"));
        for (text, why) in [
            ("zz", "not hex"),
            (&"ab".repeat(31), "31 bytes, expected 32"),
        ] {
            let e = MasterKey::from_file_text(text, path).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("signing key /home/dev/.config/waymark/key is malformed: {why}")
            );
        }
    }

    #[test]
    fn debug_never_shows_the_secret() {
        let k = MasterKey::from_bytes([0xab; 32]);
        assert_eq!(format!("{k:?}"), "MasterKey(…)");
    }

    /// The secret does not outlive the key: its bytes are zeroed when it is dropped.
    #[test]
    fn a_dropped_key_is_zeroed() {
        let mut k = std::mem::ManuallyDrop::new(MasterKey::from_bytes([0xab; 32]));
        // SAFETY: `k` is dropped once and only its bytes are read after: dropping leaves
        // the memory a valid `[u8; 32]` (ManuallyDrop::drop), changed only by `drop`.
        unsafe { std::mem::ManuallyDrop::drop(&mut k) };
        assert_eq!(k.0, [0; 32]);
    }
}
