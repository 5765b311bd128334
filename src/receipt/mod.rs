//! Validation receipts at the edge: the master key's file ([`master`]), the `KeyManager`
//! over it ([`keys`]) and the running of a validation command ([`runner`]). The receipt, its
//! signing and its chain are `waymark_core::receipt` (re-exported here); docs/receipts.md
//! describes the formats for users.

pub mod keys;
pub mod master;
pub mod runner;
pub mod seal;

pub use keys::{FileKeyManager, KeyManager};
pub use waymark_core::receipt::*;

use waymark_core::config::Config;

/// The signer of the configured master key, the key created on first use; the error says
/// why there is none (a receipt is then kept unsigned, never refused).
pub fn signer(config: &Config) -> Result<Box<dyn ReceiptSigner>, KeyError> {
    let mut km = FileKeyManager::from_config(config);
    km.load()?;
    km.new_signer()
}

/// The signer of the configured master key only when the key exists: what checks receipts
/// (verifying must never create a key).
pub fn existing_signer(config: &Config) -> Result<Box<dyn ReceiptSigner>, KeyError> {
    let mut km = FileKeyManager::from_config(config);
    km.load_existing()?;
    km.new_signer()
}

/// [`waymark_core::task::validation::receipt`] signed with the configured key, and why it is unsigned when
/// there is no usable key.
pub fn sealed(
    config: &Config,
    hook: &waymark_core::task::Hook,
    step: Option<&str>,
    run: Run,
) -> (waymark_core::task::validation::Sealed, Option<KeyError>) {
    let signer = signer(config);
    let sealed =
        waymark_core::task::validation::receipt(config, hook, step, run, signer.as_deref().ok());
    (sealed, signer.err())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;
    use crate::task::{Hook, testing};

    /// A receipt is signed with a key waymark made; once the key file is readable by
    /// others, the next receipt is kept unsigned, with the path its key would have, and the
    /// error says why.
    #[test]
    fn with_a_loose_key_the_receipt_is_kept_unsigned_and_the_error_says_why() {
        let tmp = tempfile::tempdir().unwrap();
        let key = tmp.path().join("keys/master.key");
        let config = Config {
            key_file: key.to_string_lossy().into_owned(),
            ..Config::default()
        };
        let now = chrono::Utc::now();
        let mut hook: Hook = testing::recorded_plan(now);
        hook.task_index = 2;
        let run = waymark_core::task::validation::observed("cargo test", 0, "ok", "", None, now);
        let (first, error) = sealed(&config, &hook, None, run.clone());
        assert!(error.is_none() && first.receipt.is_signed() && !first.head.mac.is_empty());
        let mut km = FileKeyManager::from_config(&config);
        km.load_existing().unwrap();
        assert_eq!(km.new_signer().unwrap().verify(&first.receipt), Ok(()));

        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        hook.receipt_head = Some(first.head);
        let (second, error) = sealed(&config, &hook, None, run);
        assert!(matches!(error, Some(KeyError::LoosePermissions { .. })));
        assert_eq!((second.head.count, second.head.mac.as_str()), (2, ""));
        assert!(!second.receipt.is_signed());
        assert_eq!(second.receipt.key_path, "m/44'/236'/0'/2");
    }
}
