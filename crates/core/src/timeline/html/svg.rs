//! The timeline as inline SVG: one column an event, in time order (a task's events may
//! come milliseconds apart or days apart: columns keep each one visible), one row a lane.

use std::fmt::Write;

use super::super::{Event, kind};
use super::lanes::{Lane, lane_of};
use super::{esc, hover};

const LABEL: usize = 200;
const COL: usize = 34;
const ROW: usize = 44;
/// Room above the lanes for the times.
const TOP: usize = 72;

fn x(col: usize) -> usize {
    LABEL + COL / 2 + col * COL
}

fn y(lane: usize) -> usize {
    TOP + lane * ROW + ROW / 2
}

pub(super) fn chart(events: &[Event], lanes: &[Lane]) -> String {
    let width = LABEL + COL * (events.len() + 1);
    let height = TOP + ROW * lanes.len() + 10;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-size=\"12\">"
    );
    for (i, lane) in lanes.iter().enumerate() {
        let fill = if i % 2 == 0 { "#f6f8fa" } else { "#fff" };
        let top = TOP + i * ROW;
        let _ = write!(
            s,
            "<rect x=\"0\" y=\"{top}\" width=\"{width}\" height=\"{ROW}\" fill=\"{fill}\"/><text x=\"6\" y=\"{}\" class=\"lane\">{}</text>",
            y(i) + 4,
            esc(&crate::text::truncate(&lane.name, 28))
        );
    }
    s.push_str(&times(events));
    s.push_str(&rules(events, height));
    s.push_str(&bars(events, lanes));
    for (col, e) in events.iter().enumerate() {
        s.push_str(&point(e, x(col), y(lane_of(lanes, e))));
    }
    s.push_str("</svg>");
    s
}

/// The time (UTC) above each column where it differs, to the second, from the column
/// before; the date is in each point's hover text.
fn times(events: &[Event]) -> String {
    let mut s = String::new();
    let mut last = String::new();
    for (col, e) in events.iter().enumerate() {
        let t = e.time.format("%H:%M:%S").to_string();
        if t != last {
            let (cx, cy) = (x(col), TOP - 6);
            let _ = write!(
                s,
                "<text x=\"{cx}\" y=\"{cy}\" transform=\"rotate(-45 {cx} {cy})\" fill=\"#555\">{t}</text>"
            );
            last = t;
        }
    }
    s
}

/// A vertical line across every lane at each crash (red) and session start (grey).
fn rules(events: &[Event], height: usize) -> String {
    let mut s = String::new();
    for (col, e) in events.iter().enumerate() {
        let style = match e.kind.as_str() {
            kind::CRASH => "stroke=\"#c62828\" stroke-width=\"2\"",
            kind::SESSION_STARTED => "stroke=\"#999\" stroke-dasharray=\"4 3\"",
            _ => continue,
        };
        let _ = write!(
            s,
            "<line x1=\"{0}\" y1=\"{TOP}\" x2=\"{0}\" y2=\"{height}\" {style}/>",
            x(col)
        );
    }
    s
}

/// Each attempt at a step: a bar from where it started to where it was left (to the
/// end while it runs), coloured by how it ended, its attempt number above when past 1.
fn bars(events: &[Event], lanes: &[Lane]) -> String {
    let mut s = String::new();
    for (col, e) in events.iter().enumerate() {
        if e.kind != kind::STEP_STARTED {
            continue;
        }
        let lane = lane_of(lanes, e);
        let end = events
            .iter()
            .enumerate()
            .skip(col + 1)
            .find(|(_, f)| lane_of(lanes, f) == lane && ends_attempt(&f.kind));
        let (to, colour) = match end {
            Some((c, f)) => (x(c), bar_colour(&f.kind)),
            None => (x(events.len()), "#90caf9"),
        };
        let top = y(lane) - 9;
        let _ = write!(
            s,
            "<rect class=\"attempt\" x=\"{}\" y=\"{top}\" width=\"{}\" height=\"18\" rx=\"4\" fill=\"{colour}\" opacity=\"0.55\"/>",
            x(col),
            to - x(col)
        );
        let attempt = e
            .details
            .get("attempt")
            .and_then(|a| a.as_u64())
            .unwrap_or(1);
        if attempt > 1 {
            let _ = write!(
                s,
                "<text x=\"{}\" y=\"{}\" fill=\"#b45309\">attempt {attempt}</text>",
                x(col) - 10,
                top - 3
            );
        }
    }
    s
}

fn ends_attempt(kind: &str) -> bool {
    matches!(
        kind,
        kind::STEP_COMPLETED
            | kind::STEP_FAILED
            | kind::STEP_PAUSED
            | kind::STEP_DELETED
            | kind::AWAITING_HUMAN
            | kind::CRASH
    ) || kind == kind::STEP_STARTED
}

fn bar_colour(kind: &str) -> &'static str {
    match kind {
        kind::STEP_COMPLETED => "#81c784",
        kind::STEP_FAILED | kind::CRASH | kind::AWAITING_HUMAN => "#e57373",
        _ => "#bdbdbd",
    }
}

/// One event: its shape, its hover text, and the event itself as JSON.
fn point(e: &Event, cx: usize, cy: usize) -> String {
    let json = serde_json::to_string(e).expect("an event serializes");
    format!(
        "<g class=\"event\" tabindex=\"0\" data-kind=\"{}\" data-event=\"{}\"><title>{}</title>{}</g>",
        esc(&e.kind),
        esc(&json),
        esc(&hover(e)),
        shape(e, cx, cy)
    )
}

fn shape(e: &Event, cx: usize, cy: usize) -> String {
    let passed = e.details.get("passed").and_then(|p| p.as_bool());
    match e.kind.as_str() {
        kind::CHECKPOINT => format!("<circle cx=\"{cx}\" cy=\"{cy}\" r=\"7\" fill=\"#1565c0\"/>"),
        kind::COMPACTION => format!(
            "<circle cx=\"{cx}\" cy=\"{cy}\" r=\"7\" fill=\"#fff\" stroke=\"#1565c0\" stroke-width=\"3\"/>"
        ),
        kind::RECEIPT => {
            let fill = if passed == Some(true) {
                "#2e7d32"
            } else {
                "#c62828"
            };
            format!(
                "<rect x=\"{}\" y=\"{}\" width=\"13\" height=\"13\" fill=\"{fill}\"/>",
                cx - 6,
                cy - 6
            )
        }
        kind::CRASH => format!(
            "<path d=\"M{0} {1}l12 12m0 -12l-12 12\" stroke=\"#c62828\" stroke-width=\"4\" transform=\"translate(-6 -6)\"/>",
            cx, cy
        ),
        kind::SESSION_STARTED | kind::SESSION_ENDED | kind::SESSION_STOPPED_ON_ERROR => {
            let fill = if e.kind == kind::SESSION_STOPPED_ON_ERROR {
                "#c62828"
            } else {
                "#00838f"
            };
            format!("<path d=\"M{cx} {}l7 12h-14z\" fill=\"{fill}\"/>", cy - 7)
        }
        _ => format!(
            "<path d=\"M{cx} {}l6 6l-6 6l-6 -6z\" fill=\"{}\"/>",
            cy - 6,
            other_colour(&e.kind)
        ),
    }
}

fn other_colour(k: &str) -> &'static str {
    match k {
        kind::STEP_FAILED | kind::TASK_FAILED | kind::AWAITING_HUMAN => "#c62828",
        kind::STEP_COMPLETED | kind::TASK_COMPLETED => "#2e7d32",
        kind::SCOPE_WARNING | kind::SIDE_EFFECT => "#ef6c00",
        kind::REWIND | kind::CONVERSATION_REWOUND => "#6a1b9a",
        _ => "#546e7a",
    }
}
