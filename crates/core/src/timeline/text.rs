//! The timeline as `waymark log` prints it: one line an event, time, kind and what; in
//! colour for a terminal (the caller decides, `NO_COLOR` included).

use super::{Event, kind};
use crate::text::{one_line, stamp};

/// The width of the kind column: the longest kind.
const KIND_WIDTH: usize = 24;

/// Every event, one line each; `with_task` names each line's task (`--all`).
pub fn render(events: &[Event], color: bool, with_task: bool) -> String {
    if events.is_empty() {
        return "No events.\n".into();
    }
    events
        .iter()
        .map(|e| line(e, color, with_task) + "\n")
        .collect()
}

fn line(e: &Event, color: bool, with_task: bool) -> String {
    let task = match (with_task, e.details.get("task").and_then(|t| t.as_str())) {
        (true, Some(t)) => format!("[{t}] "),
        _ => String::new(),
    };
    let kind = format!("{:<KIND_WIDTH$}", e.kind);
    let paint = |code: &str, s: &str| match color {
        true => format!("\x1b[{code}m{s}\x1b[0m"),
        false => s.to_string(),
    };
    format!(
        "{} {task}{} {}",
        paint("2", &stamp(e.time)),
        paint(colour(e), &kind),
        one_line(&e.what)
    )
}

/// The ANSI colour of an event's kind: red what went wrong, green what went well.
fn colour(e: &Event) -> &'static str {
    let passed = e.details.get("passed").and_then(|p| p.as_bool());
    match e.kind.as_str() {
        kind::CRASH | kind::TASK_FAILED | kind::STEP_FAILED | kind::SESSION_STOPPED_ON_ERROR => {
            "1;31"
        }
        kind::RECEIPT if passed == Some(false) => "31",
        kind::RECEIPT | kind::STEP_COMPLETED | kind::TASK_COMPLETED => "32",
        kind::CHECKPOINT | kind::COMPACTION => "34",
        kind::SCOPE_WARNING | kind::AWAITING_HUMAN | kind::SIDE_EFFECT => "33",
        kind::REWIND | kind::CONVERSATION_REWOUND => "35",
        kind::SESSION_STARTED | kind::SESSION_ENDED | kind::TASK_STARTED => "36",
        _ => "0",
    }
}
