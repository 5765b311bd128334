//! `waymark replay <file.jsonl|->`: recorded events through the same dispatch, in order.
//!
//! Recordings made in another directory (the fixtures say `/home/dev/project`) are mapped
//! onto the project being replayed into: an event's `cwd` that does not exist here is
//! taken as the recorded project root, so its paths land in this root.

use crate::cmd::{ExitCode, Outcome};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::claude::event::{self, Event};
use crate::runtime::context::Ctx;
use crate::store::project::Project;
use waymark_core::text::count;

pub fn run(file: &str, root: Option<PathBuf>) -> Outcome {
    let reader: Box<dyn BufRead> = if file == "-" {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        let f = std::fs::File::open(file)
            .map_err(|e| super::usage(format!("cannot open {file}: {e}")))?;
        Box::new(BufReader::new(f))
    };
    let root = Project::from_arg(root, None).root;
    let mut bad = 0;
    let mut replayed = 0;
    for (i, line) in reader.lines().enumerate() {
        let n = i + 1;
        let line = match line {
            Ok(l) if l.trim().is_empty() => continue,
            Ok(l) => l,
            Err(e) => {
                eprintln!("line {n}: cannot read: {e}");
                bad += 1;
                continue;
            }
        };
        let ev = match parse(&line) {
            Ok(ev) => ev,
            Err(e) => {
                eprintln!("line {n}: skipped: {e}");
                bad += 1;
                continue;
            }
        };
        replay(&root, n, &ev)?;
        replayed += 1;
    }
    let skipped = match bad {
        0 => String::new(),
        n => format!(", {} skipped", count(n as u64, "bad line")),
    };
    let events = count(replayed as u64, "event");
    eprintln!("replayed {events} into {}{skipped}", root.display());
    print_what_to_open(&root);
    Ok(ExitCode::checked(bad == 0))
}

/// One recorded line as an event (its `hook_event_name` names it).
fn parse(line: &str) -> anyhow::Result<Event> {
    let value = serde_json::from_str::<Value>(line)?;
    Ok(event::from_value(None, value)?.event)
}

/// Dispatches one event into the project at `root` (its recorded root mapped onto it) and
/// prints what the hook said. A project waymark must not write into ends the replay.
fn replay(root: &Path, n: usize, ev: &Event) -> Result<(), ExitCode> {
    let mut project = Project::at(root.to_path_buf());
    let recorded = ev.common.cwd.as_deref().map(Path::new);
    if let Some(rec) = recorded.filter(|r| !r.starts_with(&project.root) && !r.exists()) {
        project.recorded_root = Some(rec.to_path_buf());
    }
    let ctx = Ctx::new(project);
    ctx.project.check().map_err(super::failed)?;
    let said = super::hook::run_event(&ctx, ev).out.to_json(ev.name());
    let what = match &ev.kind {
        event::EventKind::PreToolUse(c)
        | event::EventKind::PostToolUse(c, _)
        | event::EventKind::PostToolUseFailure(c, _)
        | event::EventKind::PermissionDenied(c, _) => format!(" {}", c.name),
        event::EventKind::SessionStart(s) => format!(" ({})", s.source),
        _ => String::new(),
    };
    print!("{n:>4} {}{what}", ev.name());
    print_said(said.as_ref());
    Ok(())
}

/// What the hook answered, as the agent reads it: the text Claude Code adds to its
/// context (a resume brief, a warning) or the reason of a decision, quoted line by line
/// under the event, rather than the JSON it travels in.
fn print_said(said: Option<&Value>) {
    let Some(out) = said.map(|s| &s["hookSpecificOutput"]) else {
        println!();
        return;
    };
    let (head, text) = match out["permissionDecision"].as_str() {
        Some(decision) => (
            format!(": {decision}"),
            out["permissionDecisionReason"].as_str(),
        ),
        None => (
            ": the agent reads".into(),
            out["additionalContext"].as_str(),
        ),
    };
    println!("{head}");
    for line in text.unwrap_or_default().lines() {
        println!("     │ {line}");
    }
}

/// The last lines: where the recovery file is, the one thing to open after a replay.
fn print_what_to_open(root: &Path) {
    let hook_md = Project::at(root.to_path_buf()).state_file(crate::task::store::HOOK_MD);
    if hook_md.is_file() {
        println!(
            "\nOpen {}: where the task stands, as the next session is told (the state itself is hook.json beside it).",
            hook_md.display()
        );
    }
}
