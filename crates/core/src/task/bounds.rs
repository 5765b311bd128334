//! What a task keeps is bounded, whatever its files hold (docs/state.md, "Bounds"): a
//! hand-edited or planted hook.json or plan.json is cut to the bounds when it is read, and
//! the lists grow no further than them as events come. Every event reads and writes the
//! task whole, so a list without a bound makes every later event dearer.

use super::model::{
    Hook, MAX_SESSIONS, RECENT_CHECKPOINTS, RECENT_RECEIPTS, SESSION_FILES, SIDE_EFFECTS, Session,
    SessionStatus,
};

/// The files a step's list keeps (and the list of files touched between steps): its
/// first this many. A later one is not listed (HOOK.md says the list is full).
pub const MAX_STEP_FILES: usize = 1000;

/// The most characters a step's name (and its active form) keeps, and its description:
/// the words come from the model or the user, and a 10 MB name would make every later
/// event read and write 10 MB more. The cut is marked `…`.
pub const MAX_STEP_NAME: usize = 500;
pub const MAX_STEP_DESCRIPTION: usize = 2000;

/// Adds `file` to a list of files touched, unless it is there or the list is full;
/// whether it was added.
pub fn add_file(list: &mut Vec<String>, file: &str) -> bool {
    let add = list.len() < MAX_STEP_FILES && !list.iter().any(|f| f == file);
    if add {
        list.push(file.to_string());
    }
    add
}

/// Keeps the newest `n` items of `list` (its last ones).
pub fn keep_newest<T>(list: &mut Vec<T>, n: usize) {
    list.drain(..list.len().saturating_sub(n));
}

/// `text` cut to `max` characters, only when it may be longer: every event reads the plan,
/// and a name within its bound (nearly all) costs no copy.
fn cut(text: &mut String, max: usize) {
    if text.len() > max {
        *text = crate::text::truncate(text, max);
    }
}

impl Hook {
    /// Cuts what was read to the bounds: the sessions to [`MAX_SESSIONS`] (and each one's
    /// files to [`SESSION_FILES`]), the lists of files to [`MAX_STEP_FILES`], the recent
    /// checkpoints and receipts and the step's side effects to their newest, the steps'
    /// names and descriptions to theirs.
    pub fn bound(&mut self) {
        self.trim_sessions(None);
        for s in &mut self.sessions {
            keep_newest(&mut s.files, SESSION_FILES);
        }
        self.unassigned_files.truncate(MAX_STEP_FILES);
        keep_newest(&mut self.recent_checkpoints, RECENT_CHECKPOINTS);
        keep_newest(&mut self.recent_receipts, RECENT_RECEIPTS);
        if let Some(c) = self.current_step.as_mut() {
            c.files_touched.truncate(MAX_STEP_FILES);
            keep_newest(&mut c.side_effects, SIDE_EFFECTS);
        }
        for s in &mut self.steps {
            s.files_touched.truncate(MAX_STEP_FILES);
            cut(&mut s.name, MAX_STEP_NAME);
            cut(&mut s.description, MAX_STEP_DESCRIPTION);
            if let Some(a) = s.active_form.as_mut() {
                cut(a, MAX_STEP_NAME);
            }
        }
    }

    /// Past [`MAX_SESSIONS`], the sessions least likely to matter go: ended ones, then
    /// idle ones, the longest quiet first; never `keep` (the one an event is about). The
    /// others keep their order.
    pub(crate) fn trim_sessions(&mut self, keep: Option<&str>) {
        let excess = self.sessions.len().saturating_sub(MAX_SESSIONS);
        if excess == 0 {
            return;
        }
        let rank = |s: &Session| match s.status {
            SessionStatus::Ended => 0,
            SessionStatus::Idle => 1,
            SessionStatus::Active => 2,
        };
        let mut order: Vec<usize> = (0..self.sessions.len()).collect();
        order.sort_by_key(|&i| {
            let s = &self.sessions[i];
            (
                Some(s.session_id.as_str()) == keep,
                rank(s),
                s.last_event_at,
            )
        });
        let mut dropped = vec![false; self.sessions.len()];
        for &i in &order[..excess] {
            dropped[i] = true;
        }
        let mut i = 0;
        self.sessions.retain(|_| {
            i += 1;
            !dropped[i - 1]
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Duration, TimeZone, Utc};

    #[test]
    fn planted_sessions_are_cut_to_the_bound_keeping_the_busiest() {
        let t0 = Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap();
        let mut h = crate::task::testing::recorded_plan(t0);
        h.sessions.clear();
        for i in 0..10_000 {
            let status = match i {
                9_000 => SessionStatus::Active,
                i if i % 2 == 0 => SessionStatus::Ended,
                _ => SessionStatus::Idle,
            };
            let at = t0 + Duration::seconds(i);
            h.sessions
                .push(Session::new(&format!("s{i}"), None, status, at));
        }
        h.bound();
        let ids: Vec<&str> = h.sessions.iter().map(|s| s.session_id.as_str()).collect();
        // The one mid-turn, then the seven idle ones heard from last, in their order.
        assert_eq!(
            ids,
            [
                "s9000", "s9987", "s9989", "s9991", "s9993", "s9995", "s9997", "s9999"
            ]
        );
    }

    #[test]
    fn a_list_of_files_stops_at_its_bound() {
        let mut list = Vec::new();
        for i in 0..MAX_STEP_FILES + 10 {
            add_file(&mut list, &format!("f{i}"));
        }
        assert_eq!(list.len(), MAX_STEP_FILES);
        assert!(!add_file(&mut list, "f0"), "listed already");
        let t0 = Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap();
        let mut h = crate::task::testing::recorded_plan(t0);
        h.unassigned_files = (0..20_000).map(|i| format!("g{i}")).collect();
        h.steps[0].name = "n".repeat(10 << 20);
        h.bound();
        assert_eq!(h.unassigned_files.len(), MAX_STEP_FILES);
        assert_eq!(h.steps[0].name.chars().count(), MAX_STEP_NAME);
    }

    /// A planted hook.json's lists of the newest (checkpoints, receipts, a session's files,
    /// side effects) are cut to the newest they keep.
    #[test]
    fn planted_lists_of_the_newest_keep_the_newest() {
        let t0 = Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap();
        let mut h = crate::task::testing::recorded_plan(t0);
        h.recent_checkpoints = (0..10_000)
            .map(|n| crate::task::StepCheckpoint {
                checkpoint_id: format!("c{n}"),
                created_at: t0,
                step_name: String::new(),
                step_index: 0,
                description: String::new(),
                trigger: crate::task::CheckpointTrigger::Manual,
                git_branch: String::new(),
                git_commit: None,
                artifacts: Vec::new(),
            })
            .collect();
        h.sessions
            .push(Session::new("s", None, SessionStatus::Idle, t0));
        h.sessions[0].files = (0..10_000).map(|n| format!("f{n}")).collect();
        let c = h.current_step.as_mut().unwrap();
        c.side_effects = crate::task::testing::pushes(10_000, t0);
        h.bound();
        let kept = &h.current_step.as_ref().unwrap().side_effects;
        assert_eq!(kept.len(), SIDE_EFFECTS);
        assert_eq!(kept[0].command, "git push origin v9990");
        let ids: Vec<&str> = h
            .recent_checkpoints
            .iter()
            .map(|c| c.checkpoint_id.as_str())
            .collect();
        assert_eq!(ids, ["c9995", "c9996", "c9997", "c9998", "c9999"]);
        assert_eq!(
            h.sessions[0].files,
            [
                "f9992", "f9993", "f9994", "f9995", "f9996", "f9997", "f9998", "f9999"
            ]
        );
    }
}
