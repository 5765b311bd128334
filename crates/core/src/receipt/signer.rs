//! Signing and verifying receipts (the `ReceiptSigner` of docs/design.md), and its Ed25519
//! implementation over ed25519-dalek. Nothing outside this file names ed25519-dalek: a
//! different scheme is a new `ReceiptSigner`, with no change to the callers.

use std::collections::HashMap;
use std::sync::Mutex;

use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};
use hmac::{KeyInit, Mac};

use super::key::{self, MasterKey};
use super::{SIG_VERSION, ValidationReceipt, signed_message};
use crate::config::KeyDerivation;

/// Why a receipt does not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("not signed")]
    Unsigned,
    #[error("signature is not 64 bytes of hex")]
    MalformedSignature,
    #[error("key_path `{0}` is not a derivation path")]
    MalformedKeyPath(String),
    #[error("unknown signature version {0}")]
    UnknownVersion(u32),
    #[error("signature does not match (the receipt was changed, or signed with another key)")]
    BadSignature,
}

/// Signs receipts (and the chain's head) with per-task keys and checks them. A scheme
/// implements the three byte-level methods; receipts are signed through them.
pub trait ReceiptSigner {
    /// The derivation path of a task's key, e.g. `m/44'/236'/0'/5`.
    fn key_path(&self, task_index: u32) -> String;
    /// The hex signature of `message` with the key named `key_path`.
    fn sign_bytes(&self, key_path: &str, message: &[u8]) -> String;
    /// Checks a hex `signature` of `message` against the key named `key_path`.
    fn verify_bytes(
        &self,
        key_path: &str,
        message: &[u8],
        signature: &str,
    ) -> Result<(), VerifyError>;
    /// The hex HMAC-SHA256 of `message` under the head key of the task key `key_path`: the
    /// receipt chain's head is authenticated, not signed (checking either needs the master
    /// key, and a MAC costs a hundredth of a signature on every validation).
    fn mac(&self, key_path: &str, message: &[u8]) -> String;

    /// Signs with the key of `task_index`: sets `key_path`, `sig_version` (the current
    /// format) and `signature`, in that order, so the signature covers the first two.
    fn sign(&self, receipt: &mut ValidationReceipt, task_index: u32) {
        receipt.key_path = self.key_path(task_index);
        receipt.sig_version = SIG_VERSION;
        let message = signed_message(receipt).expect("the current version has a message");
        receipt.signature = self.sign_bytes(&receipt.key_path, &message);
    }

    /// Checks the signature against the key named by the receipt's own `key_path`.
    fn verify(&self, receipt: &ValidationReceipt) -> Result<(), VerifyError> {
        let message =
            signed_message(receipt).ok_or(VerifyError::UnknownVersion(receipt.sig_version))?;
        self.verify_bytes(&receipt.key_path, &message, &receipt.signature)
    }
}

/// Ed25519 (RFC 8032) over keys derived from the master key (see `key`).
pub struct Ed25519Signer {
    master: MasterKey,
    derivation: KeyDerivation,
    /// Derived keys by path: a task's receipts share one key, and deriving it (a scalar
    /// multiplication) would otherwise cost as much as checking the signature.
    keys: Mutex<HashMap<String, SigningKey>>,
}

impl Ed25519Signer {
    pub fn new(master: MasterKey, derivation: KeyDerivation) -> Ed25519Signer {
        Ed25519Signer {
            master,
            derivation,
            keys: Mutex::new(HashMap::new()),
        }
    }

    /// The hex Ed25519 public key of the task key named `key_path`: what `waymark key
    /// export` writes, so that receipts can be checked where the master key is not.
    pub fn public_key(&self, key_path: &str) -> String {
        crate::text::hex(self.signing_key(key_path).verifying_key().as_bytes())
    }

    fn signing_key(&self, key_path: &str) -> SigningKey {
        let mut keys = self.keys.lock().unwrap_or_else(|p| p.into_inner());
        keys.entry(key_path.to_string())
            .or_insert_with(|| SigningKey::from_bytes(&self.master.derive(key_path)))
            .clone()
    }
}

impl ReceiptSigner for Ed25519Signer {
    fn key_path(&self, task_index: u32) -> String {
        key::key_path(&self.derivation, task_index)
    }

    fn sign_bytes(&self, key_path: &str, message: &[u8]) -> String {
        let sig = self.signing_key(key_path).sign(message);
        crate::text::hex(&sig.to_bytes())
    }

    fn mac(&self, key_path: &str, message: &[u8]) -> String {
        let key = self.master.derive_head_key(key_path);
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&key).expect("any key length");
        mac.update(message);
        crate::text::hex(&mac.finalize().into_bytes())
    }

    fn verify_bytes(
        &self,
        key_path: &str,
        message: &[u8],
        signature: &str,
    ) -> Result<(), VerifyError> {
        verify_hex(message, signature, || {
            if !key::is_key_path(key_path) {
                return Err(VerifyError::MalformedKeyPath(key_path.to_string()));
            }
            Ok(self.signing_key(key_path).verifying_key())
        })
    }
}

/// Checks a receipt's signature against the hex Ed25519 public key of its task key (no
/// master key needed: what `waymark verify --public-keys` does).
pub fn verify_with_public_key(
    receipt: &ValidationReceipt,
    public_key: &str,
) -> Result<(), VerifyError> {
    if receipt.signature.is_empty() {
        return Err(VerifyError::Unsigned);
    }
    let message =
        signed_message(receipt).ok_or(VerifyError::UnknownVersion(receipt.sig_version))?;
    verify_hex(&message, &receipt.signature, || {
        crate::text::unhex(public_key)
            .and_then(|b| <[u8; 32]>::try_from(b).ok())
            .and_then(|b| VerifyingKey::from_bytes(&b).ok())
            .ok_or(VerifyError::BadSignature)
    })
}

/// Checks a hex Ed25519 `signature` of `message` against the key `key` gives, asked for
/// once the signature is well formed: the one check behind a derived key and an exported one.
fn verify_hex(
    message: &[u8],
    signature: &str,
    key: impl FnOnce() -> Result<VerifyingKey, VerifyError>,
) -> Result<(), VerifyError> {
    if signature.is_empty() {
        return Err(VerifyError::Unsigned);
    }
    let bytes: [u8; 64] = crate::text::unhex(signature)
        .and_then(|b| b.try_into().ok())
        .ok_or(VerifyError::MalformedSignature)?;
    key()?
        .verify_strict(message, &Signature::from_bytes(&bytes))
        .map_err(|_| VerifyError::BadSignature)
}
