//! `waymark report --html`: one self-contained page (inline CSS and SVG, no script, no
//! network: its Content-Security-Policy allows nothing else) drawing the timeline: a lane
//! for the task and one for each step, the steps' attempts as bars, every event a point
//! whose hover text (`<title>`) and `data-event` (the event as `waymark log --json` prints
//! it) come from the same [`Event`]; then the steps with the files each changed, and what
//! `receipts --verify` and `trace --verify` say.

mod lanes;
mod svg;

use super::Event;
use crate::task::{Step, StepContext};

pub use lanes::{Lane, lanes};

/// What a check (`waymark receipts --verify`, `waymark trace --verify`) found.
#[derive(Debug, Clone)]
pub struct Check {
    pub name: String,
    pub holds: bool,
    /// What the command prints.
    pub text: String,
}

/// Everything the page shows.
#[derive(Debug)]
pub struct Report<'a> {
    pub task_id: &'a str,
    pub state: &'a str,
    pub events: &'a [Event],
    pub steps: &'a [Step],
    pub current: Option<&'a StepContext>,
    pub checks: &'a [Check],
}

const STYLE: &str = "body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}\
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.5em}\
.chart{overflow-x:auto;border:1px solid #ddd;padding:4px}\
.event{cursor:pointer}.event:hover>*,.event:focus>*{stroke:#000;stroke-width:2}\
table{border-collapse:collapse}th{white-space:nowrap}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}\
.ok{color:#17803d;font-weight:bold}.bad{color:#c62828;font-weight:bold}\
pre{margin:0;white-space:pre-wrap}code{font-size:12px}\
.legend span{margin-right:1.2em}";

/// The page.
pub fn render(r: &Report) -> String {
    let lanes = lanes(r.events, r.steps, r.current);
    let (id, state) = (esc(r.task_id), esc(r.state));
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\
<title>waymark report: {id}</title><style>{STYLE}</style></head><body>\n\
<h1>Task {id} <small>({state})</small></h1>\n{}<h2>Timeline</h2>\n{LEGEND}\
<div class=\"chart\">{}</div>\n{}</body></html>\n",
        checks(r.checks),
        svg::chart(r.events, &lanes),
        steps_table(&lanes)
    )
}

const LEGEND: &str = "<p class=\"legend\"><span>&#9679; checkpoint</span><span>&#9675; compaction</span>\
<span>&#9632; receipt (green passed, red failed)</span><span>&#9650; session</span>\
<span>&#10006; crash</span><span>&#9670; other</span>; bars: a step's attempts. \
Hover a point for its details (the event as <code>waymark log --json</code> prints it).</p>\n";

/// The two verifications, each with what its command says.
fn checks(checks: &[Check]) -> String {
    let mut out = String::from("<h2>Verification</h2>\n<table class=\"checks\">");
    for c in checks {
        let (class, word) = if c.holds {
            ("ok", "holds")
        } else {
            ("bad", "FAILED")
        };
        out.push_str(&format!(
            "<tr data-check=\"{}\"><th>{}</th><td class=\"{class}\">{word}</td><td><pre>{}</pre></td></tr>",
            esc(&c.name),
            esc(&c.name),
            esc(c.text.trim_end())
        ));
    }
    out.push_str("</table>\n");
    out
}

/// Each step: its status, attempts and the files it changed.
fn steps_table(lanes: &[Lane]) -> String {
    let mut out = String::from(
        "<h2>Steps</h2>\n<table class=\"steps\"><tr><th>#</th><th>Step</th><th>Status</th><th>Attempts</th><th>Files changed</th></tr>",
    );
    for (i, l) in lanes.iter().filter(|l| l.step.is_some()).enumerate() {
        let files: Vec<String> = l
            .files
            .iter()
            .map(|f| format!("<code>{}</code>", esc(f)))
            .collect();
        out.push_str(&format!(
            "<tr data-step=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&l.name),
            i + 1,
            esc(&l.name),
            esc(&l.status),
            l.attempts,
            if files.is_empty() {
                "none".into()
            } else {
                files.join("<br>")
            }
        ));
    }
    out.push_str("</table>\n");
    out
}

/// Text made safe for HTML, in an element or an attribute.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// What [`esc`] made, read back, and `&nbsp;` (chromium writes U+00A0 so): for the tests
/// that read a page's attributes and hover texts.
#[cfg(any(test, feature = "testing"))]
pub fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

/// What hovering a point shows: the event's line, time and kind, then each detail.
pub fn hover(e: &Event) -> String {
    let mut lines = vec![
        e.what.clone(),
        crate::text::stamp(e.time),
        format!("kind: {}", e.kind),
    ];
    lines.extend(
        e.details
            .iter()
            .map(|(k, v)| format!("{k}: {}", Event::detail_text(v))),
    );
    lines.join("\n")
}
