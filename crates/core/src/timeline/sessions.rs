//! The Claude Code sessions hook.json keeps (the newest 8): when each started, and how it
//! ended: a SessionEnd, or a turn stopped on an API error. A session that crashed has
//! neither; the next session's crash detection is in the history (`crash`).

use serde_json::Value;

use super::kind::{SESSION_ENDED, SESSION_STARTED, SESSION_STOPPED_ON_ERROR};
use super::{Event, Sources, event};
use crate::task::SessionStatus;
use crate::text::short_id;

pub(super) fn started(src: &Sources) -> Vec<Event> {
    src.sessions
        .iter()
        .map(|s| {
            let details = [("session_id", Value::from(&*s.session_id))];
            let what = format!("session {} started", short_id(&s.session_id));
            event(src, s.started_at, SESSION_STARTED, what, None, details)
        })
        .collect()
}

pub(super) fn ended(src: &Sources) -> Vec<Event> {
    let mut out = Vec::new();
    for s in src.sessions {
        let id = Value::from(&*s.session_id);
        if let Some(f) = &s.failed_turn {
            let what = format!(
                "session {} stopped on {}",
                short_id(&s.session_id),
                f.described()
            );
            let details = [
                ("session_id", id.clone()),
                ("error", Value::from(&*f.error)),
                ("message", Value::from(&*f.message)),
            ];
            let e = event(src, f.at, SESSION_STOPPED_ON_ERROR, what, None, details);
            out.push(e);
        }
        if s.status == SessionStatus::Ended {
            let reason = s.end_reason.as_deref().unwrap_or("unknown");
            let what = format!("session {} ended ({reason})", short_id(&s.session_id));
            let details = [("session_id", id), ("reason", Value::from(reason))];
            let e = event(src, s.last_event_at, SESSION_ENDED, what, None, details);
            out.push(e);
        }
    }
    out
}
