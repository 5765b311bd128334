//! `waymark key export [--out FILE]`: the public keys of the task keys whose receipts are
//! here, for checking receipts without the master key (`waymark verify --public-keys`, in
//! CI). Task keys are derived from the master key by a hash (hardened: no public key can
//! be derived from another), so each is exported by its path; the file is merged with what
//! it already holds, so keys of tasks cleaned up since stay in it. docs/receipts.md.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::cmd::{ExitCode, Outcome};
use crate::receipt::{FileKeyManager, KeyManager};
use waymark_core::receipt::public::PublicKeys;

/// Where `waymark key export` writes by default (relative to the project root).
pub const DEFAULT_EXPORT: &str = ".orchestration/keys.pub.json";

#[derive(Debug, clap::Subcommand)]
pub enum KeyCmd {
    /// Write the public keys of the tasks whose receipts are here (no secret: commit it).
    Export {
        /// The file to write (merged with the keys it already holds).
        #[arg(long, value_name = "FILE", default_value = DEFAULT_EXPORT)]
        out: PathBuf,
    },
}

pub fn run(root: Option<PathBuf>, cmd: KeyCmd) -> Outcome {
    let KeyCmd::Export { out } = cmd;
    let ctx = super::ctx(root);
    let (shown, out) = (out.display().to_string(), ctx.project.root.join(&out));
    let mut km = FileKeyManager::from_config(&ctx.config);
    km.load_existing()
        .map_err(|e| super::failed(format!("key export: {e}")))?;
    let paths = key_paths(&ctx).map_err(|e| super::failed(format!("key export: {e}")))?;
    let mut keys = match std::fs::read_to_string(&out) {
        Ok(text) => PublicKeys::from_json(&text)
            .map_err(|e| super::failed(format!("{}: {e}", out.display())))?,
        Err(_) => PublicKeys::default(),
    };
    for path in &paths {
        let public = km.public_key(path).expect("the key is loaded");
        if let Some(old) = keys.0.insert(path.clone(), public.clone()) {
            if old != public {
                eprintln!(
                    "waymark: warning: {path}: replaced a public key of another master key (receipts it signed no longer verify with this file)"
                );
            }
        }
    }
    // Written whole (`store::write_verbatim`: public keys, the user's own file), its
    // directory made.
    out.parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| crate::store::write_verbatim(&out, keys.to_json().as_bytes()))
        .map_err(|e| super::failed(format!("cannot write {}: {e}", out.display())))?;
    println!(
        "wrote {} to {shown} ({} in it)\ncommit it: `waymark verify --public-keys {shown}` checks receipts with it",
        waymark_core::text::count(paths.len() as u64, "public key"),
        keys.0.len(),
    );
    Ok(ExitCode::SUCCESS)
}

/// The key paths of every signed receipt here, and the current task's (whose receipts are
/// still to come).
fn key_paths(ctx: &crate::runtime::context::Ctx) -> anyhow::Result<BTreeSet<String>> {
    let mut paths = BTreeSet::new();
    for (_, receipts) in crate::task::store::receipt_logs(&ctx.project)? {
        paths.extend(
            receipts
                .into_iter()
                .filter(|r| r.is_signed())
                .map(|r| r.key_path),
        );
    }
    if let Some(hook) = crate::task::current::load(ctx)? {
        let d = &ctx.config.key_derivation;
        paths.insert(waymark_core::receipt::key::key_path(d, hook.task_index));
    }
    Ok(paths)
}
