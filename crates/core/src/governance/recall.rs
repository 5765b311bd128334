//! The shared brain read back (docs/governance.md, "How lessons reach the next agent"):
//! neither Claude Code nor Codex CLI reads `AGENT.md`, so the lessons that bear on the work
//! come to the agent with the session's start, ranked, deduplicated and bounded, and a
//! verification lesson whose command has passed since is settled and shown no more.
//!
//! A lesson is one block of AGENT.md's `## Lessons Learned` ([`super::brain`]); what the
//! agent is shown of it is one line, inert (a lesson is the repository's text: it cannot
//! add a line of waymark's own) and redacted.

use chrono::{DateTime, Utc};

use super::brain::{SECTION, heading};
use crate::text::{inert, one_line, truncate};

/// One lesson as AGENT.md holds it, borrowed from its text: a file of thousands of
/// lessons is read with no copy of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Noted<'a> {
    pub date: &'a str,
    pub title: &'a str,
    pub issue: &'a str,
    pub solution: &'a str,
    pub intent: Option<&'a str>,
    pub category: &'a str,
    pub seen: u64,
    /// `**Settled**: …`: its command passed since.
    pub settled: Option<&'a str>,
}

/// The field line of a settled lesson.
const SETTLED: &str = "**Settled**: ";

/// The title of the lesson a failed validation of `command` leaves: one title for the
/// lesson written and the lesson settled.
pub fn verification_title(command: &str) -> String {
    let cmd = truncate(&one_line(command), 200);
    format!("Verification failed: {}", truncate(&cmd, 80))
}

/// The lessons of AGENT.md's text, in the file's order (the newest last); what a fenced
/// block quotes is never read as a lesson.
pub fn lessons(text: &str) -> Vec<Noted<'_>> {
    let mut out: Vec<Noted> = Vec::new();
    let mut in_section = false;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // What a fence quotes is a tool's output, never a lesson (brain's reading of fences).
    let quoted = super::brain::fenced(&lines);
    for (line, _) in lines.iter().zip(quoted).filter(|(_, q)| !q) {
        let trimmed = line.trim_end();
        if trimmed.starts_with("## ") || trimmed.starts_with("# ") {
            in_section = trimmed == SECTION;
            continue;
        }
        if !in_section {
            continue;
        }
        if let Some((date, title)) = heading(trimmed) {
            out.push(Noted {
                date,
                title,
                seen: 1,
                ..Noted::default()
            });
            continue;
        }
        if let Some(n) = out.last_mut() {
            field(n, trimmed);
        }
    }
    out
}

/// Reads one field line into the lesson it belongs to.
fn field<'a>(n: &mut Noted<'a>, line: &'a str) {
    let value = |prefix: &str| line.strip_prefix(prefix);
    if let Some(v) = value("**Issue**: ") {
        n.issue = v;
    } else if let Some(v) = value("**Solution**: ") {
        n.solution = v;
    } else if let Some(v) = value("**Related Intent**: ") {
        n.intent = (v != "none").then_some(v);
    } else if let Some(v) = value("**Category**: ") {
        n.category = v;
    } else if let Some(v) = value("**Seen**: ") {
        n.seen = v.trim_end_matches(" times").parse().unwrap_or(1);
    } else if let Some(v) = value(SETTLED) {
        n.settled = Some(v);
    }
}

/// What the coming work is about: what a lesson that bears on it names.
#[derive(Debug, Default, Clone)]
pub struct About {
    pub intent: Option<String>,
    /// Files of the current work, and the commands it ran (its validations).
    pub words: Vec<String>,
}

/// The header of what the agent is shown.
pub const HEADER: &str =
    "[waymark] Lessons from earlier work (AGENT.md), the ones that bear on this work first:";

/// The lessons the next agent is shown, within `max_chars`: those that bear on the work
/// (its intent, its files and commands) first, then the newest and most often seen; one
/// of each title; none settled. `None` when there is none to show or no room.
pub fn recall(text: &str, about: &About, max_chars: usize) -> Option<String> {
    let all = lessons(text);
    let bears = |n: &Noted| {
        let named = |w: &String| {
            !w.is_empty() && (n.title.contains(w.as_str()) || n.issue.contains(w.as_str()))
        };
        let intent = about.intent.is_some() && n.intent == about.intent.as_deref();
        2 * u32::from(intent) + u32::from(about.words.iter().any(named))
    };
    // Each lesson's rank is reckoned once, and the ranks sorted, not the lessons: a file
    // of thousands of lessons costs one pass (the lessons' benchmark: 8 ms a start).
    let mut ranked: Vec<(u32, &str, u64, usize)> = all
        .iter()
        .enumerate()
        .filter(|(_, n)| n.settled.is_none())
        .map(|(i, n)| (bears(n), n.date, n.seen, i))
        .collect();
    ranked.sort_unstable_by(|a, b| b.cmp(a));
    let mut seen_titles: Vec<&str> = Vec::new();
    let mut body = String::new();
    let mut shown = 0;
    for n in ranked.iter().map(|r| &all[r.3]) {
        if seen_titles.contains(&n.title) {
            continue;
        }
        seen_titles.push(n.title);
        let line = format!("\n- {}", shown_line(n));
        if HEADER.chars().count() + body.chars().count() + line.chars().count() > max_chars {
            break;
        }
        body.push_str(&line);
        shown += 1;
    }
    (shown > 0).then(|| format!("{HEADER}{body}"))
}

/// One lesson on one line, inert and bounded.
fn shown_line(n: &Noted) -> String {
    let seen = match n.seen {
        0 | 1 => String::new(),
        k => format!(", seen {k} times"),
    };
    let text = format!(
        "{} ({}, {}{seen}): {} {}",
        n.title, n.category, n.date, n.issue, n.solution
    );
    let redacted = waymark_redact::redact(&text);
    inert(&truncate(&one_line(&redacted), 320), false).into_owned()
}

/// AGENT.md's `text` with each unsettled verification lesson of `command` settled: its
/// command passed since, with receipt `receipt`. `None` when there is none to settle.
pub fn settled(text: &str, command: &str, receipt: &str, now: DateTime<Utc>) -> Option<String> {
    let title = verification_title(command);
    // Nearly always no lesson names the command: one search, no copy of the file.
    if !text.contains(&title) {
        return None;
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::with_capacity(text.len() + 80);
    let mut changed = false;
    let mut i = 0;
    while i < lines.len() {
        out.push_str(lines[i]);
        let ours = heading(lines[i]).is_some_and(|(_, t)| t == title);
        i += 1;
        if !ours {
            continue;
        }
        let end = (i..lines.len())
            .find(|&m| lines[m].starts_with('#') || lines[m].trim().is_empty())
            .unwrap_or(lines.len());
        let block = &lines[i..end];
        let verification = block
            .iter()
            .any(|l| l.trim_end() == "**Category**: verification-failure");
        let already = block.iter().any(|l| l.starts_with(SETTLED));
        out.push_str(&block.concat());
        if verification && !already {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&format!(
                "{SETTLED}passed since ({receipt}, {})\n",
                now.format("%Y-%m-%d")
            ));
            changed = true;
        }
        i = end;
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::governance::brain::{Category, with_lesson};
    use crate::governance::testing::{lesson, lesson_day as now};

    fn file(titles: &[(&str, Category)]) -> String {
        let mut text = "# Agents\n\nRules.\n".to_string();
        for (t, c) in titles {
            text = with_lesson(&text, &lesson(t, *c), now()).0;
        }
        text
    }

    /// Only the Lessons Learned section holds lessons: a heading of another section ends
    /// it, whatever its level.
    #[test]
    fn only_the_lessons_section_is_read() {
        for next in ["## Other", "# Other"] {
            let text = format!(
                "### 2026-01-01: before\n## Lessons Learned\n\n### 2026-01-02: in\n**Category**: governance\n\n{next}\n\n### 2026-01-03: after\n"
            );
            let titles: Vec<&str> = lessons(&text).into_iter().map(|n| n.title).collect();
            assert_eq!(titles, ["in"], "{next}");
        }
    }

    #[test]
    fn lessons_are_read_back_as_written_and_quoted_output_is_not_one() {
        let mut text = file(&[("one", Category::Governance)]);
        let mut failing = lesson(
            "Verification failed: make test",
            Category::VerificationFailure,
        );
        failing.detail = Some("### 2026-01-01: not a lesson\n**Issue**: quoted".into());
        text = with_lesson(&text, &failing, now()).0;
        text = with_lesson(&text, &failing, now()).0;
        let read = lessons(&text);
        assert_eq!(read.len(), 2, "{read:#?}");
        assert_eq!(read[0].title, "one");
        assert_eq!((read[1].seen, read[1].intent), (2, Some("INT-001")));
        assert_eq!(read[1].category, "verification-failure");
    }

    /// Hundreds of lessons: what bears on the work first, one of each title, within the
    /// bound, each on one line of its own.
    #[test]
    fn the_lessons_that_bear_on_the_work_come_first_within_the_bound() {
        let mut titles: Vec<(String, Category)> = (0..300)
            .map(|i| {
                (
                    format!("Permission denied: Write src/other_{i}.rs"),
                    Category::Governance,
                )
            })
            .collect();
        titles.insert(
            5,
            (
                "Verification failed: ./check.sh".into(),
                Category::VerificationFailure,
            ),
        );
        let refs: Vec<(&str, Category)> = titles.iter().map(|(t, c)| (t.as_str(), *c)).collect();
        let text = file(&refs);
        let about = About {
            intent: None,
            words: vec!["./check.sh".into()],
        };
        let shown = recall(&text, &about, 1000).unwrap();
        assert!(shown.chars().count() <= 1000, "{}", shown.chars().count());
        let first = shown.lines().nth(1).unwrap();
        assert!(
            first.starts_with("- Verification failed: ./check.sh"),
            "{shown}"
        );
        // Then the newest.
        assert!(
            shown.lines().nth(2).unwrap().contains("other_299"),
            "{shown}"
        );
        assert!(
            shown.lines().skip(1).all(|l| l.starts_with("- ")),
            "{shown}"
        );
        assert_eq!(recall("# nothing here\n", &about, 1000), None);
        assert_eq!(recall(&text, &about, 10), None);
    }

    /// What bears on the work comes first: the task's intent before a file or command
    /// named, either before the newest; a lesson with no intent is not the intent's for a
    /// task with none. The bound is exact.
    #[test]
    fn the_intent_outranks_a_word_and_the_bound_is_exact() {
        let noted = |title: &str, intent: &str| {
            format!(
                "### 2026-01-0{}: {title}\n**Issue**: x\n**Solution**: y\n**Related Intent**: {intent}\n**Category**: governance\n\n",
                title.len() % 9
            )
        };
        let text = format!(
            "## Lessons Learned\n\n{}{}{}",
            noted("by intent", "INT-2"),
            noted("names ./check.sh", "none"),
            noted("the newest of all", "INT-9"),
        );
        let about = About {
            intent: Some("INT-2".into()),
            words: vec!["./check.sh".into()],
        };
        let shown = recall(&text, &about, 4000).unwrap();
        let order: Vec<&str> = shown
            .lines()
            .skip(1)
            .map(|l| l.split(" (").next().unwrap())
            .collect();
        assert_eq!(
            order,
            ["- by intent", "- names ./check.sh", "- the newest of all"],
            "{shown}"
        );
        // A task with no intent: no lesson is its intent's, the newest comes first.
        let none = recall(&text, &About::default(), 4000).unwrap();
        assert!(
            none.lines()
                .nth(1)
                .unwrap()
                .starts_with("- the newest of all"),
            "{none}"
        );
        let one = "## Lessons Learned\n\n### 2026-01-01: one\n**Category**: governance\n";
        let whole = recall(one, &About::default(), 4000).unwrap();
        let len = whole.chars().count();
        assert_eq!(
            recall(one, &About::default(), len).as_deref(),
            Some(whole.as_str())
        );
        assert_eq!(recall(one, &About::default(), len - 1), None);
    }

    /// A lesson is the repository's text: it cannot start a line of waymark's own, act on
    /// a terminal, or carry a secret.
    #[test]
    fn a_lesson_is_shown_inert_and_redacted() {
        let key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWX";
        let text = format!(
            "## Lessons Learned\n\n### 2026-01-01: x\u{1b}[2J\u{e0041}\n**Issue**: leaked {key}\n**Solution**: none\n**Category**: governance\n"
        );
        let shown = recall(&text, &About::default(), 4000).unwrap();
        assert_eq!(shown.lines().count(), 2, "{shown}");
        assert!(
            !shown.lines().any(|l| l.chars().any(crate::text::acts)),
            "{shown:?}"
        );
        assert!(
            !shown.contains("abcdefghijklmnopqrstuvwxyz0123456789"),
            "{shown}"
        );
    }

    /// A verification lesson whose command passed since is settled and shown no more;
    /// failing again (the lesson counted again) unsettles it.
    #[test]
    fn a_settled_lesson_is_shown_no_more_until_it_fails_again() {
        let failing = lesson(
            &verification_title("make test"),
            Category::VerificationFailure,
        );
        let text = with_lesson(&file(&[("other", Category::Governance)]), &failing, now()).0;
        let settled_text = settled(&text, "make test", "rcpt-1", now()).unwrap();
        assert!(
            settled_text.contains("**Settled**: passed since (rcpt-1, 2026-02-21)"),
            "{settled_text}"
        );
        assert_eq!(
            settled(&settled_text, "make test", "rcpt-2", now()),
            None,
            "once"
        );
        assert_eq!(
            settled(&text, "cargo test", "rcpt-1", now()),
            None,
            "another command"
        );
        let shown = recall(&settled_text, &About::default(), 4000).unwrap();
        assert!(!shown.contains("make test"), "{shown}");
        // The Settled line ends the lesson's own block, before the next lesson.
        let next_at = settled_text
            .find("### 2026-02-21: other")
            .unwrap_or(usize::MAX);
        let after = with_lesson(&text, &lesson("later", Category::Governance), now()).0;
        let settled_before = settled(&after, "make test", "rcpt-1", now()).unwrap();
        let (at, later) = (
            settled_before.find("**Settled**").unwrap(),
            settled_before.find(": later").unwrap(),
        );
        assert!(at < later, "{settled_before}");
        assert!(next_at < at, "{settled_text}");
        // Another command's verification lesson beside it stays as it is.
        let cargo = lesson(
            &verification_title("cargo test"),
            Category::VerificationFailure,
        );
        let both = with_lesson(&text, &cargo, now()).0;
        let one_settled = settled(&both, "make test", "rcpt-1", now()).unwrap();
        assert_eq!(
            one_settled.matches("**Settled**").count(),
            1,
            "{one_settled}"
        );
        let cargo_at = one_settled.find("cargo test").unwrap();
        assert!(
            one_settled.find("**Settled**").unwrap() < cargo_at,
            "{one_settled}"
        );
        // A lesson of that title in another category is not the validation's.
        let other = lesson(&verification_title("make test"), Category::Governance);
        let not_ours = with_lesson("", &other, now()).0;
        assert_eq!(settled(&not_ours, "make test", "rcpt-1", now()), None);
        let again = with_lesson(&settled_text, &failing, now()).0;
        assert!(!again.contains("**Settled**"), "{again}");
        assert!(
            recall(&again, &About::default(), 4000)
                .unwrap()
                .contains("make test")
        );
    }
}
