//! Claude Code's own /rewind, noticed from the transcript.
//!
//! Claude Code sends no event when the user rewinds the conversation ("restore
//! conversation"): the next prompt simply follows an earlier entry of the transcript. So
//! UserPromptSubmit marks where the turn began ([`start_turn`], with the plan as it
//! stands, a line of the task's `turns.jsonl`), and the turn's next event that changes the
//! task ([`check`]: PostToolUse, Stop, or the agent's own `waymark plan|step`) reads the
//! prompt's parent. When the conversation was rewound, the plan is put back as it stood
//! when the first turn the rewind took away began, and the agent is told which checkpoint
//! matches that point: `waymark rewind` to it also undoes what Bash changed, which
//! Claude Code's "restore code" does not.

use chrono::{DateTime, Utc};

use crate::claude::transcript::{self, TurnStart};
use crate::runtime::context::Ctx;
use crate::store::log::Level;
use crate::task::{CheckpointTrigger, ConversationRewind, Hook, PlanAt, TurnMark, store};

/// How many of the newest turns the plan is looked for among.
const TURNS: usize = 256;

/// A turn of `session` begins: where it begins in the transcript, and the plan as it
/// stands (for a rewind to before it).
pub fn start_turn(
    ctx: &Ctx,
    hook: &mut Hook,
    session: &str,
    transcript: Option<&str>,
    prompt_id: Option<&str>,
) {
    let from = transcript
        .and_then(|t| std::fs::metadata(t).ok())
        .map(|m| m.len());
    let plan = hook.plan_at(session, ctx.now);
    hook.journal.turns.push(plan);
    if let Some(s) = hook.session_mut(session) {
        s.turn = from.map(|from| TurnMark {
            from,
            prompt_id: prompt_id.map(str::to_string),
        });
    }
}

/// At a turn's first event that changes the task: whether the turn began after Claude
/// Code rewound the conversation, and if so the plan put back and what to tell the agent.
/// `last` says the turn ends with this event: the mark goes whatever the transcript says.
pub fn check(ctx: &Ctx, hook: &mut Hook, session: &str, last: bool) -> Option<String> {
    let s = hook.session_mut(session)?;
    let mark = s.turn.clone()?;
    let path = s.transcript_path.clone()?;
    let start = transcript::turn_start(path.as_ref(), mark.from, mark.prompt_id.as_deref());
    if start != TurnStart::NotYet || last {
        s.turn = None;
    }
    let TurnStart::Rewound(to) = start else {
        return None;
    };
    let rewind = put_back(ctx, hook, session, to);
    let mut details = std::collections::BTreeMap::new();
    details.insert("to".into(), serde_json::json!(to));
    details.insert("reopened".into(), serde_json::json!(rewind.reopened));
    details.insert("dropped".into(), serde_json::json!(rewind.dropped));
    hook.note("conversation_rewound", details, ctx.now);
    hook.conversation_rewound = Some(rewind);
    let shown = waymark_core::recovery::inert::view(hook);
    waymark_core::recovery::guidance::conversation_rewound(&shown, Some(ctx.now))
        .map(|line| format!("[waymark] {line}"))
}

/// Puts the plan back as it stood when the first turn after `to` began, and finds the
/// checkpoint that matches `to`.
fn put_back(
    ctx: &Ctx,
    hook: &mut Hook,
    session: &str,
    to: Option<DateTime<Utc>>,
) -> ConversationRewind {
    let after = |t: &PlanAt| t.session_id == session && to.is_none_or(|to| t.at > to);
    let turns: Vec<PlanAt> =
        store::read_log(&ctx.project, &hook.task_id, store::TURNS_LOG, Some(TURNS))
            .unwrap_or_default();
    let then = turns.iter().find(|t| after(t));
    let mut rewind = ConversationRewind {
        at: ctx.now,
        session_id: session.to_string(),
        to,
        reopened: Vec::new(),
        dropped: Vec::new(),
        plan_unknown: then.is_none(),
        checkpoint: None,
    };
    if let Some(then) = then {
        match hook.put_plan_back(then, ctx.config.max_attempts, ctx.now) {
            Ok((reopened, dropped)) => (rewind.reopened, rewind.dropped) = (reopened, dropped),
            Err(e) => {
                ctx.log(Level::Warn, "rewind", &format!("plan not put back: {e}"));
                rewind.plan_unknown = true;
            }
        }
    }
    let checkpoints = store::checkpoints(&ctx.project, &hook.task_id, ctx.config.max_checkpoints)
        .unwrap_or_default();
    rewind.checkpoint = checkpoints
        .iter()
        .rev()
        .filter(|c| c.trigger != CheckpointTrigger::PreRewind)
        .find(|c| to.is_some_and(|to| c.created_at <= to))
        .map(|c| (c.checkpoint_id.clone(), c.created_at));
    rewind
}
