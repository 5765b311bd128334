//! HOOK.md: the recovery file, rendered from the hook alone (docs/design.md, HOOK.md
//! sections).
//!
//! It must stand alone: an agent that reads nothing else learns which step to resume, which
//! attempt that is, what not to repeat and how to check its ground.

use std::fmt::Write;
use std::ops::Range;

use chrono::{DateTime, Utc};

use crate::recovery::guidance::{facts, guidance};
use crate::redact::Part;
use crate::task::{Hook, Step, StepStatus, Steps};
use crate::text::{ago, one_line, prefix, stamp, truncate};

/// The whole recovery file, unredacted: what a save writes, redacted in parts
/// (`task::store`), read whole by the tests.
#[cfg(test)]
pub fn render(hook: &Hook, now: DateTime<Utc>) -> String {
    head(hook, now) + &block(hook) + &tail(hook)
}

/// HOOK.md's block: the listing of the plan, then the sections of the newest receipts and
/// checkpoints. A function of the plan and of those, so that a save that leaves them alone
/// takes it back from the HOOK.md it wrote (`task::store`), each part on its own.
pub fn block(hook: &Hook) -> String {
    listing(&hook.steps) + &receipts(hook) + &checkpoints(hook)
}

/// What To Do Now's line for the files the running step changed, which What You Were Doing
/// lists.
const FILES_ABOVE: &str = "Read the files this step already changed (listed under What You Were Doing) before editing them again.";

/// The first lines of the block's parts ([`block`]), and of what follows it.
const LISTING: &str = "\n## Completed Steps — DO NOT REPEAT\n";
const RECEIPTS: &str = "\n## Validation Receipts\n";
const CHECKPOINTS: &str = "\n## Checkpoint Timeline\n";
const TROUBLESHOOTING: &str = "\n## Troubleshooting\n";

/// Where [`block`]'s parts stand in a HOOK.md: [`find_block`].
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub listing: Range<usize>,
    /// Empty (at the listing's end) when there are no receipts.
    pub receipts: Range<usize>,
    pub checkpoints: Range<usize>,
}

impl Found {
    /// The whole block.
    pub fn block(&self) -> Range<usize> {
        self.listing.start..self.checkpoints.end
    }

    /// The parts, in order (what the block's sum is taken of).
    pub fn parts(&self) -> [Range<usize>; 3] {
        [
            self.listing.clone(),
            self.receipts.clone(),
            self.checkpoints.clone(),
        ]
    }

    /// Where the parts stand in the block itself, cut out of the page.
    pub fn in_block(&self) -> Found {
        let at = |r: &Range<usize>| r.start - self.listing.start..r.end - self.listing.start;
        Found {
            listing: at(&self.listing),
            receipts: at(&self.receipts),
            checkpoints: at(&self.checkpoints),
        }
    }
}

/// Where the block's parts stand in `bytes`, a HOOK.md as a save writes it (`None` for a
/// file laid out otherwise), each from a newline to a newline: read as bytes, so that only
/// the block need be checked as UTF-8. What it finds is only taken when its sum holds
/// (`task::store`), and that sum is taken of each part on its own: a heading in a name or
/// an id (names are folded onto one line, ids written as they are) cuts the block
/// elsewhere than its sum was taken, and costs a render, never a wrong page.
pub fn find_block(bytes: &[u8]) -> Option<Found> {
    // A line at a time, as the store finds hook.json's plan (`text::newlines`): every
    // save reads HOOK.md back, and a substring search builds its searcher for each call.
    let mut lines = crate::text::newlines(bytes);
    let at = |i: usize, heading: &str| bytes[i..].starts_with(heading.as_bytes());
    let start = lines.find(|&i| at(i, LISTING))?;
    let next = lines.find(|&i| at(i, RECEIPTS) || at(i, CHECKPOINTS))?;
    let timeline = if at(next, CHECKPOINTS) {
        next
    } else {
        lines.find(|&i| at(i, CHECKPOINTS))?
    };
    let end = lines.find(|&i| at(i, TROUBLESHOOTING))?;
    Some(Found {
        listing: start..next,
        receipts: next..timeline,
        checkpoints: timeline..end,
    })
}

/// HOOK.md before its block: the task, its state, what it was doing, what to do now.
pub fn head(hook: &Hook, now: DateTime<Utc>) -> String {
    let mut md = String::with_capacity(4096);
    let outline = hook.outline();
    let g = guidance(hook, &outline);
    let _ = writeln!(md, "# HOOK: {}\n", hook.task_id);
    let _ = writeln!(
        md,
        "> Recovery file written by waymark from `.orchestration/hook.json` (the source of truth; \
         `waymark regenerate` rebuilds this file). If you lost your memory, this page is all you need.\n"
    );
    let _ = writeln!(md, "| | |\n|---|---|");
    let _ = writeln!(md, "| Task | `{}` |", hook.task_id);
    if let Some(intent) = &hook.intent_id {
        let _ = writeln!(md, "| Intent | `{intent}` |");
    }
    let _ = writeln!(md, "| Workspace | {} |", hook.workspace_id);
    let _ = writeln!(md, "| Created | {} |", stamp(hook.created_at));
    let _ = writeln!(
        md,
        "| Updated | {} ({} ago) |",
        stamp(hook.updated_at),
        ago(now, hook.updated_at)
    );
    if let Some(s) = hook.session() {
        let _ = writeln!(md, "| Session | `{}` ({:?}) |", s.session_id, s.status);
    }

    let _ = writeln!(md, "\n## Current State\n");
    let _ = writeln!(md, "- **State:** `{}`", hook.state);
    match &hook.current_step {
        Some(c) => {
            let _ = writeln!(
                md,
                "- **Step:** {} of {} — \"{}\" (id `{}`)",
                c.step_index + 1,
                outline.step_count.max(c.step_index + 1),
                c.step_name,
                c.step_id
            );
            let _ = writeln!(md, "- **Attempt:** {} of {}", c.attempt, c.max_attempts);
            let _ = writeln!(
                md,
                "- **Step started:** {} ({} ago)",
                stamp(c.started_at),
                ago(now, c.started_at)
            );
        }
        None => {
            let _ = writeln!(md, "- **Step:** none running");
        }
    }
    if let Some(r) = &hook.recovery {
        let _ = writeln!(
            md,
            "- **Crash detected:** {} — type `{}`, last state `{}`, recommended action **`{}`**: {}",
            stamp(r.detected_at),
            r.crash_type,
            r.last_known_state,
            r.recommended_action,
            r.reason
        );
    }

    let _ = writeln!(md, "\n## What You Were Doing\n");
    match hook.working_on() {
        Some(w) => {
            let _ = writeln!(md, "- **Working on:** {}", one_line(&truncate(w, 300)));
        }
        None => {
            let _ = writeln!(md, "- **Working on:** (not recorded)");
        }
    }
    if hook.current_step.is_none() && !hook.unassigned_files.is_empty() {
        let _ = writeln!(md, "- **Files touched between steps:**");
        for f in &hook.unassigned_files {
            let _ = writeln!(md, "  - `{f}`");
        }
    }
    if let Some(c) = &hook.current_step {
        if c.files_touched.is_empty() {
            let _ = writeln!(md, "- **Files touched in this step:** none yet");
        } else {
            let _ = writeln!(md, "- **Files touched in this step:**");
            for f in &c.files_touched {
                let _ = writeln!(md, "  - `{f}`");
            }
        }
        if !c.last_output.is_empty() {
            let _ = writeln!(
                md,
                "- **Last output:**\n\n```text\n{}\n```",
                c.last_output.replace("```", "'''")
            );
        }
    }
    if let Some(changed) = hook.recovery.as_ref().and_then(|r| r.changed.as_ref()) {
        let _ = writeln!(
            md,
            "- **Changed since the last checkpoint's commit:** {changed}"
        );
    }
    let rewound = crate::recovery::guidance::rewound(hook, now)
        .into_iter()
        .chain(crate::recovery::guidance::conversation_rewound(hook, now));
    for line in rewound.into_iter().chain(facts(hook, now)) {
        // Output lines (`  | …`) become a quoted block under their item.
        let _ = writeln!(md, "- {}", line.replace("\n  | ", "\n  > "));
    }
    if let Some(summary) = &hook.compact_summary {
        let _ = writeln!(
            md,
            "- **Last compaction summary:** {}",
            one_line(&truncate(summary, 600))
        );
    }

    let _ = writeln!(md, "\n## What To Do Now\n");
    for (i, line) in g.todo.iter().enumerate() {
        // The files are listed under What You Were Doing, just above: once is enough (31
        // of them took a second kilobyte of the page, and of what every save redacts).
        let text = if line.lists_files {
            FILES_ABOVE
        } else {
            &line.text
        };
        let _ = writeln!(md, "{}. {text}", i + 1);
    }

    let _ = writeln!(md, "\n## DO NOT\n");
    for line in &g.do_not {
        let _ = writeln!(md, "- {line}");
    }

    md
}

/// The newest receipts' section (none without receipts). Only the newest receipts and
/// checkpoints, which hook.json keeps: a task's whole history of them is `waymark
/// receipts` / `waymark checkpoints`, and reading its logs on every save would make a long
/// task's every change dearer.
pub fn receipts(hook: &Hook) -> String {
    let mut md = String::new();
    let recent = &hook.recent_receipts;
    if !recent.is_empty() {
        let _ = writeln!(md, "{RECEIPTS}");
        let _ = writeln!(
            md,
            "| Receipt | Step | Command | Exit | Duration | Kind |\n|---|---|---|---|---|---|"
        );
        for r in recent.iter().rev() {
            let _ = writeln!(
                md,
                "| `{}` | {} | `{}` | {} | {} | {} |",
                r.receipt_id,
                one_line(&r.step_name).replace('|', "\\|"),
                one_line(&truncate(&r.command, 60)).replace('|', "\\|"),
                r.exit_code,
                r.duration,
                if r.observed {
                    "observed"
                } else {
                    "ran by waymark"
                }
            );
        }
    }

    md
}

/// The newest checkpoints' section: of `recent_checkpoints` and `checkpoint_count`, which
/// only a new checkpoint changes (and `recent_checkpoints` with it).
pub fn checkpoints(hook: &Hook) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "{CHECKPOINTS}");
    let checkpoints = &hook.recent_checkpoints;
    if checkpoints.is_empty() {
        let _ = writeln!(md, "No checkpoint yet.");
    } else {
        let earlier = (hook.checkpoint_count as usize).saturating_sub(checkpoints.len());
        if earlier > 0 {
            let _ = writeln!(
                md,
                "({earlier} earlier: `waymark checkpoints` lists every one.)\n"
            );
        }
        for c in checkpoints.iter() {
            let commit = c
                .git_commit
                .as_deref()
                .map(|h| format!(" @ `{}`", prefix(h, 12)))
                .unwrap_or_default();
            let _ = writeln!(
                md,
                "- {} `{}` **{}** — {} (step \"{}\"){}",
                stamp(c.created_at),
                c.checkpoint_id,
                c.trigger.as_str(),
                one_line(&truncate(&c.description, 120)),
                one_line(&c.step_name),
                commit,
            );
        }
    }

    md
}

/// HOOK.md after its block: where to look next.
pub fn tail(hook: &Hook) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "{TROUBLESHOOTING}");
    let _ = writeln!(
        md,
        "- `waymark status` — state, step, attempt, checkpoints, receipts"
    );
    let _ = writeln!(
        md,
        "- `waymark recover` — run crash detection now and print the resume brief"
    );
    let _ = writeln!(
        md,
        "- `waymark checkpoints` — every checkpoint with its trigger and files"
    );
    let _ = writeln!(
        md,
        "- `waymark receipts --verify` — check every receipt's signature"
    );
    let _ = writeln!(
        md,
        "- `waymark step start|done|fail <step>` — move a step by hand"
    );
    let _ = writeln!(
        md,
        "- `waymark regenerate` — rebuild this file from hook.json"
    );
    let _ = writeln!(
        md,
        "- `git status` / `git diff` — compare the files listed above with the last checkpoint"
    );
    let _ = writeln!(
        md,
        "- The task's history ({}), checkpoints and receipts: `.orchestration/tasks/{}/`",
        crate::text::count(hook.history_count, "event"),
        crate::task::store::sanitize(&hook.task_id)
    );
    md
}

/// HOOK.md's listing of the plan: the Completed Steps table and the Step Plan. A function
/// of the steps alone, so that a save that leaves the plan alone takes it back from the
/// HOOK.md it wrote. The table names each step's receipts by id: what each ran and how it
/// ended is in Validation Receipts (the newest) and in `waymark receipts` (every one).
pub fn listing(steps: &Steps) -> String {
    match relisting(steps, None).as_slice() {
        [Part::New(md)] => md.clone(),
        _ => unreachable!("with nothing read back, every line is rendered"),
    }
}

/// [`listing`] in parts: each line of a step still as read is taken from `before`, the
/// listing of the plan as read (its sum proves it), rather than rendered, so that a change
/// to one step of a hundred renders and redacts that step's lines alone. With no `before`,
/// or one that does not line up with the plan as read, every line is rendered.
pub fn relisting(steps: &Steps, before: Option<&str>) -> Vec<Part> {
    let before = before.and_then(|text| Before::of(text, steps));
    let mut parts = Parts::default();
    parts.text().push_str(LISTING);
    parts.text().push('\n');
    let statuses: Vec<StepStatus> = steps.statuses().collect();
    if !statuses.contains(&StepStatus::Completed) {
        parts.text().push_str("None yet.\n");
    } else {
        parts.text().push_str(TABLE_HEAD);
        let mut row_read = 0..;
        for (i, &status) in statuses.iter().enumerate() {
            let (read, unchanged) = steps.as_read(i);
            let row = (read == Some(StepStatus::Completed)).then(|| row_read.next());
            match (&before, row.flatten()) {
                _ if status != StepStatus::Completed => {}
                (Some(b), Some(r)) if unchanged => parts.keep(b.rows[r].clone()),
                _ => done_row(parts.text(), &steps[i]),
            }
        }
    }
    parts.text().push_str(PLAN_HEAD);
    if steps.is_empty() {
        parts.text().push_str("No steps planned.\n");
    }
    for i in 0..statuses.len() {
        match (&before, steps.as_read(i)) {
            (Some(b), (Some(_), true)) => parts.keep(b.plan[i].clone()),
            _ => plan_line(parts.text(), &steps[i]),
        }
    }
    parts.0
}

/// The Completed Steps table's head, and the Step Plan's.
const TABLE_HEAD: &str = "| # | Step | Completed | Attempts | Receipts |\n|---|---|---|---|---|\n";
const PLAN_HEAD: &str = "\n## Step Plan\n\n";

/// A completed step's row of the table.
fn done_row(md: &mut String, s: &Step) {
    let _ = write!(
        md,
        "| {} | {} | {} | {} | ",
        s.index + 1,
        one_line(&s.name).replace('|', "\\|"),
        s.completed_at.map(stamp).unwrap_or_default(),
        s.attempt.max(1),
    );
    if s.receipt_ids.is_empty() {
        md.push('—');
    }
    for (i, id) in s.receipt_ids.iter().enumerate() {
        let _ = write!(md, "{}`{id}`", if i > 0 { ", " } else { "" });
    }
    md.push_str(" |\n");
}

/// A step's line of the Step Plan.
fn plan_line(md: &mut String, s: &Step) {
    let mark = match s.status {
        StepStatus::Completed => "[x]",
        StepStatus::InProgress => "[>]",
        StepStatus::Failed => "[!]",
        StepStatus::Deleted => "[-]",
        StepStatus::Pending => "[ ]",
    };
    let _ = write!(
        md,
        "- {mark} {}. {} — {}",
        s.index + 1,
        one_line(&s.name),
        s.status.as_str()
    );
    if s.attempt > 0 {
        let _ = write!(md, ", attempt {}", s.attempt);
    }
    md.push('\n');
}

/// The listing as parts, new text run together.
#[derive(Default)]
struct Parts(Vec<Part>);

impl Parts {
    /// The new text at the end, to write to.
    fn text(&mut self) -> &mut String {
        if !matches!(self.0.last(), Some(Part::New(_))) {
            self.0.push(Part::New(String::with_capacity(256)));
        }
        match self.0.last_mut() {
            Some(Part::New(md)) => md,
            _ => unreachable!("pushed above"),
        }
    }

    fn keep(&mut self, line: Range<usize>) {
        match self.0.last_mut() {
            Some(Part::Kept(r)) if r.end == line.start => r.end = line.end,
            _ => self.0.push(Part::Kept(line)),
        }
    }
}

/// A listing read back, line by line: its table's rows and its plan's lines, each a step
/// of the plan as read (every name is one line).
struct Before {
    rows: Vec<Range<usize>>,
    plan: Vec<Range<usize>>,
}

impl Before {
    /// `text`'s lines, when they are as many as the plan as read has completed steps and
    /// steps.
    fn of(text: &str, steps: &Steps) -> Option<Before> {
        let start = LISTING.len() + 1;
        let body = text.get(start..)?;
        let split = start + body.find(PLAN_HEAD)?;
        let lines = |range: Range<usize>, none: &str| -> Option<Vec<Range<usize>>> {
            let region = &text[range.clone()];
            if region == none {
                return Some(Vec::new());
            }
            let mut from = range.start;
            let lines = crate::text::newlines(region.as_bytes()).map(|i| {
                let line = from..range.start + i + 1;
                from = line.end;
                line
            });
            let lines: Vec<_> = lines.collect();
            (from == range.end).then_some(lines)
        };
        let table = text[start..split].strip_prefix(TABLE_HEAD);
        let rows = lines(
            table.map_or(start, |rows| split - rows.len())..split,
            "None yet.\n",
        )?;
        let plan = lines(split + PLAN_HEAD.len()..text.len(), "No steps planned.\n")?;
        let read: Vec<Option<StepStatus>> = (0..steps.len()).map(|i| steps.as_read(i).0).collect();
        let done = read
            .iter()
            .filter(|s| **s == Some(StepStatus::Completed))
            .count();
        let listed = read.iter().filter(|s| s.is_some()).count();
        (rows.len() == done && plan.len() == listed).then_some(Before { rows, plan })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stands_alone() {
        let now = Utc::now();
        let h = crate::task::testing::recorded_plan(now);
        let md = render(&h, now);
        for section in [
            "## Current State",
            "## What You Were Doing",
            "## What To Do Now",
            "## DO NOT",
            "## Completed Steps — DO NOT REPEAT",
            "## Checkpoint Timeline",
            "## Troubleshooting",
        ] {
            assert!(md.contains(section), "{section}");
        }
        assert!(md.contains("Resume step 2 \"Implement fix\" (attempt 1 of 3)"));
        assert!(md.contains("Do not repeat step 1 \"Analyze parser\""));
        assert!(md.contains("`src/parser.rs`"));
        assert_eq!(
            md.matches("src/parser.rs").count(),
            1,
            "the running step's files are listed once: {md}"
        );
        assert!(md.contains(FILES_ABOVE));
        assert!(md.contains("No checkpoint yet."));
        // The block is found where it stands, whole, and the listing within it.
        let found = find_block(md.as_bytes()).unwrap();
        assert_eq!(md[found.block()], block(&h));
        let listing = listing(&h.steps);
        assert_eq!(&md[found.listing], listing);
        assert!(listing.contains("## Step Plan") && listing.ends_with("— pending\n"));
    }

    /// Every line of the block's sections is one line of its own, whatever the names it
    /// shows hold: a name written like a heading is never taken for one, so the parts a
    /// save takes back are the ones it rendered.
    #[test]
    fn a_name_like_a_heading_does_not_split_the_block() {
        let now = Utc::now();
        let mut h = crate::task::testing::recorded_plan(now);
        let name = "Parse\n## Checkpoint Timeline\n## Troubleshooting\nmore";
        h.recent_receipts.push(crate::task::ReceiptSummary {
            receipt_id: "rcpt-1".into(),
            step_name: name.into(),
            command: "cargo test\n## Validation Receipts".into(),
            exit_code: 0,
            duration: "1s".into(),
            observed: false,
            completed_at: now,
        });
        let head = crate::git::head::Head::default();
        let mut cp = crate::task::checkpoint::build(
            &h,
            crate::task::CheckpointTrigger::Manual,
            name,
            None,
            head,
            now,
        );
        cp.step_name = name.into();
        // A commit edited by hand into anything is cut by characters, not bytes.
        cp.git_commit = Some("ééééééééééééééé".into());
        h.push_checkpoint(cp);
        let md = render(&h, now);
        assert!(md.contains(" @ `éééééééééééé`"), "{md}");
        let found = find_block(md.as_bytes()).unwrap();
        assert!(md[found.block().end..].starts_with(TROUBLESHOOTING));
        assert_eq!(md[found.listing], listing(&h.steps));
        assert_eq!(md[found.receipts], receipts(&h));
        assert_eq!(md[found.checkpoints], checkpoints(&h));
    }
}
