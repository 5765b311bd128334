//! IntentProgress (docs/design.md, Post-hooks: US1): after a tool call, the acceptance
//! criteria of each intent the event works toward (the active one, and every other intent
//! in progress whose scope holds the file) are matched against the recent trace window;
//! when all of an intent's are met its status becomes completed (only its `status:` line
//! changes, in the file's own spelling) and the transition is recorded. Some met: nothing
//! changes.

use super::facts::Facts;
use super::intent;
use crate::claude::output::Output;
use crate::context::Ctx;
use crate::log::Level;
use crate::trace::{self, Record, Waymark, kind};

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

/// The trace window as evidence: waymark's own transition and scope records quote
/// criteria and scopes, so they are left out.
fn evidence(recent: &trace::Recent) -> Vec<&str> {
    recent
        .lines
        .iter()
        .map(String::as_str)
        .filter(|l| {
            !l.contains("\"kind\":\"transition\"") && !l.contains("\"kind\":\"scope_warning\"")
        })
        .collect()
}

/// Intent `id` as the brief and HOOK.md show it: its scope, constraints and the acceptance
/// criteria the recent trace does not meet yet. `None` when the intent file does not hold
/// it.
pub fn brief(ctx: &Ctx, id: &str) -> Option<crate::task::IntentBrief> {
    let mut facts = Facts::new(Some(id.to_string()));
    let intent = facts.intents(ctx)?.get(id)?.clone();
    let unmet = if intent.acceptance_criteria.is_empty() {
        Vec::new()
    } else {
        let recent = facts.recent(ctx).ok()?;
        evaluate(&intent.acceptance_criteria, &evidence(recent)).unmet
    };
    Some(crate::task::IntentBrief {
        id: intent.id,
        name: intent.name,
        status: intent.status,
        owned_scope: intent.owned_scope,
        constraints: intent.constraints,
        unmet,
        criteria: intent.acceptance_criteria.len(),
    })
}

/// The post-hook: completes each intent the event works toward (the active one, and every
/// other intent in progress whose scope holds `path`) when the recent trace meets every one
/// of its acceptance criteria. Each is judged and completed on its own, with its own
/// transition record and message.
pub fn run(
    ctx: &Ctx,
    facts: &mut Facts,
    about: &Waymark,
    path: Option<&str>,
    out: &mut Output,
) -> anyhow::Result<()> {
    let Some((file, chosen)) = facts.intents_and_choice(ctx) else {
        return Ok(());
    };
    let targets: Vec<_> = file
        .working_on(chosen.as_deref(), path)
        .into_iter()
        .filter(|i| !i.acceptance_criteria.is_empty())
        .map(|i| (i.id.clone(), i.name.clone(), i.acceptance_criteria.clone()))
        .collect();
    if targets.is_empty() {
        return Ok(());
    }
    let recent = facts.recent(ctx)?;
    let lines = evidence(recent);
    let mut met = Vec::new();
    for (id, name, criteria) in targets {
        let ev = evaluate(&criteria, &lines);
        for e in &ev.errors {
            ctx.log(
                Level::Warn,
                "intents",
                &format!("{id}: criterion not evaluated: {e}"),
            );
        }
        if ev.all_met() {
            met.push((id, name, ev.met));
        }
    }
    let mut failures = Vec::new();
    for (id, name, criteria) in met {
        let done = intent::complete(&ctx.project, &id)
            .map_err(anyhow::Error::from)
            .and_then(|change| match change {
                Some(change) => record(ctx, about, &id, &name, change, criteria, out),
                None => Ok(()),
            });
        if let Err(e) = done {
            failures.push(format!("{id}: {e:#}"));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(anyhow::anyhow!(failures.join("; ")))
    }
}

/// The transition record of an intent completed, and the agent's message.
fn record(
    ctx: &Ctx,
    about: &Waymark,
    id: &str,
    name: &str,
    change: intent::Change,
    criteria: Vec<String>,
    out: &mut Output,
) -> anyhow::Result<()> {
    let count = criteria.len();
    let to = change.to.clone();
    let wm = Waymark {
        kind: kind::TRANSITION.into(),
        intent_id: Some(id.to_string()),
        transition: Some(trace::Transition {
            intent_id: id.to_string(),
            from: change.from,
            to: change.to,
            criteria,
        }),
        ..about.clone()
    };
    trace::append(&ctx.project, Record::new(&ctx.project, ctx.now, wm))?;
    out.say(format!(
        "waymark: intent {id} ({name}) is now {to}: all {count} acceptance criteria were met in the recent trace."
    ));
    Ok(())
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
}
