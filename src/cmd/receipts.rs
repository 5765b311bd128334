//! `waymark receipts [--verify] [--all] [--json]`: the current task's receipts (`--all`:
//! every task's, each finished task's from its archive) with their signature
//! status (valid / INVALID / unsigned / no key) and the state of their chain (replayed,
//! reordered or missing receipts). Both are always checked; `--verify` makes the exit code
//! say whether every receipt is valid and the chain whole.
//!
//! `--json` prints one object (stable; docs/receipts.md):
//! `{ task_id, key: {path, status, message}, summary: {total, valid, invalid, unsigned,
//! no_key}, chain: {status, unchained, problems: [{receipt_id, problem}]}, receipts: [
//! {<every receipt field, observed always present>, status, detail, chain} ] }` where
//! `key.status` is `ok`, `missing`, `refused` (readable by others), or `error`, a receipt's
//! `status` is `valid`, `invalid`, `unsigned` or `no_key`, and `chain.status` is `intact`,
//! `broken` or `none` (no chained receipts).

use crate::cmd::{ExitCode, Outcome};
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::receipt::{FileKeyManager, KeyError, KeyManager, ReceiptSigner, Verdict, verify_all};
use waymark_core::receipt::ValidationReceipt;
use waymark_core::receipt::chain::{self, CHAINED_SINCE, ChainProblem};
use waymark_core::task::Hook;
use waymark_core::text::{one_line, truncate};

#[derive(Debug, clap::Args)]
pub struct ReceiptsArgs {
    /// Check every signature; exit 1 if any is invalid or unsigned, or cannot be checked.
    #[arg(long)]
    pub verify: bool,
    /// Every task's receipts: the current task's and each finished task's.
    #[arg(long)]
    pub all: bool,
    /// Print one JSON object (stable; its fields are in docs/receipts.md).
    #[arg(long)]
    pub json: bool,
}

pub fn run(root: Option<PathBuf>, args: ReceiptsArgs) -> Outcome {
    let ctx = super::ctx(root);
    let hook = super::load_hook(&ctx)?;
    let receipts = match &hook {
        Some(h) => crate::task::store::receipts(&ctx.project, h)
            .map_err(|e| super::failed(format!("cannot read the receipts: {e}")))?,
        None => Vec::new(),
    };

    // Only an existing key: verifying must never create one.
    let mut km = FileKeyManager::from_config(&ctx.config);
    let key_path = km.path().map(|p| p.display().to_string());
    let loaded = km.load_existing().and_then(|()| km.new_signer());
    let (key_status, key_message) = match &loaded {
        Ok(_) => ("ok", None),
        Err(e @ KeyError::Missing(_)) => ("missing", Some(e.to_string())),
        Err(e @ KeyError::LoosePermissions { .. }) => ("refused", Some(e.to_string())),
        Err(e) => ("error", Some(e.to_string())),
    };
    let signer: Option<&dyn ReceiptSigner> = loaded.as_ref().ok().map(|s| s.as_ref());
    let checked = Checked::new(hook.as_ref(), receipts, signer);

    if let Some(msg) = &key_message {
        if checked.receipts.iter().any(|r| r.is_signed()) {
            eprintln!("waymark: warning: {msg}: signatures cannot be checked");
        }
    }

    let key = json!({"path": key_path, "status": key_status, "message": key_message});
    if args.all {
        return all(&ctx, hook, signer, &args, &key);
    }
    if args.json {
        let id = hook.as_ref().map(|h| h.task_id.clone());
        super::print_json(&json_of(&checked, id, key));
    } else {
        print_text(&checked);
    }

    if args.verify && !checked.holds() {
        if !args.json {
            eprintln!("waymark: receipts: verification FAILED");
        }
        return Err(ExitCode(super::CHECK_FAILED));
    }
    Ok(ExitCode::SUCCESS)
}

/// What `waymark receipts --verify` says of `hook`'s receipts, for the report: whether
/// they hold, and the command's judgement under its table (the same text it prints).
pub fn verdict(ctx: &crate::runtime::context::Ctx, hook: &Hook) -> (bool, String) {
    let receipts = match crate::task::store::receipts(&ctx.project, hook) {
        Ok(r) => r,
        Err(e) => return (false, format!("cannot read the receipts: {e}")),
    };
    let loaded = crate::receipt::existing_signer(&ctx.config);
    let signer: Option<&dyn ReceiptSigner> = loaded.as_ref().ok().map(|s| s.as_ref());
    let checked = Checked::new(Some(hook), receipts, signer);
    (checked.holds(), checked.judgement())
}

/// The task's receipts as checked: each one's signature verdict, and the chain's problems.
pub(super) struct Checked {
    pub(super) receipts: Vec<ValidationReceipt>,
    pub(super) verdicts: Vec<Verdict>,
    pub(super) problems: Vec<ChainProblem>,
    /// The receipt whose save was cut short: the log holds it, hook.json does not count it.
    interrupted: Option<usize>,
    /// How many receipts predate the chain.
    unchained: usize,
}

impl Checked {
    /// Checks each receipt's signature (with `signer`, when there is a key) and the chain
    /// against the head and count the task's hook.json holds.
    fn new(
        hook: Option<&Hook>,
        receipts: Vec<ValidationReceipt>,
        signer: Option<&dyn ReceiptSigner>,
    ) -> Checked {
        let verdicts = verify_all(signer, &receipts);
        let task_id = hook.map_or("", |h| h.task_id.as_str());
        Checked::of(task_id, hook, receipts, verdicts, signer)
    }

    /// Task `task_id`'s receipts with their signatures' `verdicts` (however they were
    /// checked), the chain checked against its hook.json's head and count when `hook` is
    /// there, else against itself; `head_signer` authenticates the head.
    pub(super) fn of(
        task_id: &str,
        hook: Option<&Hook>,
        receipts: Vec<ValidationReceipt>,
        verdicts: Vec<Verdict>,
        head_signer: Option<&dyn ReceiptSigner>,
    ) -> Checked {
        let head = hook.and_then(|h| h.receipt_head.as_ref());
        let counted = hook.map_or(0, |h| h.receipt_count);
        let problems = chain::check(task_id, &receipts, head, counted, head_signer);
        let interrupted = chain::interrupted(&receipts, head, counted);
        let unchained = receipts
            .iter()
            .filter(|r| r.sig_version < CHAINED_SINCE)
            .count();
        Checked {
            receipts,
            verdicts,
            problems,
            interrupted,
            unchained,
        }
    }

    /// Every signature valid and the chain whole.
    pub(super) fn holds(&self) -> bool {
        self.verdicts.iter().all(Verdict::is_valid) && self.problems.is_empty()
    }

    /// How many receipts have the verdict `word` (`valid`, `invalid`, `unsigned`, `no_key`).
    fn count(&self, word: &str) -> usize {
        self.verdicts.iter().filter(|v| v.as_str() == word).count()
    }

    /// The chain's problems with receipt `i`, in one line, if it has any.
    fn about(&self, i: usize) -> Option<String> {
        let texts: Vec<String> = self
            .problems
            .iter()
            .filter(|p| p.index() == Some(i))
            .map(ChainProblem::to_string)
            .collect();
        (!texts.is_empty()).then(|| texts.join("; "))
    }
}

/// `--json`: the one object docs/receipts.md describes.
fn json_of(checked: &Checked, task_id: Option<String>, key: Value) -> Value {
    let (receipts, problems) = (&checked.receipts, &checked.problems);
    let entries: Vec<Value> = receipts
        .iter()
        .zip(&checked.verdicts)
        .enumerate()
        .map(|(i, (r, v))| {
            let mut e = serde_json::to_value(r).expect("receipt serializes");
            let o = e.as_object_mut().expect("an object");
            o.insert("observed".into(), Value::Bool(r.observed));
            o.insert("status".into(), Value::from(v.as_str()));
            o.insert("detail".into(), Value::from(detail(v)));
            o.insert("chain".into(), Value::from(checked.about(i)));
            e
        })
        .collect();
    let chain_problems: Vec<Value> = problems
        .iter()
        .map(|p| {
            let id = p.index().map(|i| receipts[i].receipt_id.clone());
            json!({"receipt_id": id, "problem": p.to_string()})
        })
        .collect();
    let (interrupted, unchained) = (checked.interrupted, checked.unchained);
    let chain_status = match (problems.is_empty(), unchained == receipts.len()) {
        (false, _) => "broken",
        (true, true) => "none",
        (true, false) => "intact",
    };
    json!({
        "task_id": task_id,
        "key": key,
        "summary": {
            "total": receipts.len(),
            "valid": checked.count("valid"),
            "invalid": checked.count("invalid"),
            "unsigned": checked.count("unsigned"),
            "no_key": checked.count("no_key"),
        },
        "chain": {"status": chain_status, "unchained": unchained, "problems": chain_problems,
                  "interrupted_at": interrupted.map(|i| &receipts[i].receipt_id)},
        "receipts": entries,
    })
}

/// `--all`: every task's receipts, the current task's and each finished task's (from its
/// archive), checked as one task's are; with `--verify`, the exit code says whether all of
/// them hold. A task whose state or log cannot be read fails the verification.
fn all(
    ctx: &crate::runtime::context::Ctx,
    current: Option<Hook>,
    signer: Option<&dyn ReceiptSigner>,
    args: &ReceiptsArgs,
    key: &Value,
) -> Outcome {
    let (hooks, mut unreadable) = crate::task::store::every_task(&ctx.project, current)
        .map_err(|e| super::failed(format!("cannot read the tasks: {e}")))?;
    let mut tasks = Vec::new();
    let mut holds = true;
    for h in &hooks {
        let receipts = match crate::task::store::receipts(&ctx.project, h) {
            Ok(r) => r,
            Err(e) => {
                unreadable.push(format!("task {}: cannot read the receipts: {e}", h.task_id));
                continue;
            }
        };
        let checked = Checked::new(Some(h), receipts, signer);
        holds &= checked.holds();
        if args.json {
            tasks.push(json_of(&checked, Some(h.task_id.clone()), key.clone()));
        } else {
            println!("Task {}:", h.task_id);
            print_text(&checked);
            println!();
        }
    }
    if args.json {
        super::print_json(&json!({"tasks": tasks, "unreadable": unreadable}));
    }
    for u in &unreadable {
        eprintln!("waymark: {u}");
    }
    if args.verify && !(holds && unreadable.is_empty()) {
        eprintln!("waymark: receipts: verification FAILED");
        return Err(ExitCode(super::CHECK_FAILED));
    }
    Ok(ExitCode::SUCCESS)
}

/// The text report: the table, then the judgement.
fn print_text(checked: &Checked) {
    if !checked.receipts.is_empty() {
        print_table(&checked.receipts, &checked.verdicts);
        println!();
    }
    print!("{}", checked.judgement());
}

impl Checked {
    /// The verdicts counted, then the chain's state ("No receipts." and what the chain
    /// says of that, when there are none): one text, so the report says what the command does.
    fn judgement(&self) -> String {
        let receipts = &self.receipts;
        if receipts.is_empty() {
            return format!("No receipts.\n{}", chain_text(&[], &self.problems, 0));
        }
        let mut out = format!(
            "{}: {} valid, {} INVALID, {} unsigned, {} not checked (no key)\n",
            waymark_core::text::count(receipts.len() as u64, "receipt"),
            self.count("valid"),
            self.count("invalid"),
            self.count("unsigned"),
            self.count("no_key")
        );
        out.push_str(&chain_text(receipts, &self.problems, self.unchained));
        if let Some(r) = self.interrupted.map(|i| &receipts[i]) {
            out.push_str(&format!(
                "chain: interrupted write at receipt {} ({}): the log holds it, hook.json does not count it yet (a save was cut short, not tampering); the next validation counts it\n",
                receipts
                    .iter()
                    .position(|x| x.receipt_id == r.receipt_id)
                    .unwrap_or(0)
                    + 1,
                r.receipt_id
            ));
        }
        out
    }
}

/// The chain's verdict under the table: intact, or each problem with its receipt.
fn chain_text(
    receipts: &[ValidationReceipt],
    problems: &[ChainProblem],
    unchained: usize,
) -> String {
    let mut out = String::new();
    let chained = receipts.len() - unchained;
    if problems.is_empty() && chained > 0 {
        out.push_str(&format!(
            "chain: intact ({}, authenticated head matches)\n",
            waymark_core::text::count(chained as u64, "chained receipt")
        ));
    }
    for p in problems {
        match p.index() {
            Some(i) => out.push_str(&format!(
                "chain: BROKEN at {}: {p}\n",
                receipts[i].receipt_id
            )),
            None => out.push_str(&format!("chain: BROKEN: {p}\n")),
        }
    }
    if unchained > 0 {
        out.push_str(&format!(
            "{} {} the chain (signature version 1 or 2): not chained\n",
            waymark_core::text::count(unchained as u64, "receipt"),
            if unchained == 1 {
                "predates"
            } else {
                "predate"
            }
        ));
    }
    out
}

fn detail(v: &Verdict) -> Option<String> {
    match v {
        Verdict::Invalid(e) => Some(e.to_string()),
        Verdict::Unsigned => Some("stored without a signature (no key when it was made)".into()),
        Verdict::NoKey => Some("no master key here to check it with".into()),
        Verdict::Valid => None,
    }
}

/// A receipt's verdict in a word or two: the table's column here, `verify`'s line.
pub(super) fn label(v: &Verdict) -> String {
    match v {
        Verdict::Valid => "valid".into(),
        Verdict::Invalid(e) => format!("INVALID: {e}"),
        Verdict::Unsigned => "unsigned".into(),
        Verdict::NoKey => "no key: not checked".into(),
    }
}

fn print_table(receipts: &[ValidationReceipt], verdicts: &[Verdict]) {
    let header = [
        "RECEIPT",
        "STEP",
        "COMMAND",
        "EXIT",
        "DURATION",
        "KIND",
        "SIGNATURE",
    ];
    let rows: Vec<[String; 7]> = receipts
        .iter()
        .zip(verdicts)
        .map(|(r, v)| {
            [
                r.receipt_id.clone(),
                truncate(&one_line(&r.step_name), 24),
                truncate(&one_line(&r.command), 40),
                r.exit_code.to_string(),
                r.duration.clone(),
                if r.observed { "observed" } else { "ran" }.into(),
                label(v),
            ]
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    // The last cell is padded too: the line's end is trimmed.
    let line = |cells: Vec<&str>| {
        let s: String = cells
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell:<w$}  "))
            .collect();
        println!("{}", s.trim_end());
    };
    line(header.to_vec());
    for row in &rows {
        line(row.iter().map(String::as_str).collect());
    }
}
