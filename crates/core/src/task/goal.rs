//! What the task is for: the request that began it. After a crash the user types
//! "continue", and from then on the last prompt says nothing of the task; the brief names
//! the goal in every session, and the latest request beside it only when it says
//! something new (docs/recovery.md, "The goal").

use super::Hook;

/// Words that only tell the agent to go on. A prompt made of nothing else (at most
/// [`GO_ON_WORDS`] of them) asks for nothing new.
const GO_ON: &[&str] = &[
    "a", "again", "ahead", "alright", "and", "are", "carry", "continue", "cool", "do", "done",
    "fine", "from", "go", "going", "good", "great", "it", "k", "keep", "left", "let", "lets",
    "now", "off", "ok", "okay", "on", "please", "pls", "proceed", "resume", "right", "same", "so",
    "sounds", "sure", "task", "thanks", "that", "the", "then", "there", "thx", "up", "we", "where",
    "work", "y", "yeah", "yep", "yes", "you", "pick", "next", "step", "s",
];

/// The most words a go-on prompt has.
const GO_ON_WORDS: usize = 8;

/// Whether `prompt` only tells the agent to go on ("continue", "carry on", "ok, go
/// ahead"): no request of its own.
pub fn goes_on(prompt: &str) -> bool {
    let lower = prompt.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    words.len() <= GO_ON_WORDS && words.iter().all(|w| GO_ON.contains(w))
}

impl Hook {
    /// The user asked `request` (redacted and bounded by the caller): the task's latest
    /// request, and its goal when it has none yet and this one asks for something.
    pub fn note_request(&mut self, request: String) {
        if self.goal.is_none() && !goes_on(&request) {
            self.goal = Some(request.clone());
        }
        self.last_prompt = Some(request);
    }

    /// The latest request, when it says something the goal and the step do not: not the
    /// goal again, not a go-on prompt.
    pub fn news(&self) -> Option<&str> {
        let p = self.last_prompt.as_deref()?;
        let step = self.current_step.as_ref().map(|c| c.working_on.as_str());
        let said = self.goal.as_deref() == Some(p) || step == Some(p);
        (!said && !goes_on(p)).then_some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    #[test]
    fn a_prompt_that_only_says_go_on_asks_for_nothing() {
        for p in [
            "continue",
            "Carry on.",
            "ok, go ahead",
            "yes please",
            "continue where you left off",
            "",
            "Keep going!",
        ] {
            assert!(goes_on(p), "{p:?}");
        }
        for p in [
            "add a nil-safe parser",
            "continue, but skip the tests",
            "go on with the leap years",
            "carry on carry on carry on carry on carry on",
        ] {
            assert!(!goes_on(p), "{p:?}");
        }
    }

    #[test]
    fn the_goal_is_the_first_request_and_a_go_on_prompt_is_no_news() {
        let mut h = Hook::new("t", "w", 0, Utc::now());
        h.note_request("continue".into());
        assert_eq!((h.goal.as_deref(), h.news()), (None, None));
        h.note_request("add a nil-safe parser".into());
        assert_eq!(h.goal.as_deref(), Some("add a nil-safe parser"));
        assert_eq!(h.news(), None, "the goal itself is no news");
        h.note_request("carry on".into());
        assert_eq!(h.goal.as_deref(), Some("add a nil-safe parser"));
        assert_eq!(h.news(), None);
        h.note_request("also handle leap years".into());
        assert_eq!(h.goal.as_deref(), Some("add a nil-safe parser"));
        assert_eq!(h.news(), Some("also handle leap years"));
    }
}
