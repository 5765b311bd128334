//! HOOK.md: the recovery file, rendered from the hook alone (docs/design.md, HOOK.md
//! sections).
//!
//! It must stand alone: an agent that reads nothing else learns which step to resume, which
//! attempt that is, what not to repeat and how to check its ground.

use std::fmt::Write;

use crate::recovery::guidance::{Guidance, facts, guidance};
use crate::task::outline::number;
use crate::task::{Hook, Outline, Step, StepSource, StepStatus};
use crate::text::{one_line, prefix, stamp, truncate};

/// The whole recovery file, unredacted (the store redacts what it writes). A function of
/// the task alone, with no "ago" in it: a file read hours later must not say "0s ago", and
/// a page that only the task changes is rewritten only when the task does.
pub fn render(hook: &Hook) -> String {
    // Built from inert strings only (`inert`): no stored string starts a line of its own.
    let hook = &*super::inert::view(hook);
    let body = head(hook) + &listing(&hook.steps) + &receipts(hook) + &checkpoints(hook);
    bounded(body, &tail(hook))
}

/// The most bytes HOOK.md holds: a plan of 1,000 steps fits several times over.
pub const MAX_HOOK_MD: usize = 1 << 20;

/// HOOK.md within [`MAX_HOOK_MD`], as the brief is within its cap: past it the body is cut
/// (its head first, what to do now included, is kept) and the Troubleshooting section
/// stays whole at the end.
fn bounded(body: String, tail: &str) -> String {
    if body.len() + tail.len() <= MAX_HOOK_MD {
        return body + tail;
    }
    const CUT: &str =
        "\n(HOOK.md cut at its bound: `waymark status` and `waymark log` have the rest)\n";
    let mut end = MAX_HOOK_MD - tail.len() - CUT.len();
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{CUT}{tail}", &body[..end])
}

/// What To Do Now's line for the files the running step changed, which What You Were Doing
/// lists.
const FILES_ABOVE: &str = "Read the files this step already changed (listed under What You Were Doing) before editing them again.";

/// HOOK.md's first sections: the task, its state, what it was doing, what to do now.
fn head(hook: &Hook) -> String {
    let mut md = String::with_capacity(4096);
    let outline = hook.outline();
    let g = guidance(hook, &outline);
    title(&mut md, hook);
    current_state(&mut md, hook, &outline);
    what_you_were_doing(&mut md, hook);
    what_to_do_now(&mut md, &g);
    md
}

/// The title, what this file is, and the table of the task's ids and times.
fn title(md: &mut String, hook: &Hook) {
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
    let _ = writeln!(md, "| Updated | {} |", stamp(hook.updated_at));
    if let Some(s) = hook.session() {
        let _ = writeln!(md, "| Session | `{}` ({:?}) |", s.session_id, s.status);
    }
}

/// Current State: the state, the running step and its attempt, and the crash detected.
fn current_state(md: &mut String, hook: &Hook, outline: &Outline) {
    let _ = writeln!(md, "\n## Current State\n");
    let _ = writeln!(md, "- **State:** `{}`", hook.state);
    match &hook.current_step {
        Some(_) if hook.unplanned() => md.push_str("- **Step:** none: no plan was kept\n"),
        Some(c) => {
            let _ = writeln!(
                md,
                "- **Step:** {} of {} — \"{}\" (id `{}`)",
                number(&hook.steps, c.step_index),
                outline.step_count.max(number(&hook.steps, c.step_index)),
                c.step_name,
                c.step_id
            );
            let _ = writeln!(md, "- **Attempt:** {} of {}", c.attempt, c.max_attempts);
            let _ = writeln!(md, "- **Step started:** {}", stamp(c.started_at));
        }
        None => md.push_str("- **Step:** none running\n"),
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
}

/// What You Were Doing: the work, the files touched, what changed since the last
/// checkpoint, the rewinds and facts the brief shares, and the last compaction's summary.
fn what_you_were_doing(md: &mut String, hook: &Hook) {
    let _ = writeln!(md, "\n## What You Were Doing\n");
    let asked = crate::recovery::guidance::what_was_asked(hook);
    if asked.is_empty() {
        let _ = writeln!(md, "- **Working on:** (not recorded)");
    }
    for (label, words) in asked {
        let _ = writeln!(md, "- **{label}:** {}", one_line(&truncate(words, 300)));
    }
    files_touched(md, hook);
    if let Some(r) = &hook.recovery
        && let Some(changed) = r.changed_words()
    {
        let _ = writeln!(md, "- **Changed since {}:** {changed}", r.changed_since());
    }
    let rewound = crate::recovery::guidance::rewound(hook, None)
        .into_iter()
        .chain(crate::recovery::guidance::conversation_rewound(hook, None));
    for line in rewound.into_iter().chain(facts(hook, None)) {
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
}

/// How many files of a list HOOK.md names; the rest are counted (hook.json lists them).
const SHOWN_FILES: usize = 50;

/// A list of files, the first [`SHOWN_FILES`] named, and whether the list is full.
fn file_list(md: &mut String, files: &[String]) {
    for f in files.iter().take(SHOWN_FILES) {
        let _ = writeln!(md, "  - `{f}`");
    }
    let more = files.len().saturating_sub(SHOWN_FILES);
    if more > 0 {
        let _ = writeln!(
            md,
            "  - … and {} (hook.json lists them)",
            crate::text::count(more as u64, "more file")
        );
    }
    if files.len() >= crate::task::bounds::MAX_STEP_FILES {
        let _ = writeln!(
            md,
            "  - (the list keeps a step's first {} files: later ones are not listed)",
            crate::task::bounds::MAX_STEP_FILES
        );
    }
}

/// The files touched between steps (while none runs), else the running step's files and
/// its last output.
fn files_touched(md: &mut String, hook: &Hook) {
    if hook.current_step.is_none() && !hook.unassigned_files.is_empty() {
        let _ = writeln!(md, "- **Files touched between steps:**");
        file_list(md, &hook.unassigned_files);
    }
    let Some(c) = &hook.current_step else {
        return;
    };
    if c.files_touched.is_empty() {
        let _ = writeln!(md, "- **Files touched in this step:** none yet");
    } else {
        let _ = writeln!(md, "- **Files touched in this step:**");
        file_list(md, &c.files_touched);
    }
    if !c.last_output.is_empty() {
        let _ = writeln!(
            md,
            "- **Last output:**\n\n```text\n{}\n```",
            c.last_output.replace("```", "'''")
        );
    }
}

/// What To Do Now, numbered, and DO NOT.
fn what_to_do_now(md: &mut String, g: &Guidance) {
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
}

/// The newest receipts' section (none without receipts). Only the newest receipts and
/// checkpoints, which hook.json keeps: a task's whole history of them is `waymark
/// receipts` / `waymark checkpoints`, and reading its logs on every save would make a long
/// task's every change dearer.
fn receipts(hook: &Hook) -> String {
    let recent = &hook.recent_receipts;
    if recent.is_empty() {
        return String::new();
    }
    let mut md = String::from(
        "\n## Validation Receipts\n\n| Receipt | Step | Command | Exit | Duration | Kind |\n|---|---|---|---|---|---|\n",
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
    md
}

/// The newest checkpoints' section: of `recent_checkpoints` and `checkpoint_count`, which
/// only a new checkpoint changes (and `recent_checkpoints` with it).
fn checkpoints(hook: &Hook) -> String {
    let mut md = String::from("\n## Checkpoint Timeline\n\n");
    let checkpoints = &hook.recent_checkpoints;
    if checkpoints.is_empty() {
        return md + "No checkpoint yet.\n";
    }
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
    md
}

/// Troubleshooting's commands, each with what it is for.
const COMMANDS: [&str; 7] = [
    "`waymark status` — state, step, attempt, checkpoints, receipts",
    "`waymark recover` — run crash detection now and print the resume brief",
    "`waymark checkpoints` — every checkpoint with its trigger and files",
    "`waymark receipts --verify` — check every receipt's signature",
    "`waymark step start|done|fail <step>` — move a step by hand",
    "`waymark regenerate` — rebuild this file from hook.json",
    "`git status` / `git diff` — compare the files listed above with the last checkpoint",
];

/// HOOK.md after its block: where to look next.
fn tail(hook: &Hook) -> String {
    let mut md = String::from("\n## Troubleshooting\n\n");
    for command in COMMANDS {
        let _ = writeln!(md, "- {command}");
    }
    let _ = writeln!(
        md,
        "- The task's history ({}), checkpoints and receipts: `.orchestration/tasks/{}/`",
        crate::text::count(hook.history_count, "event"),
        crate::task::sanitize(&hook.task_id)
    );
    md
}

/// HOOK.md's listing of the plan: the Completed Steps table and the Step Plan. The table
/// names each step's receipts by id: what each ran and how it ended is in Validation
/// Receipts (the newest) and in `waymark receipts` (every one).
pub fn listing(steps: &[Step]) -> String {
    let mut md = String::with_capacity(256 + 64 * steps.len());
    md.push_str("\n## Completed Steps — DO NOT REPEAT\n\n");
    if !steps.iter().any(|s| s.status == StepStatus::Completed) {
        md.push_str("None yet.\n");
    } else {
        md.push_str("| # | Step | Completed | Attempts | Receipts |\n|---|---|---|---|---|\n");
        for s in steps.iter().filter(|s| s.status == StepStatus::Completed) {
            done_row(&mut md, s, number(steps, s.index));
        }
    }
    md.push_str("\n## Step Plan\n\n");
    // The catch-all for work with no plan is not a step of the user's: it is not listed.
    let planned = || steps.iter().filter(|s| s.source != StepSource::Implicit);
    if steps.is_empty() {
        md.push_str("No steps planned.\n");
    } else if planned().all(|s| s.status == StepStatus::Deleted) {
        md.push_str("No plan was kept: the work is the user's request, not split into steps.\n");
    }
    for s in planned() {
        plan_line(&mut md, s, number(steps, s.index));
    }
    md
}

/// A completed step's row of the table.
fn done_row(md: &mut String, s: &Step, n: usize) {
    let _ = write!(
        md,
        "| {n} | {} | {} | {} | ",
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

/// A step's line of the Step Plan: numbered ([`number`]) but when deleted.
fn plan_line(md: &mut String, s: &Step, n: usize) {
    let mark = match s.status {
        StepStatus::Completed => "[x]",
        StepStatus::InProgress => "[>]",
        StepStatus::Failed => "[!]",
        StepStatus::Deleted => "[-]",
        StepStatus::Pending => "[ ]",
    };
    let n = match s.status {
        StepStatus::Deleted => String::new(),
        _ => format!("{n}. "),
    };
    let _ = write!(
        md,
        "- {mark} {n}{} — {}",
        one_line(&s.name),
        s.status.as_str()
    );
    if s.attempt > 0 {
        let _ = write!(md, ", attempt {}", s.attempt);
    }
    md.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    /// A plan planted with huge step names (a repository's plan.json) gives a HOOK.md
    /// within its bound, whole at its ends.
    #[test]
    fn hook_md_is_bounded_whatever_the_plan_holds() {
        let now = Utc::now();
        let mut h = crate::task::testing::recorded_plan(now);
        for s in &mut h.steps {
            s.name = "x".repeat(10 << 20);
        }
        for i in 0..1000 {
            let id = format!("p{i}");
            h.add_step(&id, "planted", "", None, crate::task::StepSource::Task, now);
            h.steps.last_mut().unwrap().name = "long step ".repeat(1000);
        }
        let md = render(&h);
        assert!(md.contains("HOOK.md cut at its bound"));
        assert!(md.len() <= MAX_HOOK_MD, "{}", md.len());
        assert!(md.starts_with("# HOOK: "));
        assert!(
            md.trim_end().ends_with("`.orchestration/tasks/task-1/`"),
            "{}",
            &md[md.len() - 300..]
        );
        assert!(md.contains("## What To Do Now"));
    }

    #[test]
    fn stands_alone() {
        let now = Utc::now();
        let h = crate::task::testing::recorded_plan(now);
        let md = render(&h);
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
        assert!(
            !md.contains(" ago"),
            "a file is read later than it is written: {md}"
        );
        let listing = listing(&h.steps);
        assert!(md.contains(&listing));
        assert!(listing.contains("## Step Plan") && listing.ends_with("— pending\n"));
    }

    /// Every line of the sections is one line of its own, whatever the names it shows
    /// hold: a name written like a heading adds no heading.
    #[test]
    fn a_name_like_a_heading_stays_on_its_line() {
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
        let head = crate::task::checkpoint::Head::default();
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
        let md = render(&h);
        assert!(md.contains(" @ `éééééééééééé`"), "{md}");
        for heading in [
            "\n## Validation Receipts\n",
            "\n## Checkpoint Timeline\n",
            "\n## Troubleshooting\n",
        ] {
            assert_eq!(md.matches(heading).count(), 1, "{heading}: {md}");
        }
    }

    /// The files section: files touched between steps only while no step runs; the
    /// running step's files, or "none yet"; its last output only when there is one.
    #[test]
    fn the_files_section_shows_what_was_touched_where() {
        let now = Utc::now();
        let mut h = crate::task::testing::recorded_plan(now);
        h.unassigned_files = vec!["notes.md".into()];
        let md = render(&h);
        assert!(!md.contains("Files touched between steps"), "{md}");
        assert!(
            md.contains("- **Files touched in this step:**\n  - `src/parser.rs`"),
            "{md}"
        );
        assert!(!md.contains("**Last output:**"), "{md}");
        h.current_step.as_mut().unwrap().files_touched.clear();
        h.current_step.as_mut().unwrap().last_output = "3 passed".into();
        let md = render(&h);
        assert!(
            md.contains("- **Files touched in this step:** none yet"),
            "{md}"
        );
        assert!(
            md.contains("- **Last output:**\n\n```text\n3 passed\n```"),
            "{md}"
        );
        h.current_step = None;
        let md = render(&h);
        assert!(
            md.contains("- **Files touched between steps:**\n  - `notes.md`"),
            "{md}"
        );
        assert!(!md.contains("Files touched in this step"), "{md}");
        h.unassigned_files.clear();
        assert!(!render(&h).contains("Files touched between steps"));
    }

    /// The title names the task, and the checkpoints section counts the earlier
    /// checkpoints no longer at hand, only when there are some.
    #[test]
    fn the_title_and_the_earlier_checkpoints_are_told() {
        let now = Utc::now();
        let mut h = crate::task::testing::recorded_plan(now);
        let cp = |i: usize| crate::task::StepCheckpoint {
            checkpoint_id: format!("ckpt-{i}"),
            created_at: now,
            step_name: "Implement fix".into(),
            step_index: 1,
            description: format!("c{i}"),
            trigger: crate::task::CheckpointTrigger::Manual,
            git_branch: String::new(),
            git_commit: None,
            artifacts: Vec::new(),
        };
        h.recent_checkpoints = vec![cp(1), cp(2)];
        h.checkpoint_count = 2;
        let md = render(&h);
        assert!(md.starts_with(&format!("# HOOK: {}\n", h.task_id)), "{md}");
        assert!(!md.contains("earlier: `waymark checkpoints`"), "{md}");
        h.checkpoint_count = 3;
        let md = render(&h);
        assert!(
            md.contains("(1 earlier: `waymark checkpoints` lists every one.)"),
            "{md}"
        );
    }

    /// The listing: "None yet." until a step is completed, then its row; a step's attempt
    /// only once it has one.
    #[test]
    fn the_listing_shows_completed_steps_and_attempts() {
        let now = Utc::now();
        let h = crate::task::testing::recorded_steps(now);
        let md = listing(&h.steps);
        assert!(md.contains("None yet."), "{md}");
        assert!(!md.contains(", attempt"), "{md}");
        let h = crate::task::testing::recorded_plan(now);
        let md = listing(&h.steps);
        assert!(!md.contains("None yet."), "{md}");
        assert!(md.contains("Analyze parser"), "{md}");
        assert!(
            md.contains("2. Implement fix — in_progress, attempt 1\n"),
            "{md}"
        );
        assert!(md.contains("3. Validate — pending\n"), "{md}");
    }
}
