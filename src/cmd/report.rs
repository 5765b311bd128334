//! `waymark report --html [-o FILE]`: the current task's timeline as one self-contained
//! HTML page (`waymark_core::timeline::html`), with what `receipts --verify` and
//! `trace --verify` say; to stdout, or to FILE.

use std::path::PathBuf;

use crate::cmd::{ExitCode, Outcome};
use waymark_core::timeline::html::{self, Check, Report};
use waymark_redact::Clean;

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Write one self-contained HTML page (the only format there is).
    #[arg(long)]
    pub html: bool,
    /// Write the page to FILE instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(root: Option<PathBuf>, args: ReportArgs) -> Outcome {
    if !args.html {
        return Err(super::usage("report: say which format: --html"));
    }
    let ctx = super::ctx(root);
    let hook = super::load_hook(&ctx)?.ok_or_else(|| super::usage("no task to report on"))?;
    let events = super::log::events_of(&ctx, std::slice::from_ref(&hook))?;
    let check = |name: &str, (holds, text): (bool, String)| Check {
        name: name.into(),
        holds,
        text,
    };
    let checks = [
        check("receipts --verify", super::receipts::verdict(&ctx, &hook)),
        check("trace --verify", super::trace::verdict(&ctx)),
    ];
    let page = Clean::text(&html::render(&Report {
        task_id: &hook.task_id,
        state: hook.state.as_str(),
        events: &events,
        steps: &hook.steps,
        current: hook.current_step.as_ref(),
        checks: &checks,
    }));
    match &args.output {
        Some(path) => {
            std::fs::write(path, page.as_bytes())
                .map_err(|e| super::failed(format!("cannot write {}: {e}", path.display())))?;
            eprintln!("waymark: report written to {}", path.display());
        }
        None => print!("{}", page.as_str()),
    }
    Ok(ExitCode::SUCCESS)
}
