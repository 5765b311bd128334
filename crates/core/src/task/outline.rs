//! The plan's outline: what recovery says of a plan besides listing it. How many steps,
//! the one to resume, the next few, the last few done. HOOK.md and the resume brief draw
//! it from the steps.

use super::model::{Step, StepSource, StepStatus};

/// How many of the pending steps after the one to resume are named ("Then: …"). The next
/// few are what an agent acts on; a long plan listed in full would crowd the rest out of
/// the brief (HOOK.md's Step Plan lists it all).
pub const NEXT_STEPS_NAMED: usize = 5;

/// How many of the completed steps, the last ones in plan order, the brief and HOOK.md's
/// DO NOT name one by one. HOOK.md's Completed Steps table lists every one.
pub const DONE_STEPS_NAMED: usize = 10;

/// Whether a step is numbered: not deleted, and not the catch-all for work with no plan
/// (no step of the user's).
pub(crate) fn numbered(s: &Step) -> bool {
    s.status != StepStatus::Deleted && s.source != StepSource::Implicit
}

/// The number of the step at `index` in `steps`, as `waymark plan` lists it, `waymark step
/// start N` takes it and every brief and HOOK.md says it: its place among the numbered
/// steps. One numbering everywhere, so that "step 2" in the brief is `waymark step start 2`.
pub fn number(steps: &[Step], index: usize) -> usize {
    steps[..index.min(steps.len())]
        .iter()
        .filter(|s| numbered(s))
        .count()
        + 1
}

#[derive(Debug, Clone, PartialEq)]
pub struct Outline {
    /// How many numbered steps the plan has ([`number`]).
    pub step_count: usize,
    /// Every step that is not deleted is completed (and there is one).
    pub all_completed: bool,
    /// The first pending steps: one more than [`NEXT_STEPS_NAMED`], so that the step to
    /// resume can be left out of them.
    pub pending: Vec<Named>,
    /// How many steps are pending.
    pub pending_count: usize,
    /// The last [`DONE_STEPS_NAMED`] completed steps, in plan order.
    pub done: Vec<Done>,
    /// How many steps are completed.
    pub done_count: usize,
}

/// A step by its id and name.
#[derive(Debug, Clone, PartialEq)]
pub struct Named {
    pub id: String,
    pub name: String,
}

/// A completed step as the brief and DO NOT name it.
#[derive(Debug, Clone, PartialEq)]
pub struct Done {
    /// Its number ([`number`]).
    pub number: usize,
    pub name: String,
    pub receipt_ids: Vec<String>,
}

/// "Then: …": the pending steps after the one to resume, the first few by name.
#[derive(Debug, Clone, PartialEq)]
pub struct Then<'a> {
    pub named: Vec<&'a str>,
    pub more: usize,
}

impl Outline {
    /// The outline of `steps`.
    pub fn of(steps: &[Step]) -> Outline {
        let with = |status| (0..steps.len()).filter(move |&i| steps[i].status == status);
        let pending: Vec<usize> = with(StepStatus::Pending).collect();
        let done: Vec<usize> = with(StepStatus::Completed).collect();
        let live = steps.len() - with(StepStatus::Deleted).count();
        Outline {
            step_count: steps.iter().filter(|s| numbered(s)).count(),
            all_completed: live > 0 && live == done.len(),
            pending: pending
                .iter()
                .take(NEXT_STEPS_NAMED + 1)
                .map(|&i| Named {
                    id: steps[i].id.clone(),
                    name: steps[i].name.clone(),
                })
                .collect(),
            pending_count: pending.len(),
            done: done[done.len().saturating_sub(DONE_STEPS_NAMED)..]
                .iter()
                .map(|&i| Done {
                    number: number(steps, i),
                    name: steps[i].name.clone(),
                    receipt_ids: steps[i].receipt_ids.clone(),
                })
                .collect(),
            done_count: done.len(),
        }
    }

    /// The pending steps after `resume` (the step to resume, if any), the first
    /// [`NEXT_STEPS_NAMED`] by name; `None` when there is none.
    pub fn then(&self, resume: Option<&Step>) -> Option<Then<'_>> {
        let is_resumed = |id: &str| resume.is_some_and(|r| r.id == id);
        let named: Vec<&str> = self
            .pending
            .iter()
            .filter(|n| !is_resumed(&n.id))
            .take(NEXT_STEPS_NAMED)
            .map(|n| n.name.as_str())
            .collect();
        if named.is_empty() {
            return None;
        }
        // The step to resume, when pending, is one of the pending steps counted.
        let resumed = resume.is_some_and(|r| r.status == StepStatus::Pending) as usize;
        let more = self.pending_count.saturating_sub(resumed + named.len());
        Some(Then { named, more })
    }

    /// How many completed steps come before the ones [`Outline::done`] names.
    pub fn done_earlier(&self) -> usize {
        self.done_count - self.done.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::StepSource;
    use chrono::Utc;

    fn plan(statuses: &[StepStatus]) -> Vec<Step> {
        let now = Utc::now();
        let mut h = crate::task::Hook::new("t", "w", 0, now);
        for (i, status) in statuses.iter().enumerate() {
            let id = (i + 1).to_string();
            h.add_step(
                &id,
                &format!("Part {}", i + 1),
                "",
                None,
                StepSource::Task,
                now,
            );
            h.steps[i].status = *status;
        }
        h.steps
    }

    /// The step to resume when none is current: the first in progress, else the first
    /// pending.
    fn next(steps: &[Step]) -> Option<&Step> {
        let first = |status| steps.iter().find(|s| s.status == status);
        first(StepStatus::InProgress).or_else(|| first(StepStatus::Pending))
    }

    #[test]
    fn names_the_step_to_resume_the_next_few_and_the_last_ones_done() {
        use StepStatus::*;
        let mut statuses = vec![Completed; 12];
        statuses.extend([Deleted, InProgress]);
        statuses.extend(vec![Pending; 8]);
        let steps = plan(&statuses);
        let o = Outline::of(&steps);
        // The deleted step is not counted, as `waymark plan` does not number it.
        assert_eq!(o.step_count, 21);
        assert_eq!(o.done[9].number, 12);
        assert_eq!(next(&steps).map(|s| s.name.as_str()), Some("Part 14"));
        assert!(!o.all_completed);
        assert_eq!((o.done_count, o.done_earlier()), (12, 2));
        assert_eq!(o.done[0].name, "Part 3");
        let then = o.then(next(&steps)).unwrap();
        assert_eq!(
            then.named,
            ["Part 15", "Part 16", "Part 17", "Part 18", "Part 19"]
        );
        assert_eq!(then.more, 3);
    }

    #[test]
    fn a_pending_step_to_resume_is_left_out_of_what_comes_then() {
        use StepStatus::*;
        let steps = plan(&[Completed, Pending, Pending, Deleted]);
        let o = Outline::of(&steps);
        let resume = next(&steps).unwrap();
        assert_eq!(resume.name, "Part 2");
        let then = o.then(Some(resume)).unwrap();
        assert_eq!((then.named, then.more), (vec!["Part 3"], 0));
        // With no step to resume (a human must decide), the next one is named too.
        assert_eq!(o.then(None).unwrap().named, ["Part 2", "Part 3"]);
        let done = plan(&[Completed, Deleted, Completed]);
        let all = Outline::of(&done);
        assert!(all.all_completed && next(&done).is_none() && all.then(None).is_none());
        assert!(!Outline::of(&[]).all_completed);
    }

    /// The outline names one pending step past the ones a brief lists, so that it can say
    /// more follow; and counts them all.
    #[test]
    fn the_pending_steps_named_are_one_past_those_listed() {
        let o = Outline::of(&plan(&[StepStatus::Pending; 9]));
        assert_eq!(o.pending.len(), NEXT_STEPS_NAMED + 1);
        assert_eq!(o.pending_count, 9);
    }
}
