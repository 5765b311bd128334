//! Validation receipts: Ed25519-signed proof that a validation command ran.
//!
//! - [`ValidationReceipt`] is the receipt of docs/design.md (Receipt format), plus
//!   `observed`, `sig_version` and the chain fields.
//! - [`signed_message`] is what gets signed: every field but the signature (version 3;
//!   version 2 without the chain fields), or the original six-field pipe format for
//!   receipts marked version 1.
//! - [`signer`] holds the `ReceiptSigner` trait and its Ed25519 implementation, [`keys`]
//!   the `KeyManager` trait, [`master`] the key file and the per-task key derivation
//!   (signer and manager both build on the master key; it knows neither).
//! - [`validation`] is the one flow every validation takes, whether `waymark validate`
//!   ran it ([`runner`]) or waymark only saw the agent run it through the Bash tool.
//! - [`verify_all`] checks a list of receipts (what `waymark receipts --verify` and the
//!   benchmark call).
//!
//! docs/receipts.md describes the formats for users.

pub mod chain;
pub mod key;
pub mod public;
pub mod signer;

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::Config;

pub use chain::{ChainProblem, ReceiptHead};
pub use key::{KeyError, MasterKey};
pub use signer::{Ed25519Signer, ReceiptSigner, VerifyError};

/// The signed-message format new receipts are signed with (every field, length-prefixed,
/// with the task, the chain link and the work tree the command ran on).
pub const SIG_VERSION: u32 = 4;
/// The original six-field pipe format (docs/design.md, Receipt format). Receipts without
/// a `sig_version` are of this format.
pub const LEGACY_SIG_VERSION: u32 = 1;

/// What `duration` says when waymark did not see how long the command took.
pub const UNKNOWN_DURATION: &str = "unknown";

/// Proof that a validation ran, with its result and output hashes (docs/design.md,
/// Receipt format).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidationReceipt {
    pub receipt_id: String,
    pub step_name: String,
    pub command: String,
    pub exit_code: i32,
    pub started_at: DateTime<Utc>,
    pub completed_at: DateTime<Utc>,
    /// Human-readable, e.g. `12.3s`.
    pub duration: String,
    /// SHA-256 of stdout, hex.
    pub stdout_hash: String,
    /// SHA-256 of stderr, hex.
    pub stderr_hash: String,
    pub key_path: String,
    /// Hex-encoded Ed25519 signature; empty when no key was available to sign with.
    pub signature: String,
    /// True when waymark only saw the command's result through Claude Code (Bash tool)
    /// rather than running it itself: the hashes are of what Claude Code reported.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub observed: bool,
    /// The task the receipt was made in (version 3): a receipt copied into another task's
    /// log is reported as replayed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub task_id: String,
    /// The link ([`chain::link`]) of the receipt before it in the task's log, "" for the
    /// first (version 3).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub prev: String,
    /// True when secrets in the command were masked before it was signed: the receipt
    /// proves the command as kept, not the one typed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redacted: bool,
    /// The git tree id of the project's files when the command ran (waymark's own files
    /// left out), "" when unknown (outside git, an observed run): what `waymark verify
    /// --range` matches against a commit's tree (version 4).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tree: String,
    /// Which signed-message format `signature` is over. Absent in receipts written before
    /// the field existed, which were signed in the original pipe format (version 1).
    #[serde(default = "legacy_version")]
    pub sig_version: u32,
}

fn legacy_version() -> u32 {
    LEGACY_SIG_VERSION
}

/// The bytes a receipt's signature is over, by its `sig_version`; None for a version this
/// waymark does not know.
///
/// Version 3 covers every field except `signature`:
///
/// ```text
/// waymark-receipt/3\n
/// receipt_id:<len>:<value>\n   step_name:…  command:…  exit_code:…
/// started_at:…  completed_at:…  duration:…  stdout_hash:…  stderr_hash:…
/// key_path:…  observed:<len>:true|false\n  task_id:…  prev:…  redacted:…
/// ```
///
/// one `name:<byte length>:<value>\n` line per field, in that order; times are
/// `<unix seconds>.<9-digit nanoseconds>`. The length prefixes make the encoding
/// injective whatever the values hold (a command may contain newlines). Version 4 (current)
/// adds a `tree:` line after `redacted:`; version 3 is without it, version 2 without the
/// last three lines of version 3 (both verified, no longer written). The message ends in
/// `\n`, and a version-1 message always ends in a digit, so no signature can be moved from
/// one format to another.
///
/// Version 1 is the original pipe format (docs/design.md, Receipt format),
/// `{receipt_id}|{command}|{exit_code}|{stdout_hash}|{stderr_hash}|{completed_at_unix}`:
/// it leaves the step, the start, the duration and the key path unsigned, which is why it
/// is only verified, never written.
pub fn signed_message(r: &ValidationReceipt) -> Option<Vec<u8>> {
    let flag = |b: bool| if b { "true" } else { "false" };
    let (exit_code, started_at, completed_at) = (
        r.exit_code.to_string(),
        exact_time(r.started_at),
        exact_time(r.completed_at),
    );
    let v2: [(&str, &str); 11] = [
        ("receipt_id", &r.receipt_id),
        ("step_name", &r.step_name),
        ("command", &r.command),
        ("exit_code", &exit_code),
        ("started_at", &started_at),
        ("completed_at", &completed_at),
        ("duration", &r.duration),
        ("stdout_hash", &r.stdout_hash),
        ("stderr_hash", &r.stderr_hash),
        ("key_path", &r.key_path),
        ("observed", flag(r.observed)),
    ];
    match r.sig_version {
        LEGACY_SIG_VERSION => Some(
            format!(
                "{}|{}|{}|{}|{}|{}",
                r.receipt_id,
                r.command,
                r.exit_code,
                r.stdout_hash,
                r.stderr_hash,
                r.completed_at.timestamp()
            )
            .into_bytes(),
        ),
        2 => Some(fields_message("waymark-receipt/2", &v2)),
        3 | 4 => {
            let mut fields = v2.to_vec();
            fields.extend([
                ("task_id", r.task_id.as_str()),
                ("prev", r.prev.as_str()),
                ("redacted", flag(r.redacted)),
            ]);
            if r.sig_version == 4 {
                fields.push(("tree", r.tree.as_str()));
            }
            let tag = format!("waymark-receipt/{}", r.sig_version);
            Some(fields_message(&tag, &fields))
        }
        _ => None,
    }
}

/// `<tag>\n` then one `name:<byte length>:<value>\n` line per field: the encoding every
/// signed message of waymark's uses.
pub(crate) fn fields_message(tag: &str, fields: &[(&str, &str)]) -> Vec<u8> {
    let mut m = format!("{tag}\n").into_bytes();
    for (name, value) in fields {
        m.extend_from_slice(format!("{name}:{}:", value.len()).as_bytes());
        m.extend_from_slice(value.as_bytes());
        m.push(b'\n');
    }
    m
}

/// `<unix seconds>.<nanoseconds>`: every bit of the stored time, in a fixed form.
fn exact_time(t: DateTime<Utc>) -> String {
    format!("{}.{:09}", t.timestamp(), t.timestamp_subsec_nanos())
}

/// SHA-256, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    crate::text::hex(&Sha256::digest(bytes))
}

/// A new receipt id, `rcpt-<8 hex>` (docs/design.md, Task record).
pub fn new_receipt_id() -> String {
    crate::text::new_id("rcpt")
}

/// What a validation run produced, before it becomes a receipt.
#[derive(Debug, Clone)]
pub struct Run {
    pub command: String,
    pub exit_code: i32,
    pub started_at: DateTime<Utc>,
    pub completed_at: DateTime<Utc>,
    /// None when waymark did not see how long it took.
    pub duration: Option<Duration>,
    pub stdout_hash: String,
    pub stderr_hash: String,
    pub observed: bool,
    /// The git tree of the project's files the command ran on; "" when unknown.
    pub tree: String,
}

impl ValidationReceipt {
    /// An unsigned receipt of `run` for `step_name` (sign it with [`sign`]).
    pub fn new(step_name: &str, run: Run) -> ValidationReceipt {
        ValidationReceipt {
            receipt_id: new_receipt_id(),
            step_name: step_name.to_string(),
            command: run.command,
            exit_code: run.exit_code,
            started_at: run.started_at,
            completed_at: run.completed_at,
            duration: run
                .duration
                .map(crate::text::format_duration)
                .unwrap_or_else(|| UNKNOWN_DURATION.to_string()),
            stdout_hash: run.stdout_hash,
            stderr_hash: run.stderr_hash,
            observed: run.observed,
            tree: run.tree,
            sig_version: SIG_VERSION,
            ..ValidationReceipt::default()
        }
    }

    pub fn is_signed(&self) -> bool {
        !self.signature.is_empty()
    }
}

/// Makes `receipt` the next of `task_id`'s chain (after `head`), masks the secrets in it,
/// signs it with the task key of `task_index` and authenticates the new head. Returns the
/// new head. Without a signer (no usable key) the receipt and the head keep empty
/// signatures (and the `key_path` they would have had): a missing key never blocks the
/// caller.
pub fn seal(
    config: &Config,
    receipt: &mut ValidationReceipt,
    task_id: &str,
    head: Option<&ReceiptHead>,
    task_index: u32,
    signer: Option<&dyn ReceiptSigner>,
) -> ReceiptHead {
    receipt.task_id = task_id.to_string();
    receipt.prev = head.map(|h| h.link.clone()).unwrap_or_default();
    let (clean, redacted) = waymark_redact::scrub(&*receipt);
    *receipt = clean;
    receipt.redacted |= redacted;
    receipt.key_path = key::key_path(&config.key_derivation, task_index);
    receipt.sig_version = SIG_VERSION;
    receipt.signature.clear();
    let Some(signer) = signer else {
        return ReceiptHead::after(head, receipt);
    };
    signer.sign(receipt, task_index);
    let mut next = ReceiptHead::after(head, receipt);
    next.seal(signer, task_id);
    next
}

/// The signature status of one receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Valid,
    Invalid(VerifyError),
    /// Stored without a signature (no key was available when it was made).
    Unsigned,
    /// Signed, but there is no master key here to check it with.
    NoKey,
}

impl Verdict {
    /// The stable word used by `waymark receipts --json`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Valid => "valid",
            Verdict::Invalid(_) => "invalid",
            Verdict::Unsigned => "unsigned",
            Verdict::NoKey => "no_key",
        }
    }

    /// The verdict of a signature check.
    fn of(checked: Result<(), VerifyError>) -> Verdict {
        match checked {
            Ok(()) => Verdict::Valid,
            Err(VerifyError::Unsigned) => Verdict::Unsigned,
            Err(e) => Verdict::Invalid(e),
        }
    }

    pub fn is_valid(&self) -> bool {
        *self == Verdict::Valid
    }
}

/// Checks every receipt. `signer` is None when there is no master key to check with.
pub fn verify_all(
    signer: Option<&dyn ReceiptSigner>,
    receipts: &[ValidationReceipt],
) -> Vec<Verdict> {
    receipts
        .iter()
        .map(|r| {
            if !r.is_signed() {
                return Verdict::Unsigned;
            }
            signer.map_or(Verdict::NoKey, |s| Verdict::of(s.verify(r)))
        })
        .collect()
}

#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;
