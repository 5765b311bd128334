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
        if met {
            ev.met.push(c.clone());
        } else {
            ev.unmet.push(c.clone());
        }
    }
    ev
}

/// The trace window's lines as evidence: waymark's own transition and scope records quote
/// criteria and scopes, so they are left out.
pub fn evidence(window: &[String]) -> Vec<&str> {
    window
        .iter()
        .map(String::as_str)
        .filter(|l| {
            !l.contains("\"kind\":\"transition\"") && !l.contains("\"kind\":\"scope_warning\"")
        })
        .collect()
}

/// `intent` as the brief and HOOK.md show it: its scope, constraints and the acceptance
/// criteria the trace `window` (its last lines) does not meet yet.
pub fn intent_brief(intent: Intent, window: &[String]) -> IntentBrief {
    let unmet = match intent.acceptance_criteria.is_empty() {
        true => Vec::new(),
        false => evaluate(&intent.acceptance_criteria, &evidence(window)).unmet,
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

    fn record(kind: &str, output_tail: &str) -> String {
        use crate::trace::{Record, TOOL_NAME, Tool, Waymark};
        let facts = Waymark {
            kind: kind.into(),
            event: "PostToolUse".into(),
            output_tail: Some(output_tail.into()),
            ..Default::default()
        };
        let tool = Tool {
            name: TOOL_NAME.into(),
            version: "2.1.332".into(),
        };
        let now = chrono::DateTime::UNIX_EPOCH;
        serde_json::to_string(&Record::new("r".into(), now, None, tool, facts)).unwrap()
    }

    /// A trace window where waymark's own records quote the criteria "docs updated" and
    /// "lint clean"; only the bash and mutation records are evidence.
    fn window() -> Vec<String> {
        use crate::trace::kind;
        vec![
            record(kind::BASH, "test result: ok"),
            record(kind::TRANSITION, "docs updated"),
            record(kind::SCOPE_WARNING, "lint clean"),
            record(kind::MUTATION, "src/auth/jwt.rs"),
        ]
    }

    #[test]
    fn evidence_leaves_out_waymarks_transition_and_scope_records() {
        let w = window();
        assert_eq!(evidence(&w), [w[0].as_str(), w[3].as_str()]);
        assert!(evidence(&[]).is_empty());
    }

    #[test]
    fn the_brief_lists_the_criteria_the_evidence_does_not_meet() {
        let intent = Intent {
            id: "INT-001".into(),
            acceptance_criteria: ["test result: ok", "docs updated", "lint clean", "jwt.rs"]
                .map(String::from)
                .to_vec(),
            ..Default::default()
        };
        let brief = intent_brief(intent, &window());
        assert_eq!(brief.unmet, ["docs updated", "lint clean"]);
        assert_eq!(brief.criteria, 4);
        assert_eq!(brief.id, "INT-001");
    }
}
