//! `waymark verify [--range A..B] [--public-keys FILE]`: the proof for CI, in one command.
//!
//! 1. Every task's receipts (as `receipts --verify --all`): each signature valid, each
//!    chain whole. With `--public-keys`, signatures are checked against the exported public
//!    keys (`waymark key export`), so no secret is needed; the chain's head, authenticated
//!    with the master key, is then checked for its count and link only.
//! 2. The trace's chain (as `trace --verify`).
//! 3. With `--range A..B`, each commit in it: a valid receipt that exited 0 on exactly that
//!    commit's tree (waymark's own files left out, `git::project_tree`) must exist.
//!
//! Exit 1 if any of it fails. What this proves and what it cannot: docs/receipts.md.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::receipts::{Checked, label};
use crate::cmd::{ExitCode, Outcome};
use crate::receipt::{ReceiptSigner, Verdict, verify_all};
use crate::runtime::context::Ctx;
use waymark_core::receipt::ValidationReceipt;
use waymark_core::receipt::public::{PublicKeys, proof_of};
use waymark_core::task::Hook;

#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// Commits `A..B` (as git reads it): each must have a valid passing receipt of its tree.
    #[arg(long, value_name = "A..B")]
    pub range: Option<String>,
    /// Check signatures with these exported public keys (`waymark key export`), not the
    /// master key.
    #[arg(long, value_name = "FILE")]
    pub public_keys: Option<PathBuf>,
}

/// What signatures are checked with.
enum Keys {
    Public(PublicKeys),
    /// The master key's signer; None when there is no usable key here.
    Master(Option<Box<dyn ReceiptSigner>>),
}

impl Keys {
    fn verdicts(&self, receipts: &[ValidationReceipt]) -> Vec<Verdict> {
        match self {
            Keys::Public(p) => receipts.iter().map(|r| p.verdict(r)).collect(),
            Keys::Master(s) => verify_all(s.as_deref(), receipts),
        }
    }

    /// The signer a chain's head is authenticated with: the master key's only.
    fn head_signer(&self) -> Option<&dyn ReceiptSigner> {
        match self {
            Keys::Master(s) => s.as_deref(),
            Keys::Public(_) => None,
        }
    }
}

pub fn run(root: Option<PathBuf>, args: VerifyArgs) -> Outcome {
    let ctx = super::ctx(root);
    let keys = load_keys(&ctx, args.public_keys.as_deref()).map_err(super::failed)?;
    let (receipts_hold, checked) = receipts(&ctx, &keys);
    let (trace_holds, text) = super::trace::verdict(&ctx);
    println!("trace:");
    for line in text.lines() {
        println!("  {line}");
    }
    let range_holds = match &args.range {
        Some(r) => range(&ctx, r, &checked),
        None => true,
    };
    if receipts_hold && trace_holds && range_holds {
        println!("verify: OK");
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!("waymark: verify: FAILED");
    Err(ExitCode(super::CHECK_FAILED))
}

/// The public keys of `file`, else the master key (never created here).
fn load_keys(ctx: &Ctx, file: Option<&std::path::Path>) -> Result<Keys, String> {
    if let Some(file) = file {
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let keys = PublicKeys::from_json(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        println!("keys: {} public keys from {}", keys.0.len(), file.display());
        return Ok(Keys::Public(keys));
    }
    let signer = crate::receipt::existing_signer(&ctx.config);
    match &signer {
        Ok(_) => println!("keys: the master key"),
        Err(e) => println!("keys: none ({e}): signatures cannot be checked"),
    }
    Ok(Keys::Master(signer.ok()))
}

/// Every task's receipts checked (the task logs here, with the head of the task's
/// hook.json where there is one); whether all hold, and each receipt with its verdict.
fn receipts(ctx: &Ctx, keys: &Keys) -> (bool, Vec<(ValidationReceipt, Verdict)>) {
    let (hooks, mut holds) = hooks(ctx);
    let logs = match crate::task::store::receipt_logs(&ctx.project) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("waymark: cannot read the receipt logs: {e}");
            return (false, Vec::new());
        }
    };
    let mut tasks: BTreeMap<String, Vec<ValidationReceipt>> = logs.into_iter().collect();
    for id in hooks.keys() {
        tasks.entry(id.clone()).or_default();
    }
    let mut all = Vec::new();
    println!("receipts:");
    for (task, receipts) in tasks {
        let verdicts = keys.verdicts(&receipts);
        let hook = hooks.get(&task);
        let checked = Checked::of(&task, hook, receipts, verdicts, keys.head_signer());
        holds &= checked.holds();
        print_task(&task, &checked, hook.is_some());
        all.extend(checked.receipts.into_iter().zip(checked.verdicts));
    }
    (holds, all)
}

/// The current task and every archived one, by id (as `receipts --all` gathers them);
/// false when one cannot be read.
fn hooks(ctx: &Ctx) -> (BTreeMap<String, Hook>, bool) {
    let (current, mut holds) = match crate::task::current::load(ctx) {
        Ok(h) => (h, true),
        Err(e) => {
            eprintln!("waymark: the current task: {e}");
            (None, false)
        }
    };
    let (hooks, unreadable) = match crate::task::store::every_task(&ctx.project, current) {
        Ok(t) => t,
        Err(e) => (Vec::new(), vec![format!("cannot read the tasks: {e}")]),
    };
    for u in &unreadable {
        eprintln!("waymark: {u}");
        holds = false;
    }
    let hooks = hooks.into_iter().map(|h| (h.task_id.clone(), h)).collect();
    (hooks, holds)
}

fn print_task(task: &str, checked: &Checked, has_head: bool) {
    let (receipts, verdicts) = (&checked.receipts, &checked.verdicts);
    let valid = verdicts.iter().filter(|v| v.is_valid()).count();
    println!(
        "  task {task}: {}, {valid} valid",
        waymark_core::text::count(receipts.len() as u64, "receipt")
    );
    for (r, v) in receipts.iter().zip(verdicts).filter(|(_, v)| !v.is_valid()) {
        println!("    {} ({}): {}", r.receipt_id, r.key_path, label(v));
    }
    for p in &checked.problems {
        let at = p.index().map(|i| format!(" at {}", receipts[i].receipt_id));
        println!("    chain BROKEN{}: {p}", at.unwrap_or_default());
    }
    if !has_head && !receipts.is_empty() {
        println!("    (no hook.json here: the chain is checked against itself, not its head)");
    }
}

/// Each commit of `range` proven by a receipt of its tree; false when one is not, or the
/// range is not one git knows.
fn range(ctx: &Ctx, range: &str, checked: &[(ValidationReceipt, Verdict)]) -> bool {
    let root = &ctx.project.root;
    let lessons = &ctx.config.agent_md;
    let Some(log) = crate::git::run(root, ["log", "--reverse", "--format=%H %s", range, "--"])
    else {
        eprintln!("waymark: verify: `{range}` is not a range of commits git knows");
        return false;
    };
    println!("commits {range}:");
    let mut holds = true;
    for line in log.lines() {
        let (commit, subject) = line.split_once(' ').unwrap_or((line, ""));
        let short = &commit[..commit.len().min(12)];
        let tree = crate::git::project_tree::of_commit(root, commit, lessons);
        match tree.as_deref().and_then(|t| proof_of(checked, t)) {
            Some(r) => println!(
                "  {short} {subject}: proven by {} (`{}`, exit 0, task {})",
                r.receipt_id,
                waymark_core::text::one_line(&r.command),
                r.task_id
            ),
            None => {
                holds = false;
                println!("  {short} {subject}: NOT PROVEN: no valid passing receipt of its tree");
            }
        }
    }
    if log.is_empty() {
        println!("  none");
    }
    holds
}
