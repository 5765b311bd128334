//! IntentProgress, the post-hook (docs/design.md, Post-hooks: US1): the recent trace read,
//! each intent the event works toward judged (`waymark_core::governance::progress`,
//! re-exported here), a completed one's `status:` line rewritten and the transition
//! recorded.

use super::facts::Facts;
use super::intent;
use crate::claude::output::Output;
use crate::runtime::context::Ctx;
use crate::store::log::Level;
use crate::trace::{self, Waymark, kind};

pub use waymark_core::governance::progress::*;

/// Intent `id` as the brief and HOOK.md show it: its scope, constraints and the acceptance
/// criteria the recent trace does not meet yet. `None` when the intent file does not hold
/// it.
pub fn brief(ctx: &Ctx, id: &str) -> Option<waymark_core::task::IntentBrief> {
    let mut facts = Facts::new(Some(id.to_string()));
    let intent = facts.intents(ctx)?.get(id)?.clone();
    // The trace is read only when there are criteria to match.
    let window = match intent.acceptance_criteria.is_empty() {
        true => &[][..],
        false => &facts.recent(ctx).ok()?.lines[..],
    };
    Some(intent_brief(intent, window))
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
    let proven = evidence(&recent.lines);
    let lines: Vec<&str> = proven.iter().map(String::as_str).collect();
    let mut met = Vec::new();
    for (id, name, criteria) in targets {
        let ev = evaluate(&criteria, &lines);
        for e in &ev.errors {
            let why = format!("{id}: criterion not evaluated: {e}");
            ctx.log(Level::Warn, "intents", &why);
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
    match failures.is_empty() {
        true => Ok(()),
        false => Err(anyhow::anyhow!(failures.join("; "))),
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
    trace::append_new(ctx, wm)?;
    out.say(format!(
        "waymark: intent {id} ({name}) is now {to}: all {count} acceptance criteria were met in the recent trace."
    ));
    Ok(())
}
