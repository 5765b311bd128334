//! `waymark trace [--verify]`: how many records the Agent Trace ledger holds and whether
//! its chain holds (docs/guarantees.md). Without `--verify` it is a listing (exit 0); with
//! it, exit 1 names the first line where the chain breaks.

use std::path::PathBuf;

use crate::cmd::ExitCode;
use crate::trace::{self, Verified};

#[derive(Debug, clap::Args)]
pub struct TraceArgs {
    /// Exit 1 if the chain breaks anywhere (an edited or removed line); lines joining
    /// an earlier one (a merged branch) are listed.
    #[arg(long)]
    pub verify: bool,
}

pub fn run(root: Option<PathBuf>, args: TraceArgs) -> ExitCode {
    let ctx = super::ctx(root);
    let path = trace::trace_path(&ctx.project);
    let found = match trace::verify(&path) {
        Ok(v) => v,
        Err(e) => {
            return super::fail(
                super::CHECK_FAILED,
                format!("cannot read {}: {e}", path.display()),
            );
        }
    };
    print!("{}", summary(&found));
    match (&found.bad, args.verify) {
        (Some(_), true) => {
            eprintln!("waymark: trace: verification FAILED");
            ExitCode::from(super::CHECK_FAILED)
        }
        _ => ExitCode::SUCCESS,
    }
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
