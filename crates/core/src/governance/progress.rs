//! IntentProgress's judging (docs/design.md, Post-hooks: US1): the acceptance criteria of
//! an intent matched against the recent trace window. When all of an intent's are met the
//! application completes it (only its `status:` line changes, in the file's own spelling)
//! and records the transition. Some met: nothing changes.

use super::intent::Intent;
use crate::task::IntentBrief;

/// How an intent's acceptance criteria fare against some text.
#[derive(Debug, Default, PartialEq)]
pub struct Evaluation {
    pub met: Vec<String>,
    pub unmet: Vec<String>,
    /// Criteria that could not be evaluated (an invalid `re:` pattern), with why.
    pub errors: Vec<String>,
}

impl Evaluation {
    pub fn all_met(&self) -> bool {
        !self.met.is_empty() && self.unmet.is_empty() && self.errors.is_empty()
    }
}

/// Matches each criterion against `lines` (the recent trace window): a plain criterion is
/// a case-insensitive substring of some line; `re:<pattern>` is a case-insensitive regex
/// that must match some line.
pub fn evaluate(criteria: &[String], lines: &[&str]) -> Evaluation {
    let mut ev = Evaluation::default();
    // Plain criteria are searched in the window as one lowercased text (a record is one
    // line, so no match spans two records); regexes line by line, so `^` and `$` mean the
    // record.
    let mut lowered: Option<String> = None;
    for c in criteria.iter().filter(|c| !c.trim().is_empty()) {
        let met = if let Some(pattern) = c.strip_prefix("re:") {
            match regex::RegexBuilder::new(pattern.trim())
                .case_insensitive(true)
                .size_limit(1 << 20)
                .build()
            {
                Ok(re) => lines.iter().any(|l| re.is_match(l)),
                Err(e) => {
                    ev.errors.push(format!("{c}: {e}"));
                    continue;
                }
            }
        } else {
            let needle = c.trim().to_lowercase();
            let hay = lowered.get_or_insert_with(|| {
                let text = lines.join("\n");
                // ASCII lowering is a fast byte pass; full Unicode only when needed.
                if text.is_ascii() {
                    text.to_ascii_lowercase()
                } else {
                    text.to_lowercase()
                }
            });
            hay.contains(&needle)
        };
        let list = if met { &mut ev.met } else { &mut ev.unmet };
        list.push(c.clone());
    }
    ev
}

/// What the trace window proves, one text per record: a criterion is met by a run that
/// passed or a file that was changed, never by words. Not by an `echo 'test result: ok'`,
/// not by a failing run's "1 passed; 1 failed", not by waymark's own records that quote
/// the criteria.
pub fn evidence(window: &[String]) -> Vec<String> {
    window.iter().filter_map(|l| proof(l)).collect()
}

/// What one trace line proves: a validation command that exited 0, its whole record (the
/// command and what it printed); a change to files (waymark's mutation records, and the
/// forks' records, which are all changes), the paths changed; anything else, nothing.
fn proof(line: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    let wm = value.pointer("/metadata/waymark");
    let field = |k: &str| wm.and_then(|w| w.get(k));
    let passed = field("validation") == Some(&true.into()) && field("exit_code") == Some(&0.into());
    if passed {
        return Some(line.to_string());
    }
    let entry = crate::trace::dialect::Entry::of(&value)?;
    let change = entry
        .kind
        .as_deref()
        .is_none_or(|k| k == crate::trace::kind::MUTATION);
    (change && !entry.paths.is_empty()).then(|| entry.paths.join("\n"))
}

/// `intent` as the brief and HOOK.md show it: its scope, constraints and the acceptance
/// criteria the trace `window` (its last lines) does not meet yet.
pub fn intent_brief(intent: Intent, window: &[String]) -> IntentBrief {
    let unmet = match intent.acceptance_criteria.is_empty() {
        true => Vec::new(),
        false => {
            let proven = evidence(window);
            let lines: Vec<&str> = proven.iter().map(String::as_str).collect();
            evaluate(&intent.acceptance_criteria, &lines).unmet
        }
    };
    IntentBrief {
        criteria: intent.acceptance_criteria.len(),
        id: intent.id,
        name: intent.name,
        status: intent.status,
        owned_scope: intent.owned_scope,
        constraints: intent.constraints,
        unmet,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn criteria_substring_and_regex() {
        let lines = [
            "{\"output_tail\":\"test result: ok. 12 passed\"}",
            "{\"path\":\"src/auth/jwt.rs\"}",
        ];
        let c = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(evaluate(&c(&["TEST RESULT: OK", "src/auth/"]), &lines).all_met());
        assert!(evaluate(&c(&[r"re:\d+ passed"]), &lines).all_met());
        let ev = evaluate(&c(&["test result: ok", "docs updated"]), &lines);
        assert!(!ev.all_met());
        assert_eq!(ev.unmet, vec!["docs updated"]);
        let ev = evaluate(&c(&["re:("]), &lines);
        assert!(!ev.all_met() && ev.errors.len() == 1);
        assert!(!evaluate(&[], &lines).all_met());
    }

    /// A trace record of `kind` with `output_tail`; for a command, its exit code and
    /// whether it was a validation.
    fn record(kind: &str, output_tail: &str, run: Option<(i32, bool)>) -> String {
        use crate::trace::{Record, TOOL_NAME, Tool, Waymark};
        let facts = Waymark {
            kind: kind.into(),
            event: "PostToolUse".into(),
            output_tail: Some(output_tail.into()),
            exit_code: run.map(|(code, _)| code),
            validation: run.and_then(|(_, v)| v.then_some(true)),
            ..Default::default()
        };
        let tool = Tool {
            name: TOOL_NAME.into(),
            version: "2.1.332".into(),
        };
        let now = chrono::DateTime::UNIX_EPOCH;
        serde_json::to_string(&Record::new("r".into(), now, None, tool, facts)).unwrap()
    }

    /// A trace window where only the first record is a validation that passed and the
    /// mutation changed src/auth/jwt.rs: the others say words of the criteria ("docs
    /// updated", "lint clean", "12 passed", "all checks green") without proof, or name a
    /// file they did not change (a scope warning about docs/notes.md).
    fn window() -> Vec<String> {
        use crate::trace::kind;
        vec![
            record(kind::BASH, "test result: ok. 3 passed", Some((0, true))),
            record(kind::TRANSITION, "docs updated", None),
            with_path(
                record(kind::SCOPE_WARNING, "lint clean", None),
                "docs/notes.md",
            ),
            with_path(record(kind::MUTATION, "", None), "src/auth/jwt.rs"),
            record(kind::BASH, "12 passed; 1 failed", Some((101, true))),
            record(kind::BASH, "echo 'all checks green'", Some((0, false))),
        ]
    }

    /// `line` naming the file `path`.
    fn with_path(line: String, path: &str) -> String {
        let mut v: serde_json::Value = serde_json::from_str(&line).unwrap();
        v["files"] = serde_json::json!([{"path": path, "conversations": []}]);
        v.to_string()
    }

    /// Evidence is what validations that passed printed and the paths changed (issue
    /// 32, item 6); a fork's change counts by its paths, its output does not.
    #[test]
    fn only_a_passed_validation_and_a_change_are_evidence() {
        let w = window();
        assert_eq!(evidence(&w), [w[0].clone(), "src/auth/jwt.rs".to_string()]);
        assert!(evidence(&[]).is_empty());
        assert!(evidence(&["not json".to_string()]).is_empty());
        let fork = r#"{"id":"f1","files":[{"relative_path":"src/a.ts"}],"tool":"execute_command","output":"test result: ok"}"#;
        assert_eq!(evidence(&[fork.to_string()]), ["src/a.ts"]);
    }

    #[test]
    fn the_brief_lists_the_criteria_the_evidence_does_not_meet() {
        let intent = Intent {
            id: "INT-001".into(),
            acceptance_criteria: [
                "test result: ok",
                "docs updated",
                "lint clean",
                "jwt.rs",
                r"re:\b12 passed",
                "all checks green",
                "docs/notes.md",
            ]
            .map(String::from)
            .to_vec(),
            ..Default::default()
        };
        let brief = intent_brief(intent, &window());
        let unmet = [
            "docs updated",
            "lint clean",
            r"re:\b12 passed",
            "all checks green",
            "docs/notes.md",
        ];
        assert_eq!(brief.unmet, unmet);
        assert_eq!(brief.criteria, 7);
        assert_eq!(brief.id, "INT-001");
    }
}
