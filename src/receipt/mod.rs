//! Validation receipts: Ed25519-signed proof that a validation command ran.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Proof that a validation ran, with its result and output hashes (seed 003).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Hex-encoded Ed25519 signature.
    pub signature: String,
    /// True when waymark only saw the command's result through Claude Code (Bash tool)
    /// rather than running it itself: the hashes are of what Claude Code reported.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub observed: bool,
}

use crate::context::Ctx;
use crate::task::Hook;

#[derive(Debug, thiserror::Error)]
pub enum ReceiptError {
    #[error("receipt signing is not available yet")]
    Unavailable,
}

/// A receipt for a validation the agent ran through the Bash tool and waymark only saw.
pub fn observe(
    _ctx: &Ctx,
    _hook: &Hook,
    _command: &str,
    _exit_code: i32,
    _stdout: &str,
    _stderr: &str,
) -> Result<ValidationReceipt, ReceiptError> {
    Err(ReceiptError::Unavailable)
}

impl Hook {
    /// Stores a receipt and links it to its step (by name, else the current step).
    pub fn add_receipt(&mut self, receipt: ValidationReceipt) {
        let step_id = self
            .find_step(&receipt.step_name)
            .map(|s| s.id.clone())
            .or_else(|| self.current_step.as_ref().map(|c| c.step_id.clone()));
        if let Some(id) = step_id {
            if let Some(step) = self.steps.iter_mut().find(|s| s.id == id) {
                step.receipt_ids.push(receipt.receipt_id.clone());
            }
        }
        self.updated_at = self.updated_at.max(receipt.completed_at);
        self.receipts.push(receipt);
    }
}
