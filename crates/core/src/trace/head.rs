//! The ledger's authenticated head: the chain alone can be forged by anyone who edits a
//! line and re-chains the lines after it, appends a record, or replays one. So each append
//! also writes, before its line, the head it makes (`.orchestration/trace.head`): how many
//! lines the ledger then has, the new line's link and the one before, under an HMAC with
//! a key derived from the user's master key. `waymark trace --verify` ([`check`]) then
//! proves, on the machine that holds the key, that the ledger up to the last record
//! written here is what was written, and that every line it did not write here came
//! through git (is in the committed ledger). A clone without the key and the head checks
//! the chain alone.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::chain::{Verified, short};

/// The key path the head's MAC key is derived with (a label of its own, never a task's).
pub const KEY_PATH: &str = "trace";

/// The head of the ledger as this machine last appended to it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceHead {
    /// How many lines the ledger has with the record appended.
    pub count: u64,
    /// The record's link (the SHA-256 of its line).
    pub link: String,
    /// The link of the line before it ("" for the first).
    pub prev: String,
    /// Hex HMAC-SHA256 of [`TraceHead::message`]; empty when no key was usable.
    #[serde(default)]
    pub mac: String,
}

impl TraceHead {
    /// The head after `line` (without its newline) is appended to a ledger whose last line
    /// has the link `prev` and whose head was `before`: counted on from `before` when it
    /// names that last line, else from `count_now` (the caller counts the lines, rarely:
    /// only after lines came from elsewhere).
    pub fn after(
        before: Option<&TraceHead>,
        prev: &str,
        line: &[u8],
        count_now: impl FnOnce() -> u64,
    ) -> TraceHead {
        let count = match before {
            Some(b) if b.link == prev => b.count,
            _ => count_now(),
        };
        TraceHead {
            count: count + 1,
            link: super::link(line),
            prev: prev.to_string(),
            mac: String::new(),
        }
    }

    /// The authenticated bytes: `waymark-trace-head/1` then the fields as
    /// `name:<byte length>:<value>` lines (the receipts' encoding).
    pub fn message(&self) -> Vec<u8> {
        let count = self.count.to_string();
        crate::receipt::fields_message(
            "waymark-trace-head/1",
            &[
                ("count", &count),
                ("link", &self.link),
                ("prev", &self.prev),
            ],
        )
    }
}

/// What the head says of the ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeadCheck {
    /// Lines 1..=`line` are what this machine wrote; every line after it, and every line
    /// joining an earlier one, is in the committed ledger.
    Holds { line: u64 },
    /// As `Holds`, but the record written last here is at `line`, not `count`: a merge put
    /// other records before it (they are in the committed ledger).
    Moved { count: u64, line: u64 },
    /// The head names a record never written: the last append was cut short between the
    /// head and its line (a kill), not tampering.
    Interrupted,
    /// The ledger is not what was written.
    Broken(String),
}

/// How many times each link is a line of a ledger (the committed one, for [`check`]).
pub type Lines = HashMap<u128, u32>;

/// The lines of a ledger's text, each link counted.
pub fn lines_of(text: &[u8]) -> Lines {
    let mut lines = Lines::new();
    for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let k = short(&super::link(line)).expect("a link is 64 hex digits");
        *lines.entry(k).or_default() += 1;
    }
    lines
}

/// Checks `head` (its MAC checked already) against the ledger as walked (`found`, whose
/// chain holds), given the lines of the committed ledger (`committed`; empty outside git).
/// A line not written here passes when git holds it as many times as the ledger does: a
/// record replayed beside its committed original does not.
pub fn check(head: &TraceHead, found: &Verified, committed: &Lines) -> HeadCheck {
    let links = &found.links;
    let at = short(&head.link).and_then(|k| links.iter().position(|&l| l == k));
    let Some(at) = at else {
        let last = links.last().copied();
        let cut_short = found.lines + 1 == head.count
            && (last == short(&head.prev) || (last.is_none() && head.prev.is_empty()));
        return match cut_short {
            true => HeadCheck::Interrupted,
            false => HeadCheck::Broken(format!(
                "the record written last here (line {}) is not in the ledger: a line before it was edited or removed, or the ledger was rewritten",
                head.count
            )),
        };
    };
    let line = at as u64 + 1;
    // Lines not written here: after the head's, and any joining an earlier line.
    let foreign = (line + 1..=found.lines).chain(found.merges.iter().map(|&(l, _)| l));
    let mut here: Lines = HashMap::new();
    for &l in links {
        *here.entry(l).or_default() += 1;
    }
    let from_git = |l: &u128| committed.get(l).copied().unwrap_or(0) >= here[l];
    let uncommitted = foreign
        .filter(|&l| !from_git(&links[(l - 1) as usize]))
        .min();
    if let Some(l) = uncommitted {
        return HeadCheck::Broken(format!(
            "line {l} was not written by waymark here (the last record written here is line {line}) and is in no commit: a record added or replayed by hand"
        ));
    }
    match line == head.count {
        true => HeadCheck::Holds { line },
        false if !found.merges.is_empty() => HeadCheck::Moved {
            count: head.count,
            line,
        },
        false => HeadCheck::Broken(format!(
            "the record written last here was line {} and is now line {line}: lines before it were inserted or removed",
            head.count
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Verifier;

    /// A record as waymark writes it, `id`, naming `prev` as the line before it.
    fn line(id: &str, prev: &str) -> String {
        serde_json::json!({
            "version": "0.1.0", "id": id, "timestamp": "2026-03-01T12:00:00.000Z", "files": [],
            "metadata": {"waymark": {"kind": "bash", "event": "PostToolUse", "session_id": "s", "prev": prev}},
        })
        .to_string()
    }

    /// A ledger of `n` chained records, as lines with their newlines.
    fn ledger(n: usize) -> Vec<String> {
        let mut lines = Vec::new();
        let mut prev = String::new();
        for i in 0..n {
            let line = line(&format!("r{i}"), &prev);
            prev = crate::trace::link(line.as_bytes());
            lines.push(line + "\n");
        }
        lines
    }

    fn walk(lines: &[String]) -> Verified {
        let mut v = Verifier::default();
        for l in lines {
            assert!(v.push(l.as_bytes()), "{l}");
        }
        v.finish()
    }

    fn head_of(lines: &[String]) -> TraceHead {
        let mut head: Option<TraceHead> = None;
        let mut prev = String::new();
        for l in lines {
            let body = l.trim_end().as_bytes();
            head = Some(TraceHead::after(head.as_ref(), &prev, body, || 0));
            prev = crate::trace::link(body);
        }
        head.unwrap()
    }

    fn links(lines: &[String]) -> Lines {
        lines_of(lines.concat().as_bytes())
    }

    #[test]
    fn the_ledger_written_here_holds() {
        let lines = ledger(5);
        let head = head_of(&lines);
        assert_eq!(head.count, 5);
        assert_eq!(
            check(&head, &walk(&lines), &Lines::new()),
            HeadCheck::Holds { line: 5 }
        );
    }

    #[test]
    fn a_record_appended_by_hand_is_caught_unless_git_brought_it() {
        let lines = ledger(6);
        let head = head_of(&lines[..5]);
        let found = walk(&lines);
        assert!(
            matches!(check(&head, &found, &Lines::new()), HeadCheck::Broken(w) if w.starts_with("line 6 was not written"))
        );
        // The same record from a commit (a teammate's, pulled) is not.
        assert_eq!(
            check(&head, &found, &links(&lines)),
            HeadCheck::Holds { line: 5 }
        );
    }

    #[test]
    fn an_edit_re_chained_after_it_is_caught() {
        let lines = ledger(5);
        let head = head_of(&lines);
        // Line 3 edited, lines 4 and 5 chained anew: the chain holds, the head does not.
        let mut forged = lines[..2].to_vec();
        let mut prev = crate::trace::link(forged[1].trim_end().as_bytes());
        for i in 2..5 {
            let who = if i == 2 { "forged" } else { "r" };
            let line = line(&format!("{who}{i}"), &prev);
            prev = crate::trace::link(line.as_bytes());
            forged.push(line + "\n");
        }
        let found = walk(&forged);
        assert!(found.bad.is_none(), "the chain alone cannot tell");
        assert!(
            matches!(check(&head, &found, &Lines::new()), HeadCheck::Broken(w) if w.contains("is not in the ledger"))
        );
    }

    #[test]
    fn a_line_replayed_in_the_middle_is_caught() {
        let lines = ledger(5);
        let head = head_of(&lines);
        let mut replayed = lines.clone();
        replayed.insert(3, lines[1].clone());
        let found = walk(&replayed);
        assert!(
            found.bad.is_none() && !found.merges.is_empty(),
            "it reads as a merge"
        );
        assert!(
            matches!(check(&head, &found, &links(&lines)), HeadCheck::Broken(w) if w.starts_with("line 4 was not written"))
        );
    }

    #[test]
    fn a_head_written_before_its_line_is_an_interrupted_append() {
        let lines = ledger(4);
        let head = head_of(&lines);
        assert_eq!(
            check(&head, &walk(&lines[..3]), &Lines::new()),
            HeadCheck::Interrupted
        );
        assert_eq!(
            check(&head_of(&lines[..1]), &walk(&[]), &Lines::new()),
            HeadCheck::Interrupted
        );
        // Two lines missing is not a cut-short append.
        assert!(matches!(
            check(&head, &walk(&lines[..2]), &Lines::new()),
            HeadCheck::Broken(_)
        ));
    }

    #[test]
    fn a_line_removed_before_the_head_is_caught() {
        let lines = ledger(5);
        let head = head_of(&lines);
        let mut cut = lines.clone();
        cut.remove(0);
        // Removing the first line breaks the chain already; the head names it too.
        let mut v = Verifier::default();
        let _ = cut.iter().all(|l| v.push(l.as_bytes()));
        let found = v.finish();
        assert!(found.bad.is_some());
        assert_eq!(head.message(), head_of(&lines).message());
    }

    #[test]
    fn the_message_is_every_field_length_prefixed() {
        let head = TraceHead {
            count: 12,
            link: "ab".into(),
            prev: "cd".into(),
            mac: "ignored".into(),
        };
        assert_eq!(
            head.message(),
            b"waymark-trace-head/1\ncount:2:12\nlink:2:ab\nprev:2:cd\n"
        );
    }

    #[test]
    fn only_a_head_one_line_past_the_end_over_its_own_prev_is_a_cut_short_append() {
        let lines = ledger(4);
        let head = head_of(&lines);
        // Three lines, but the third is not the one the head names as before it.
        let mut other = ledger(2);
        let prev = crate::trace::link(other[1].trim_end().as_bytes());
        other.push(line("elsewhere", &prev) + "\n");
        assert!(matches!(
            check(&head, &walk(&other), &Lines::new()),
            HeadCheck::Broken(_)
        ));
        // An empty ledger under a head whose line had one before it.
        let second = head_of(&lines[..2]);
        assert!(matches!(
            check(&second, &walk(&[]), &Lines::new()),
            HeadCheck::Broken(_)
        ));
        // A head that names no line before its own, over a ledger that has one; and one
        // that names a line before the first.
        let mut first = head_of(&lines[..2]);
        first.prev = String::new();
        let found = check(&first, &walk(&lines[..1]), &Lines::new());
        assert!(matches!(found, HeadCheck::Broken(_)), "{found:?}");
        let mut lone = head_of(&lines[..1]);
        lone.prev = crate::trace::link(b"x");
        let found = check(&lone, &walk(&[]), &Lines::new());
        assert!(matches!(found, HeadCheck::Broken(_)), "{found:?}");
    }

    #[test]
    fn the_record_written_here_moves_only_with_a_merge() {
        // Another branch's two records, then ours joining the start (a union merge).
        let ours = ledger(3);
        let mut theirs_chained = vec![line("t0", "") + "\n"];
        let prev = crate::trace::link(theirs_chained[0].trim_end().as_bytes());
        theirs_chained.push(line("t1", &prev) + "\n");
        let merged: Vec<String> = theirs_chained.iter().chain(&ours).cloned().collect();
        let head = head_of(&ours);
        assert_eq!(
            check(&head, &walk(&merged), &links(&merged)),
            HeadCheck::Moved { count: 3, line: 5 }
        );
        // A ledger an older waymark began (unchained lines), then ours; a line slipped in
        // before it all: no merge explains the move, lines were inserted.
        let old = |id: &str| format!("{{\"id\":\"{id}\"}}\n");
        let mut written = vec![old("old-1"), old("old-2")];
        let prev = crate::trace::link(written[1].trim_end().as_bytes());
        written.push(line("r0", &prev) + "\n");
        let head = head_of(&written);
        let shifted: Vec<String> = [old("old-0")].iter().chain(&written).cloned().collect();
        let found = walk(&shifted);
        assert!(found.merges.is_empty() && found.bad.is_none());
        assert!(
            matches!(check(&head, &found, &links(&shifted)), HeadCheck::Broken(w) if w.contains("is now line 4"))
        );
    }

    #[test]
    fn the_head_counts_on_or_recounts() {
        let before = TraceHead {
            count: 7,
            link: "aa".into(),
            prev: String::new(),
            mac: String::new(),
        };
        assert_eq!(TraceHead::after(Some(&before), "aa", b"x", || 99).count, 8);
        assert_eq!(
            TraceHead::after(Some(&before), "bb", b"x", || 99).count,
            100
        );
        assert_eq!(TraceHead::after(None, "", b"x", || 0).count, 1);
    }
}
