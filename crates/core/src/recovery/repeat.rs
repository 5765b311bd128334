//! The repeat guard: after a crash, the step that is resumed must not do again what it
//! already did outside the work tree (a push, a pull request, a release, a deploy). Its
//! side effects were recorded with their outcomes as they happened; a PreToolUse for the
//! same command, in the resumed step, is asked about (`repeat_guard: "ask"`, the default)
//! or refused (`"deny"`). Pure: the caller loads the task.

use crate::task::Hook;
use crate::text::{one_line, stamp};

/// Why `command` (one the caller classified as having side effects) should not run again
/// unasked, if it repeats a side effect the resumed step already had succeed.
pub fn check(hook: &Hook, command: &str) -> Option<String> {
    let step = hook
        .current_step
        .as_ref()
        .filter(|c| c.resumed_after_crash)?;
    // What was stored was redacted: compare the command as it would have been stored.
    let wanted = same_form(command);
    let done = step
        .side_effects
        .iter()
        .rev()
        .find(|e| (e.exit_code == 0 || e.unknown) && same_form(&e.command) == wanted)?;
    if done.unknown {
        return Some(format!(
            "waymark repeat guard: `{}` was running in step \"{}\" when the session crashed ({}): whether it took effect is unknown. {} Run it again only if it did not.",
            one_line(&crate::text::truncate(&done.command, 200)),
            step.step_name,
            stamp(done.at),
            how_to_check(&done.command)
        ));
    }
    Some(format!(
        "waymark repeat guard: step \"{}\" already ran `{}` successfully before the session crashed (exit 0, {}). Running it again may repeat its effect (a second push, a duplicate pull request, another deploy). Go ahead only if it is meant to run again; otherwise check its result (`git status`, `git log origin/…`, the PR list) and go on.",
        step.step_name,
        one_line(&crate::text::truncate(&done.command, 200)),
        stamp(done.at)
    ))
}

/// How to tell whether an interrupted side effect took effect, by what it is.
pub fn how_to_check(command: &str) -> &'static str {
    let kinds = crate::shell::classify(command, &[], &[]);
    if kinds.git_push {
        "Check first: `git fetch` then `git status -sb` (or `git ls-remote`) shows whether the remote has the commits."
    } else if kinds.pr_create {
        "Check first: `gh pr list --head \"$(git branch --show-current)\"` shows whether the pull request exists."
    } else {
        "Check first where it acts (the release, the registry, the deployment)."
    }
}

/// A command as it is kept: on one line, redacted.
fn same_form(command: &str) -> String {
    waymark_redact::redact(&one_line(command)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    fn resumed(effects: &[(&str, i32)]) -> Hook {
        let mut h = crate::task::testing::running("Ship it", &[], Utc::now());
        for (c, code) in effects {
            h.note_side_effect(c, *code, Utc::now());
        }
        h.current_step.as_mut().unwrap().resumed_after_crash = true;
        h
    }

    #[test]
    fn a_repeated_successful_push_in_a_resumed_step_is_caught() {
        let h = resumed(&[("git push origin main", 0)]);
        let why = check(&h, "git  push origin main").unwrap();
        assert!(why.contains("already ran `git push origin main`"), "{why}");
        // Another command, or one that had failed, is not a repeat.
        assert_eq!(check(&h, "git push origin other"), None);
        assert_eq!(check(&h, "cargo test"), None);
        let failed = resumed(&[("git push origin main", 1)]);
        assert_eq!(check(&failed, "git push origin main"), None);
    }

    #[test]
    fn only_after_a_crash() {
        let mut h = resumed(&[("gh pr create --fill", 0)]);
        h.current_step.as_mut().unwrap().resumed_after_crash = false;
        assert_eq!(check(&h, "gh pr create --fill"), None);
    }

    #[test]
    fn a_secret_on_the_command_line_still_matches_its_redacted_record() {
        let cmd = "DEPLOY_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 ./deploy.sh";
        let mut h = resumed(&[]);
        // Stored as the store keeps it: redacted.
        h.note_side_effect(&waymark_redact::redact(cmd), 0, Utc::now());
        assert!(check(&h, cmd).is_some());
    }

    /// How to check an interrupted side effect depends on what it is.
    #[test]
    fn how_to_check_a_side_effect_depends_on_what_it_is() {
        assert!(how_to_check("git push -q origin main").contains("`git status -sb`"));
        assert!(how_to_check("gh pr create --fill").contains("`gh pr list --head"));
        assert_eq!(
            how_to_check("./deploy.sh prod"),
            "Check first where it acts (the release, the registry, the deployment)."
        );
    }
}
