//! The public keys of task keys, for checking receipts where the master key is not (CI).
//!
//! Task keys are derived with a hash of the master key (`key`): a public key cannot be
//! derived from another public key, so the holder of the master key exports each task's
//! public key by its path (`waymark key export`), as one JSON object
//! `{"<key_path>": "<64 hex>"}`, and the user commits it. A receipt that verifies against
//! it was signed by whoever held the master key that exported it; nothing more.

use std::collections::BTreeMap;

use super::signer::verify_with_public_key;
use super::{ValidationReceipt, Verdict};

/// Public keys by key path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PublicKeys(pub BTreeMap<String, String>);

impl PublicKeys {
    /// The keys of an exported file's text, or why it is not one.
    pub fn from_json(text: &str) -> Result<PublicKeys, String> {
        let map: BTreeMap<String, String> = serde_json::from_str(text)
            .map_err(|e| format!("not a JSON object of key paths to public keys: {e}"))?;
        match map
            .iter()
            .find(|(p, k)| !super::key::is_key_path(p) || k.len() != 64)
        {
            Some((p, _)) => Err(format!("`{p}`: not a key path with a 64-hex public key")),
            None => Ok(PublicKeys(map)),
        }
    }

    /// The file's text: one key a line, sorted, so that a new export diffs cleanly.
    pub fn to_json(&self) -> String {
        format!(
            "{}\n",
            serde_json::to_string_pretty(&self.0).expect("a map of strings")
        )
    }

    /// The signature status of `r` against the key of its own `key_path`: `NoKey` when the
    /// file has none for it.
    pub fn verdict(&self, r: &ValidationReceipt) -> Verdict {
        if !r.is_signed() {
            return Verdict::Unsigned;
        }
        let Some(key) = self.0.get(&r.key_path) else {
            return Verdict::NoKey;
        };
        Verdict::of(verify_with_public_key(r, key))
    }
}

/// The receipt that proves `tree` passed: one of `receipts` (with their verdicts) that is
/// valid, exited 0 and ran on exactly that tree. The newest such, if several.
pub fn proof_of<'a>(
    receipts: &'a [(ValidationReceipt, Verdict)],
    tree: &str,
) -> Option<&'a ValidationReceipt> {
    receipts
        .iter()
        .filter(|(r, v)| v.is_valid() && r.exit_code == 0 && !r.tree.is_empty() && r.tree == tree)
        .map(|(r, _)| r)
        .max_by_key(|r| r.completed_at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::receipt::{Ed25519Signer, ReceiptSigner};

    fn receipt(exit_code: i32, tree: &str, signer: &Ed25519Signer) -> ValidationReceipt {
        let run = crate::receipt::testing::run(exit_code, false, tree);
        let mut r = ValidationReceipt::new("step", run);
        signer.sign(&mut r, 3);
        r
    }

    use crate::receipt::testing::signer;

    /// A receipt checks against its exported public key alone; a changed tree, another
    /// master's key, or a key path the file lacks do not pass.
    #[test]
    fn receipts_verify_against_exported_public_keys_only() {
        let s = signer(1);
        let r = receipt(0, "a", &s);
        let keys = PublicKeys([(r.key_path.clone(), s.public_key(&r.key_path))].into());
        let keys = PublicKeys::from_json(&keys.to_json()).unwrap();
        assert_eq!(keys.verdict(&r), Verdict::Valid);
        let mut moved = r.clone();
        moved.tree = "b".into();
        assert!(matches!(keys.verdict(&moved), Verdict::Invalid(_)));
        let other = signer(2);
        let theirs = PublicKeys([(r.key_path.clone(), other.public_key(&r.key_path))].into());
        assert!(matches!(theirs.verdict(&r), Verdict::Invalid(_)));
        assert_eq!(PublicKeys::default().verdict(&r), Verdict::NoKey);
        assert!(PublicKeys::from_json(r#"{"x": "ab"}"#).is_err());
    }

    /// Only a valid, passing receipt of exactly that tree proves it.
    #[test]
    fn a_tree_is_proven_by_a_valid_passing_receipt_of_it() {
        let s = signer(1);
        let pass = receipt(0, "t1", &s);
        let fail = receipt(1, "t2", &s);
        let list = vec![
            (pass.clone(), Verdict::Valid),
            (fail, Verdict::Valid),
            (receipt(0, "t3", &s), Verdict::NoKey),
        ];
        assert_eq!(proof_of(&list, "t1"), Some(&pass));
        assert_eq!(proof_of(&list, "t2"), None);
        assert_eq!(proof_of(&list, "t3"), None);
        assert_eq!(proof_of(&list, ""), None);
    }
}
