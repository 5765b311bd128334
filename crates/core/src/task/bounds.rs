//! What a task keeps is bounded, whatever its files hold (docs/state.md, "Bounds"): a
//! hand-edited or planted hook.json or plan.json is cut to the bounds when it is read, and
//! the lists grow no further than them as events come. Every event reads and writes the
//! task whole, so a list without a bound makes every later event dearer.

use super::model::{Hook, MAX_SESSIONS, Session, SessionStatus};

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
    /// Cuts what was read to the bounds: the sessions to [`MAX_SESSIONS`], the lists of
    /// files to [`MAX_STEP_FILES`], the steps' names and descriptions to theirs.
    pub fn bound(&mut self) {
        self.trim_sessions(None);
        self.unassigned_files.truncate(MAX_STEP_FILES);
        if let Some(c) = self.current_step.as_mut() {
            c.files_touched.truncate(MAX_STEP_FILES);
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
}
