//! Issue 49, "The goal survives", through the real CLI: what a new user meets outside the
//! model's world. The goal after "continue"; a crash told once, whoever settles it (a
//! session that only reads, a person's `waymark step`); a fork; the attempts running out
//! and the way out; advice for a step already done; a finished plan; files written from
//! Bash. Each on 2.1.197 (TaskCreate) and 2.1.332 (`waymark plan` from Bash).

use std::fs;

use serde_json::{Value, json};

use crate::fake_api::{FakeApi, Turn};
use crate::harness::{Sandbox, Version, bash, cli, crash, git};
use crate::resume::{has, lacks, next_brief, sandbox, start_then_sleep, step, waymark_part, write};
use crate::{last_session, strs};

on_each_version!(
    the_goal_survives_continue,
    a_crash_is_told_once_to_a_session_that_only_reads,
    a_person_settling_the_step_ends_the_crash,
    a_fork_of_a_crashed_session_declares_the_crash,
    human_needed_is_one_rule_with_a_way_out,
    a_step_not_started_counts_against_the_configured_maximum,
    a_failed_validation_of_a_step_done_asks_for_no_fix,
    a_finished_plan_stays_finished,
    files_written_from_bash_are_named,
);

/// How many times the task's history declares a crash.
pub(crate) fn crashes_declared(hook: &Value) -> usize {
    hook["history"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|h| h["trigger"] == "crash_detected")
        .count()
}

/// The brief of `api`'s first request (a resumed or forked conversation carries the
/// earlier session's context too: the brief is the text that says it is one).
fn first_brief(api: &FakeApi, sb: &Sandbox) -> String {
    let text = api.main_requests()[0]
        .find_text("Resume brief")
        .unwrap_or_else(|| panic!("no brief\n{}", sb.diagnose(api)));
    waymark_part(&text)
}

/// A session plans `steps`, starts the first, writes `src/work.txt` and is killed mid-turn.
fn crashed_in_a_step(sb: &Sandbox, tag: &str, steps: &[&str]) {
    let mut turns = sb.plan(steps);
    turns.push(sb.start_step(1));
    turns.push(write(sb, "src/work.txt", "half done\n"));
    let (child, pid, _api) = start_then_sleep(sb, tag, turns);
    crash(child, &pid);
}

/// Item 1: after the crash the user types "continue"; the next brief still names the task
/// by the request that began it, and says nothing of "continue".
fn the_goal_survives_continue(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("goal", json!({}), version);
    crashed_in_a_step(&sb, "E2E-GOAL", &["Handle leap years"]);
    let api = FakeApi::start(vec![
        write(&sb, "src/more.txt", "the rest\n"),
        Turn::text("E2E-GOAL-B done"),
    ]);
    sb.run_ok(&api, &["-p", "continue"], "E2E-GOAL-B done");
    let brief = next_brief(&sb, "E2E-GOAL-C");
    has(&brief, &["The task: E2E-GOAL go", "\"Handle leap years\""]);
    lacks(&brief, &["continue", "CRASH DETECTED"]);
    let md = sb.read(".orchestration/HOOK.md");
    assert!(md.contains("- **The task:** E2E-GOAL"), "{md}");
}

/// Item 2: the session told of the crash only answers and stops; the sessions after it are
/// not told again, and the step's next attempt is still the one the crash made.
fn a_crash_is_told_once_to_a_session_that_only_reads(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("told-once", json!({}), version);
    crashed_in_a_step(&sb, "E2E-RO", &["Handle leap years"]);
    let api = FakeApi::start(vec![Turn::text("E2E-RO-B it crashed")]);
    sb.run_ok(
        &api,
        &["-p", "E2E-RO-B what happened?"],
        "E2E-RO-B it crashed",
    );
    has(&first_brief(&api, &sb), &["CRASH DETECTED"]);
    for marker in ["E2E-RO-C", "E2E-RO-D"] {
        let brief = next_brief(&sb, marker);
        lacks(&brief, &["CRASH DETECTED", "Recovery:"]);
        has(&brief, &["resuming makes it attempt 2 of 3"]);
    }
    assert_eq!(crashes_declared(&sb.hook_json()), 1);
}

/// Item 2: a person at a terminal runs crash detection (`waymark recover`), then marks the
/// crashed step done; the next brief goes on to the next step with no crash to announce.
fn a_person_settling_the_step_ends_the_crash(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("settled", json!({}), version);
    crashed_in_a_step(&sb, "E2E-ST", &["Write the parser", "Ship it"]);
    // The person asks first (crash detection, as a session start runs it), then settles.
    let out = sb.waymark(&["recover"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("CRASH DETECTED"),
        "{out:?}"
    );
    let out = sb.waymark(&["step", "done", "1"]);
    assert!(out.status.success(), "{out:?}");
    let brief = next_brief(&sb, "E2E-ST-NEXT");
    lacks(&brief, &["CRASH DETECTED", "Recovery:"]);
    has(
        &brief,
        &[
            "\"Ship it\" (attempt 1 of 3)",
            "DO NOT REPEAT",
            "\"Write the parser\"",
        ],
    );
}

/// Item 3: `claude --resume <id> --fork-session` of the crashed session: its start finds
/// the crash (2.1.332 sends SessionStart source `fork`).
fn a_fork_of_a_crashed_session_declares_the_crash(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("fork", json!({}), version);
    crashed_in_a_step(&sb, "E2E-FK", &["Handle leap years"]);
    let id = strs(&last_session(&sb.hook_json())["session_id"]).to_string();
    let api = FakeApi::start(vec![Turn::text("E2E-FK-FORK done")]);
    sb.run_ok(
        &api,
        &[
            "--resume",
            &id,
            "--fork-session",
            "-p",
            "E2E-FK-FORK carry on",
        ],
        "E2E-FK-FORK done",
    );
    has(
        &first_brief(&api, &sb),
        &["CRASH DETECTED", "\"Handle leap years\""],
    );
    assert_eq!(crashes_declared(&sb.hook_json()), 1);
}

/// Item 4: the attempts spent in crashes: `waymark step start` is refused every time, not
/// once; the brief's way out (`waymark step retry`) works, and no line beside HUMAN
/// NEEDED says to go on.
fn human_needed_is_one_rule_with_a_way_out(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("way-out", json!({"max_attempts": 2}), version);
    crashed_in_a_step(&sb, "E2E-WO1", &["Migrate the schema"]);
    let (child, pid, _api) =
        start_then_sleep(&sb, "E2E-WO2", vec![write(&sb, "src/b.txt", "again\n")]);
    crash(child, &pid);
    let brief = next_brief(&sb, "E2E-WO3");
    has(
        &brief,
        &[
            "HUMAN NEEDED",
            "Recommended action: none without the user",
            "`waymark step retry ",
        ],
    );
    lacks(
        &brief,
        &[
            "keep the work done since it and go on",
            "Resume step",
            "Recovery:",
        ],
    );
    for _ in 0..2 {
        let out = sb.waymark(&["step", "start", "1"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("waymark step retry"), "{err}");
    }
    let out = sb.waymark(&["step", "retry", "1"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.contains("attempt 3 of 3"),
        "{said}"
    );
    let brief = next_brief(&sb, "E2E-WO4");
    has(&brief, &["attempt 3 of 3"]);
    lacks(&brief, &["HUMAN NEEDED"]);
}

/// Item 4: a step not started yet is counted against the configured `max_attempts`.
fn a_step_not_started_counts_against_the_configured_maximum(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("max-nine", json!({"max_attempts": 9}), version);
    let mut turns = sb.plan(&["Write the parser", "Ship it"]);
    turns.extend([
        sb.start_step(1),
        write(&sb, "src/p.txt", "p\n"),
        sb.finish_step(1),
        Turn::text("E2E-M9 done"),
    ]);
    let api = FakeApi::start(turns);
    sb.run_ok(&api, &["-p", "E2E-M9 go"], "E2E-M9 done");
    let brief = next_brief(&sb, "E2E-M9-NEXT");
    has(&brief, &["\"Ship it\" (attempt 1 of 9)"]);
    lacks(&brief, &["of 3"]);
}

/// Item 5: a validation failed in a step that was then marked done: the brief keeps the
/// failure as a fact, but does not tell the agent to fix it and run it again.
fn a_failed_validation_of_a_step_done_asks_for_no_fix(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("done-anyway", json!({}), version);
    let mut turns = sb.plan(&["Fix the parser", "Ship it"]);
    turns.extend([
        sb.start_step(1),
        bash("./check.sh"),
        sb.finish_step(1),
        Turn::text("E2E-DA done"),
    ]);
    let api = FakeApi::start(turns);
    sb.run_ok(&api, &["-p", "E2E-DA go"], "E2E-DA done");
    let brief = next_brief(&sb, "E2E-DA-NEXT");
    has(
        &brief,
        &[
            "Last failed validation (step \"Fix the parser\")",
            "its step was marked completed since",
            "DO NOT REPEAT",
        ],
    );
    lacks(&brief, &["fix what the output says", "E2E-WHY"]);
}

/// Item 6: the last step done, then a commit in the same turn: the task is completed, no
/// "Session work" opens, the next session is told so in one line, and its request starts
/// a new task.
fn a_finished_plan_stays_finished(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("finished", json!({}), version);
    let mut turns = step(&sb, "Handle leap years");
    turns.extend([
        write(&sb, "src/leap.txt", "leap\n"),
        sb.finish_step(1),
        bash("git add -A && git commit -qm 'Handle leap years'"),
        Turn::text("E2E-FIN done"),
    ]);
    let api = FakeApi::start(turns);
    sb.run_ok(&api, &["-p", "E2E-FIN go"], "E2E-FIN done");
    let hook = sb.hook_json();
    let why = sb.diagnose(&api);
    assert_eq!(hook["state"], "completed", "{why}");
    let finished = strs(&hook["task_id"]).to_string();
    assert!(!hook.to_string().contains("Session work"), "{hook:#}");
    let brief = next_brief(&sb, "E2E-FIN-NEXT");
    has(
        &brief,
        &[&format!("Task {finished} is completed: nothing to resume.")],
    );
    lacks(
        &brief,
        &["Session work", "No plan was kept", "Resume brief"],
    );
    let next = sb.hook_json();
    assert_ne!(
        strs(&next["task_id"]),
        finished,
        "a new request, a new task"
    );
    assert_eq!(next["goal"], "E2E-FIN-NEXT carry on");
}

/// Item 7: with no plan, the work written from Bash (a redirection the shell reader names,
/// a generator it cannot) is named after the crash, and HOOK.md shows no "Session work".
fn files_written_from_bash_are_named(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("bash-writes", json!({}), version);
    fs::write(
        sb.project.join("gen.sh"),
        "#!/bin/sh\nmkdir -p src && echo a > src/gen_a.rs && echo b > src/gen_b.rs\n",
    )
    .unwrap();
    git(&sb.project, &["add", "gen.sh"]);
    git(&sb.project, &["commit", "-q", "-m", "the generator"]);
    let turns = vec![
        bash("mkdir -p src && printf 'fn parse() {}\\n' > src/parser.rs"),
        bash("sh gen.sh"),
    ];
    let (child, pid, _api) = start_then_sleep(&sb, "E2E-BW", turns);
    crash(child, &pid);
    let brief = next_brief(&sb, "E2E-BW-NEXT");
    has(
        &brief,
        &[
            "Files changed so far (read them before editing again): src/parser.rs.",
            "3 files, +3/−0 lines (3 new): src/gen_a.rs, src/gen_b.rs, src/parser.rs.",
        ],
    );
    lacks(&brief, &["no file is recorded as changed yet"]);
    let md = sb.read(".orchestration/HOOK.md");
    assert!(
        !md.contains("Session work") && md.contains("No plan was kept"),
        "{md}"
    );
}
