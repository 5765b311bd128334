//! Which Claude Code session is working on the task, and whether it is mid-turn: the
//! difference between a crash and a clean stop.

use chrono::{DateTime, Duration, Utc};

use super::{Hook, Session, SessionStatus};

impl Hook {
    /// Records that session `id` sent an event, leaving it in `status`. The timestamp is
    /// refreshed at most once a minute so that a quiet event costs no write.
    pub fn note_session(
        &mut self,
        id: &str,
        transcript_path: Option<&str>,
        status: SessionStatus,
        now: DateTime<Utc>,
    ) {
        match self.session.as_mut() {
            Some(s) if s.session_id == id => {
                if s.status != status || now - s.last_event_at > Duration::seconds(60) {
                    s.status = status;
                    s.last_event_at = now;
                }
            }
            _ => {
                self.session = Some(Session {
                    session_id: id.to_string(),
                    started_at: now,
                    last_event_at: now,
                    status,
                    transcript_path: transcript_path.map(str::to_string),
                    end_reason: None,
                });
            }
        }
    }
}
