//! The repeat guard: after a crash, the step that is resumed must not do again what it
//! already did outside the work tree (a push, a pull request, a release, a deploy). Its
//! side effects were recorded with their outcomes as they happened; a PreToolUse for the
//! same command, in the resumed step, is asked about (`repeat_guard: "ask"`, the default)
//! or refused (`"deny"`). Pure: the caller loads the task.

use crate::task::{Hook, SideEffect};
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
        .find(|e| guarded(e) && same_form(&e.command) == wanted)?;
    let (cmd, name) = (
        one_line(&crate::text::truncate(&done.command, 200)),
        one_line(&step.step_name),
    );
    let (at, check) = (stamp(done.at), how_to_check(&done.command));
    Some(match done.unknown {
        true => format!(
            "waymark repeat guard: `{cmd}` was running in step \"{name}\" when the session crashed ({at}): whether it took effect is unknown. {check} Run it again only if it did not: once checked, it is not asked about again."
        ),
        false => format!(
            "waymark repeat guard: step \"{name}\" already ran `{cmd}` successfully before the session crashed (exit 0, {at}). Running it again may repeat its effect (a second push, a duplicate pull request, another deploy). {check} Run it again only if it is meant to: once checked, it is not asked about again."
        ),
    })
}

/// Whether a recorded side effect still stops its command from running again unasked: it
/// succeeded or its outcome is unknown, and nobody has checked it since the crash.
fn guarded(e: &SideEffect) -> bool {
    (e.exit_code == 0 || e.unknown) && !e.checked
}

/// How to tell whether a side effect took effect, by what it is: the check the brief and
/// the guard name, which [`settle`] recognizes when the agent runs it.
pub fn how_to_check(command: &str) -> &'static str {
    let kinds = crate::shell::classify(command, &[], &[]);
    if kinds.git_push {
        "Check first: `git fetch` then `git status -sb` (or `git ls-remote`) shows whether the remote has the commits."
    } else if kinds.pr_create {
        "Check first: `gh pr list --head \"$(git branch --show-current)\"` shows whether the pull request exists."
    } else {
        "Check first where it acts (the release, the registry, the deployment), then say so with `waymark step checked`."
    }
}

/// After a crash, `command` (one the agent ran, and that succeeded) may be the check
/// [`how_to_check`] names for the resumed step's guarded side effects: a command that asks
/// the remote (`git fetch`, `git ls-remote`, `git remote show`, `git pull`) for a push,
/// `gh pr list|view|status` for a pull request. Those it checks are marked checked, and
/// the guard lets them run again: the brief's "run it again only if it did not" is then
/// the agent's to judge. Returns whether any was.
pub fn settle(hook: &mut Hook, command: &str) -> bool {
    let check = crate::shell::remote_check(command);
    if check == crate::shell::RemoteCheck::default() {
        return false;
    }
    let settled = settle_where(hook, |e| {
        let kinds = crate::shell::classify(&e.command, &[], &[]);
        (kinds.git_push && check.push) || (kinds.pr_create && check.pull_request)
    });
    !settled.is_empty()
}

/// `waymark step checked`: the agent checked every guarded side effect of the resumed
/// step where it acts. Returns their commands.
pub fn settle_all(hook: &mut Hook) -> Vec<String> {
    settle_where(hook, |_| true)
}

/// Marks checked the resumed step's guarded side effects that `checks`; their commands.
fn settle_where(hook: &mut Hook, checks: impl Fn(&SideEffect) -> bool) -> Vec<String> {
    let Some(step) = hook.current_step.as_mut().filter(|c| c.resumed_after_crash) else {
        return Vec::new();
    };
    let mut settled = Vec::new();
    for e in step.side_effects.iter_mut().filter(|e| guarded(e)) {
        if checks(e) {
            e.checked = true;
            settled.push(e.command.clone());
        }
    }
    settled
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
            "Check first where it acts (the release, the registry, the deployment), then say so with `waymark step checked`."
        );
    }

    /// The guard and the brief agree: once the agent ran the check the brief names, the
    /// side effect it checks runs again unasked; a command that checks nothing, or checks
    /// another kind, changes nothing; `waymark step checked` settles the rest.
    #[test]
    fn the_check_the_brief_names_lets_the_command_run_again() {
        let mut h = resumed(&[("gh pr create --fill", 0), ("./deploy.sh prod", 0)]);
        let c = h.current_step.as_mut().unwrap();
        c.side_effects.push(SideEffect {
            command: "git push origin main".into(),
            exit_code: -1,
            at: Utc::now(),
            unknown: true,
            checked: false,
        });
        let all = [
            "git push origin main",
            "gh pr create --fill",
            "./deploy.sh prod",
        ];
        for not_a_check in ["git status -sb", "echo git fetch", "git log", "ls"] {
            assert!(!settle(&mut h, not_a_check), "{not_a_check}");
        }
        assert!(all.iter().all(|c| check(&h, c).is_some()));
        for fetch in [
            "git fetch",
            "git -C . fetch origin && git status -sb",
            "git ls-remote origin",
            "git remote show origin",
        ] {
            let mut h = h.clone();
            assert!(settle(&mut h, fetch), "{fetch}");
            assert_eq!(check(&h, "git push origin main"), None, "{fetch}");
            assert!(check(&h, "gh pr create --fill").is_some(), "{fetch}");
        }
        assert!(settle(&mut h, "gh pr list --head main"));
        assert_eq!(check(&h, "gh pr create --fill"), None);
        assert!(!settle(&mut h, "gh pr view 12"), "already checked");
        assert_eq!(
            settle_all(&mut h),
            ["./deploy.sh prod", "git push origin main"]
        );
        assert!(all.iter().all(|c| check(&h, c).is_none()));
        assert!(settle_all(&mut h).is_empty());
        // Before a crash nothing is guarded, so nothing is settled.
        let mut fresh = resumed(&[("git push", 0)]);
        fresh.current_step.as_mut().unwrap().resumed_after_crash = false;
        assert!(settle_all(&mut fresh).is_empty());
    }
}
