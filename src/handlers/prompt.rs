//! UserPromptSubmit: the prompt is what the agent is working on until a step says better;
//! a rise of context usage past the threshold makes a checkpoint.

use crate::claude::event::{Event, UserPromptSubmit};
use crate::runtime::context::Ctx;
use crate::task::{Effect, Hook, Need, SessionStatus, checkpoint, current};
use waymark_core::text::{one_line, truncate};

/// Prompts are kept to this many characters.
const MAX_PROMPT: usize = 300;

pub fn handle(ctx: &Ctx, event: &Event, e: &UserPromptSubmit) -> anyhow::Result<()> {
    // The turn's work starts after a checkpoint's snapshot in flight is taken.
    crate::task::capture::settle(&ctx.project);
    current::change(ctx, Need::Create, |hook, effects| {
        if is_request(&e.prompt) && !another_at_work(ctx, hook, &event.common.session_id) {
            hook.note_request(truncate(&one_line(&e.prompt), MAX_PROMPT));
        }
        effects.extend(context_threshold(ctx, event, hook));
        super::note(hook, event, SessionStatus::Active, ctx);
        let c = &event.common;
        hook.end_command(&c.session_id, None);
        // Only Claude Code's transcript tells a rewound conversation (Codex's rollout
        // has no parents to compare): a Codex turn is not read for it.
        let claude = event.agent == crate::claude::codex::Agent::Claude;
        let transcript = c.transcript_path.as_deref().filter(|_| claude);
        let prompt = c.prompt_id.as_deref();
        // Neither CLI has written the prompt yet (2.1.197 and 2.1.332, seen in the e2e
        // transcripts): the turn's next event that reads the task tells a rewound
        // conversation, the agent's own `waymark plan` before its tool call ends.
        super::rewound::start_turn(ctx, hook, &c.session_id, transcript, prompt);
    })?;
    Ok(())
}

/// Whether another session is at work on the task (mid-turn, its process running): then
/// a prompt typed here is this session's own question, not the task's request. Asked of
/// the system only when another session is mid-turn; not for an event applied late, whose
/// process is not its session's.
fn another_at_work(ctx: &Ctx, hook: &Hook, session: &str) -> bool {
    let mid_turn = hook
        .sessions
        .iter()
        .any(|s| s.session_id != session && s.status == SessionStatus::Active);
    if !mid_turn || ctx.late {
        return false;
    }
    let live = crate::recovery::liveness(crate::runtime::process::owner());
    hook.working_elsewhere(session, &live).next().is_some()
}

/// Whether a prompt is something the user asked for. Claude Code 2.1.332 also submits,
/// as prompts, the notices of background agents that finished (`<task-notification>…`):
/// they start a turn but are not the user's request.
fn is_request(prompt: &str) -> bool {
    let prompt = prompt.trim_start();
    !prompt.is_empty() && !prompt.starts_with("<task-notification>")
}

/// A `context_threshold` checkpoint when the context usage the transcript's last `usage`
/// shows has risen past `checkpoint_threshold_percent` (once per crossing).
pub(super) fn context_threshold(ctx: &Ctx, event: &Event, hook: &mut Hook) -> Option<Effect> {
    let path = event.common.transcript_path.as_deref()?;
    let tokens = crate::claude::transcript::last_context_tokens(std::path::Path::new(path))?;
    let percent = ctx.config.checkpoint_threshold_percent;
    checkpoint::context_threshold(hook, tokens, ctx.config.context_window_tokens, percent)
}

#[cfg(test)]
mod tests {
    use super::is_request;

    #[test]
    fn a_background_agents_notice_is_not_the_users_request() {
        assert!(is_request("fix the parser"));
        assert!(!is_request("  \n"));
        assert!(!is_request(
            "<task-notification>\n<task-id>a0f3</task-id>\n<status>completed</status>"
        ));
    }
}
