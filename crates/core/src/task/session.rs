//! Which Claude Code sessions work on the task, and whether each is mid-turn: the
//! difference between a crash and a clean stop, and between a crash and a session that is
//! still working in another window.

use chrono::{DateTime, Duration, Utc};

use serde::{Deserialize, Serialize};

use super::{Hook, SESSION_FILES, Session, SessionStatus};

/// A process, as recorded on a session: the Claude Code process that runs it, named by its
/// pid and its start time (in clock ticks since boot) so that a reused pid is not taken
/// for it. The application finds it and asks whether it still runs (`process`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub pid: u32,
    /// Start time in clock ticks since boot.
    pub start: u64,
}

impl Session {
    /// A session first seen `now`, in `status`, with nothing known of its work yet.
    pub fn new(
        id: &str,
        transcript_path: Option<&str>,
        status: SessionStatus,
        now: DateTime<Utc>,
    ) -> Session {
        Session {
            session_id: id.to_string(),
            started_at: now,
            last_event_at: now,
            status,
            transcript_path: transcript_path.map(str::to_string),
            ..Session::default()
        }
    }
}

/// The 8 characters that name a session id: a UUIDv7's last 8 (random), else its first.
fn short_form(id: &str) -> &str {
    let b = id.as_bytes();
    let v7 = b.len() == 36
        && [8, 13, 18, 23].iter().all(|&i| b[i] == b'-')
        && b[14] == b'7'
        && b.iter().all(|c| c.is_ascii_hexdigit() || *c == b'-');
    if v7 {
        &id[28..]
    } else {
        crate::text::short_id(id)
    }
}

/// How many running subagents a session keeps.
pub const SESSION_AGENTS: usize = 8;

impl Hook {
    /// How the brief names session `id`: its agent and a short form of its id that no
    /// other session of the task shares ("Codex CLI session 4c1d9e02").
    pub fn session_name(&self, id: &str) -> String {
        let agent = self
            .sessions
            .iter()
            .find(|s| s.session_id == id)
            .and_then(|s| s.client.as_deref())
            .unwrap_or("Claude Code");
        format!("{agent} session {}", self.session_label(id))
    }

    /// A short form of session `id` that tells it from the task's other sessions: 8
    /// characters, the random end of a UUIDv7 (Codex CLI's ids begin with their time, so
    /// two started within a minute begin alike), else its start; the whole id when
    /// another session is still named alike.
    pub fn session_label(&self, id: &str) -> String {
        let short = short_form(id);
        let alike = self
            .sessions
            .iter()
            .any(|s| s.session_id != id && short_form(&s.session_id) == short);
        if alike { id } else { short }.to_string()
    }

    /// The session that sent the last event.
    pub fn session(&self) -> Option<&Session> {
        self.sessions.iter().max_by_key(|s| s.last_event_at)
    }

    pub fn session_mut(&mut self, id: &str) -> Option<&mut Session> {
        self.sessions.iter_mut().find(|s| s.session_id == id)
    }

    /// The other sessions that sent an event at or after `since`.
    pub fn others_since<'a>(
        &'a self,
        id: &'a str,
        since: DateTime<Utc>,
    ) -> impl Iterator<Item = &'a Session> + 'a {
        self.sessions
            .iter()
            .filter(move |s| s.session_id != id && s.last_event_at >= since)
    }

    /// Records that session `id` sent an event, leaving it in `status`. The timestamp is
    /// refreshed at most once a minute so that a quiet event costs no write.
    pub fn note_session(
        &mut self,
        id: &str,
        transcript_path: Option<&str>,
        status: SessionStatus,
        now: DateTime<Utc>,
    ) {
        if let Some(s) = self.session_mut(id) {
            // A new event ends a wait for the user; a new turn (work again) follows a
            // failed one, which a session start still tells.
            let waited = s.waiting_for.take().is_some();
            let failed = status == SessionStatus::Active && s.failed_turn.take().is_some();
            let over = waited || failed;
            if over || s.status != status || now - s.last_event_at > Duration::seconds(60) {
                s.status = status;
                s.last_event_at = now;
            }
            return;
        }
        self.sessions
            .push(Session::new(id, transcript_path, status, now));
        self.trim_sessions(Some(id));
    }

    /// Records the Claude Code process running session `id`, when it is known (a
    /// `--continue` runs the same session in a new process, which replaces the old).
    pub fn set_owner(&mut self, id: &str, owner: Option<Owner>) {
        if let (Some(s), Some(o)) = (self.session_mut(id), owner) {
            s.owner = Some(o);
        }
    }

    /// Records where session `id` works (`None`: the project root). No write when unchanged.
    pub fn set_cwd(&mut self, id: &str, cwd: Option<String>) {
        if let Some(s) = self.session_mut(id).filter(|s| s.cwd != cwd) {
            s.cwd = cwd;
        }
    }

    /// Records a subagent session `id` started (`agent`: its type and id), or, `started`
    /// false, that it stopped.
    pub fn note_agent(&mut self, id: &str, agent: &str, started: bool) {
        let Some(s) = self.session_mut(id) else {
            return;
        };
        s.agents.retain(|a| a != agent);
        if started {
            s.agents.push(agent.to_string());
            super::bounds::keep_newest(&mut s.agents, SESSION_AGENTS);
        }
    }

    /// Records that session `id` worked on the current step and touched `files` there.
    pub fn note_work(&mut self, id: &str, files: &[&str]) {
        let step = self.current_step.as_ref().map(|c| c.step_name.clone());
        let Some(s) = self.session_mut(id) else {
            return;
        };
        if s.step != step {
            s.step = step;
            s.files.clear();
        }
        // Only the newest [`SESSION_FILES`] are kept: a patch of 100,000 files looks at
        // those alone (each is looked for in the list, which stays that short).
        for f in &files[files.len().saturating_sub(SESSION_FILES)..] {
            if !s.files.iter().any(|x| x == f) {
                s.files.push(f.to_string());
            }
        }
        super::bounds::keep_newest(&mut s.files, SESSION_FILES);
    }

    /// The sessions other than `id` that are working now: mid-turn, with their Claude
    /// Code process still running (`live` asks the system).
    pub fn working_elsewhere<'a>(
        &'a self,
        id: &'a str,
        live: &'a dyn Fn(&Session) -> bool,
    ) -> impl Iterator<Item = &'a Session> + 'a {
        self.sessions
            .iter()
            .filter(move |s| s.session_id != id && s.status == SessionStatus::Active && live(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::MAX_SESSIONS;

    /// Two sessions of one task never read alike: a UUIDv7 (Codex CLI's, whose first
    /// digits are its time) by its random end, another id by its start, the whole id when
    /// another session still shares the short form; and the agent is named.
    #[test]
    fn sessions_read_apart_and_name_their_agent() {
        let t0 = Utc::now();
        let mut h = Hook::new("t", "w", 0, t0);
        let (a, b) = (
            "01a225b6-0000-7000-8000-00000000a001",
            "01a225b6-0000-7000-8000-00000000b002",
        );
        for id in [a, b, "abcdef1234567890", "abcdef12zzzz"] {
            h.note_session(id, None, SessionStatus::Idle, t0);
        }
        h.session_mut(a).unwrap().client = Some("Codex CLI".into());
        assert_eq!(h.session_name(a), "Codex CLI session 0000a001");
        assert_eq!(h.session_label(b), "0000b002");
        assert_eq!(
            h.session_name("abcdef1234567890"),
            "Claude Code session abcdef1234567890"
        );
        // A v4 UUID keeps its start; one not recorded is named by its short form.
        assert_eq!(
            h.session_label("dc5c038f-fe1b-4284-bef5-f12c0c71733d"),
            "dc5c038f"
        );
    }

    /// A patch of 100,000 files: the session keeps the newest of them, and looks at no
    /// more (each file was looked for in a list as long as all before it: 100,000 squared).
    #[test]
    fn a_session_keeps_the_newest_files_of_a_huge_patch() {
        let t0 = Utc::now();
        let mut h = crate::task::testing::running("Generate", &[], t0);
        h.note_session("s", None, SessionStatus::Active, t0);
        let names: Vec<String> = (0..100_000).map(|i| format!("gen/f{i}.txt")).collect();
        let files: Vec<&str> = names.iter().map(String::as_str).collect();
        h.note_work("s", &files);
        let kept = &h.session_mut("s").unwrap().files;
        assert_eq!(kept.len(), SESSION_FILES);
        assert_eq!(kept.last().map(String::as_str), Some("gen/f99999.txt"));
    }

    #[test]
    fn sessions_are_kept_per_id_and_bounded() {
        let t0 = Utc::now();
        let mut h = Hook::new("t", "w", 0, t0);
        h.note_session("a", None, SessionStatus::Active, t0);
        h.note_session("b", None, SessionStatus::Active, t0 + Duration::seconds(5));
        assert_eq!(h.session().unwrap().session_id, "b");
        h.note_session("a", None, SessionStatus::Idle, t0 + Duration::seconds(9));
        assert_eq!(h.sessions.len(), 2);
        assert_eq!(h.session().unwrap().session_id, "a");
        let since = t0 + Duration::seconds(1);
        let others: Vec<_> = h.others_since("a", since).map(|s| &s.session_id).collect();
        assert_eq!(others, ["b"]);
        for i in 0..20 {
            let at = t0 + Duration::seconds(10 + i);
            h.note_session(&format!("s{i}"), None, SessionStatus::Ended, at);
        }
        assert_eq!(h.sessions.len(), MAX_SESSIONS);
        // The one mid-turn is kept whatever its age.
        assert!(h.session_mut("b").is_some());
    }

    /// A failed turn is news until the session works again (an active event), not past
    /// an idle one; an event that ends a wait is recorded at once, though quiet events
    /// are recorded at most once a minute.
    #[test]
    fn a_new_turn_ends_a_failed_one_and_a_wait_is_recorded_at_once() {
        let t0 = Utc::now();
        let mut h = Hook::new("t", "w", 0, t0);
        h.note_session("s", None, SessionStatus::Active, t0);
        h.session_mut("s").unwrap().failed_turn = Some(crate::task::FailedTurn {
            error: "unknown".into(),
            message: "boom".into(),
            at: t0,
        });
        h.note_session("s", None, SessionStatus::Idle, t0 + Duration::seconds(1));
        assert!(h.session_mut("s").unwrap().failed_turn.is_some());
        h.note_session("s", None, SessionStatus::Active, t0 + Duration::seconds(2));
        assert!(h.session_mut("s").unwrap().failed_turn.is_none());
        // Ten seconds later, same status: recorded only because it ends a wait.
        let later = t0 + Duration::seconds(12);
        h.note_session("s", None, SessionStatus::Active, later);
        assert_ne!(h.session_mut("s").unwrap().last_event_at, later);
        h.session_mut("s").unwrap().waiting_for = Some("permission".into());
        h.note_session("s", None, SessionStatus::Active, later);
        let s = h.session_mut("s").unwrap();
        assert_eq!((s.last_event_at, s.waiting_for.as_deref()), (later, None));
    }

    /// A quiet event is recorded once a minute has passed, not before.
    #[test]
    fn a_quiet_event_is_recorded_past_a_minute() {
        let t0 = Utc::now();
        let mut h = Hook::new("t", "w", 0, t0);
        h.note_session("s", None, SessionStatus::Active, t0);
        let at = |h: &mut Hook, secs| {
            h.note_session(
                "s",
                None,
                SessionStatus::Active,
                t0 + Duration::seconds(secs),
            );
            h.session_mut("s").unwrap().last_event_at
        };
        assert_eq!(at(&mut h, 60), t0);
        assert_eq!(at(&mut h, 61), t0 + Duration::seconds(61));
    }

    /// The session an event comes from is never the one dropped to stay in bounds.
    #[test]
    fn the_session_sending_the_event_is_never_dropped() {
        let t0 = Utc::now();
        let mut h = Hook::new("t", "w", 0, t0);
        for i in 0..MAX_SESSIONS {
            let at = t0 + Duration::seconds(i as i64 + 1);
            h.note_session(&format!("s{i}"), None, SessionStatus::Active, at);
        }
        // The newcomer is ended and the oldest: the oldest other session goes instead.
        h.note_session("new", None, SessionStatus::Ended, t0);
        assert!(h.session_mut("new").is_some());
        assert!(h.session_mut("s0").is_none());
        assert_eq!(h.sessions.len(), MAX_SESSIONS);
    }

    /// What a session's events tell of it: its process, where it works, its running
    /// subagents, and the files it touched in the current step (cleared with the step).
    #[test]
    fn a_session_keeps_its_owner_place_agents_and_files() {
        use crate::task::{StepSource, StepStatus};
        let t0 = Utc::now();
        let mut h = Hook::new("t", "w", 0, t0);
        h.note_session("s", None, SessionStatus::Active, t0);
        let owner = Owner { pid: 42, start: 7 };
        h.set_owner("s", Some(owner));
        h.set_owner("s", None);
        h.set_cwd("s", Some("/w/sub".into()));
        h.note_agent("s", "reviewer-1", true);
        h.note_agent("s", "tester-2", true);
        h.note_agent("s", "reviewer-1", false);
        h.add_step("1", "Parse", "", None, StepSource::Task, t0);
        h.set_step_status("1", StepStatus::InProgress, 3, t0)
            .unwrap();
        h.note_work("s", &["a.rs", "b.rs"]);
        h.note_work("s", &["a.rs"]);
        let s = h.session_mut("s").unwrap().clone();
        assert_eq!(s.owner, Some(owner));
        assert_eq!(s.cwd.as_deref(), Some("/w/sub"));
        assert_eq!(s.agents, ["tester-2"]);
        assert_eq!(
            (s.step.as_deref(), s.files.as_slice()),
            (Some("Parse"), &["a.rs".to_string(), "b.rs".to_string()][..])
        );
        // Another step: its files start over.
        h.add_step("2", "Test", "", None, StepSource::Task, t0);
        h.set_step_status("1", StepStatus::Completed, 3, t0)
            .unwrap();
        h.set_step_status("2", StepStatus::InProgress, 3, t0)
            .unwrap();
        h.note_work("s", &["t.rs"]);
        let s = h.session_mut("s").unwrap();
        assert_eq!(
            (s.step.as_deref(), s.files.as_slice()),
            (Some("Test"), &["t.rs".to_string()][..])
        );
        h.set_cwd("s", None);
        assert_eq!(h.session_mut("s").unwrap().cwd, None);
    }
}
