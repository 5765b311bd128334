//! `waymark trace [--verify]`: how many records the Agent Trace ledger holds and whether
//! its chain holds (docs/guarantees.md). Without `--verify` it is a listing (exit 0); with
//! it, exit 1 names the first line where the chain breaks, a head that does not hold, or
//! a head anchored in a commit's `Waymark-Trace` trailer that the ledger no longer has.

use std::path::PathBuf;

use crate::cmd::{ExitCode, Outcome};
use crate::runtime::context::Ctx;
use crate::trace::{self, HeadCheck, Verified, head};
use waymark_core::trace::anchor::{self, Anchor};

#[derive(Debug, clap::Args)]
pub struct TraceArgs {
    /// Exit 1 if the chain breaks anywhere (an edited or removed line); lines joining
    /// an earlier one (a merged branch) are listed.
    #[arg(long)]
    pub verify: bool,
}

pub fn run(root: Option<PathBuf>, args: TraceArgs) -> Outcome {
    let ctx = super::ctx(root);
    let (holds, said) = checked(&ctx).map_err(super::failed)?;
    print!("{said}");
    if !holds && args.verify {
        eprintln!("waymark: trace: verification FAILED");
        return Err(ExitCode(super::CHECK_FAILED));
    }
    Ok(ExitCode::SUCCESS)
}

/// What `waymark trace --verify` says, for the report and `verify`: whether the ledger
/// holds, and the command's text.
pub fn verdict(ctx: &Ctx) -> (bool, String) {
    checked(ctx).unwrap_or_else(|why| (false, why))
}

/// The ledger walked and judged: whether its chain, its head and the heads anchored in
/// git hold, and what each says; `Err` when it cannot be read.
fn checked(ctx: &Ctx) -> Result<(bool, String), String> {
    let path = trace::trace_path(&ctx.project);
    let found = trace::verify(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut said = summary(&found);
    if found.bad.is_some() {
        return Ok((false, said));
    }
    let (head, head_broken) = head_report(ctx, &found);
    let (anchored, anchor_broken) = anchors_report(ctx, &found.links);
    said.push_str(&format!("{head}{anchored}"));
    Ok((!head_broken && !anchor_broken, said))
}

/// What the heads anchored in git history (`Waymark-Trace` trailers of HEAD's commits,
/// `trace::anchor`) say of the ledger (`links`, its lines' links from the chain's walk), and
/// whether that fails `--verify`. Nothing when no commit carries one (or outside git).
fn anchors_report(ctx: &Ctx, links: &[u128]) -> (String, bool) {
    let format = format!(
        "--format=%H %(trailers:key={},valueonly,separator=%x2C)",
        crate::git::trailers::TRACE
    );
    let Some(log) = crate::git::run(&ctx.project.root, ["log", &format, "--"]) else {
        return (String::new(), false);
    };
    let anchors: Vec<Anchor> = log
        .lines()
        .filter_map(|l| l.split_once(' '))
        .flat_map(|(commit, values)| values.split(',').filter_map(|v| Anchor::parse(commit, v)))
        .collect();
    if anchors.is_empty() {
        return (String::new(), false);
    }
    let broken: Vec<String> = anchors
        .iter()
        .filter_map(|a| anchor::check(links, a))
        .collect();
    if broken.is_empty() {
        let commits = waymark_core::text::count(anchors.len() as u64, "commit");
        return (
            format!("anchors: the ledger holds the heads {commits} anchor\n"),
            false,
        );
    }
    (
        broken
            .iter()
            .map(|b| format!("anchor BROKEN: {b}\n"))
            .collect(),
        true,
    )
}

/// What the head written here says of the ledger, and whether that fails `--verify`.
fn head_report(ctx: &Ctx, found: &Verified) -> (String, bool) {
    let Some(head) = trace::read_head(&ctx.project) else {
        let why = if ctx.project.state_file(trace::HEAD_FILE).exists() {
            "head unreadable (a writer was killed while writing it): the chain is checked against itself only, and the next record writes a whole head\n"
        } else {
            "no head here: the chain is checked against itself only (an edit re-chained after it, or a record appended, would pass; the head that catches them is kept on the machine that wrote the records)\n"
        };
        return (why.into(), false);
    };
    let Ok(signer) = crate::receipt::existing_signer(&ctx.config) else {
        return (
            "head: cannot be checked here, without the key that made it: the chain is checked against itself only\n".into(),
            false,
        );
    };
    let mac = signer.mac(head::KEY_PATH, &head.message());
    if head.mac != mac {
        let why = match head.mac.is_empty() {
            true => "it carries no MAC, though your key is here",
            false => "its MAC does not match (it was edited, or made with another key)",
        };
        return (format!("head BROKEN: {why}\n"), true);
    }
    // The lines as HEAD's commit has them (each link counted): what came through git.
    let committed = head::lines_of(&ledger_at(ctx, "HEAD").unwrap_or_default());
    match head::check(&head, found, &committed) {
        HeadCheck::Holds { line } => (format!("head authenticated: lines 1-{line} are as waymark wrote them here, and any after came through git\n"), false),
        HeadCheck::Moved { count, line } => (format!("head authenticated: the last record written here moved from line {count} to line {line} (a merge put records before it); lines not written here came through git\n"), false),
        HeadCheck::Interrupted => ("head authenticated: the last append was cut short (its head was written, its line not): an interrupted write, not tampering\n".into(), false),
        HeadCheck::Broken(why) => (format!("head BROKEN: {why}\n"), true),
    }
}

/// The ledger as git holds it at `rev` (`HEAD`, or `""` for the index); `None` outside git
/// or where it does not hold the ledger.
pub(super) fn ledger_at(ctx: &Ctx, rev: &str) -> Option<Vec<u8>> {
    let spec = format!(
        "{rev}:./{}/{}",
        crate::store::project::STATE_DIR,
        trace::TRACE_FILE
    );
    let out = crate::git::command(&ctx.project.root)
        .args(["show", &spec])
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

fn summary(v: &Verified) -> String {
    let mut out = format!(
        "{} in .orchestration/{}\n",
        waymark_core::text::count(v.lines, "record"),
        trace::TRACE_FILE
    );
    match v.chained_from {
        None if v.lines > 0 => out.push_str("not chained (written by an older waymark)\n"),
        None => {}
        Some(1) => out.push_str("chained from the first line\n"),
        Some(n) => out.push_str(&format!(
            "chained from line {n} (the {} before it {} the chain)\n",
            waymark_core::text::count(n - 1, "line"),
            if n == 2 { "predates" } else { "predate" }
        )),
    }
    match &v.bad {
        Some(bad) => out.push_str(&format!("chain BROKEN at line {}: {}\n", bad.line, bad.why)),
        None if v.chained_from.is_some() => out.push_str("chain intact\n"),
        None => {}
    }
    for (line, after) in &v.merges {
        let from = match after {
            0 => "the start of the ledger".to_string(),
            n => format!("line {n}"),
        };
        out.push_str(&format!(
            "line {line} joins another branch's records, continuing {from} (a union merge, docs/git.md)\n"
        ));
    }
    out
}
