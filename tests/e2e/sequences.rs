//! Sequences of sessions with the real CLI (issue 42): what happens after the first
//! recovery. A crash is declared once, whatever the sessions after it do; the user's
//! request is quoted beside the plan; the attempt a failed validation announces is the one
//! the next work takes; the check the brief names for a push left unknown lets the push
//! run again. Each on 2.1.197 (TaskCreate) and 2.1.332 (`waymark plan` from Bash).

use std::fs;
use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use crate::fake_api::{FakeApi, Turn};
use crate::harness::{Binary, Sandbox, Version, bash, cli, crash, git, sleeping, wait_for};
use crate::resume::{
    has, lacks, next_brief, origin, sandbox, start_then_sleep, step, waymark_part, write,
};

on_each_version!(
    a_crash_is_declared_once_and_the_request_stays_beside_the_plan,
    the_attempt_a_failed_validation_announces_is_the_one_taken,
    the_check_the_brief_names_lets_an_unknown_push_run_again,
    after_waymark_init_the_setup_is_no_change_and_doctor_names_both_registrations,
    nothing_changed_since_the_commit_says_the_files_are_as_it_has_them,
);

/// How many times the task's history declares a crash.
fn crashes_declared(sb: &Sandbox) -> usize {
    let task = sb.hook_json()["task_id"].as_str().unwrap().to_string();
    let history = sb.read(&format!(".orchestration/tasks/{task}/history.jsonl"));
    history
        .lines()
        .filter(|l| l.contains("\"crash_detected\""))
        .count()
}

/// Session A is killed mid-step; B gets the crash brief, works and stops cleanly; C is
/// not told of A's crash again, and its brief quotes what the user asked beside the step.
fn a_crash_is_declared_once_and_the_request_stays_beside_the_plan(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("crash-once", json!({}), version);
    let mut turns = step(&sb, "Handle leap years");
    turns.push(write(&sb, "src/leap.txt", "half of it\n"));
    let (child, pid, _api) = start_then_sleep(&sb, "E2E-ONCE-A", turns);
    crash(child, &pid);

    let api = FakeApi::start(vec![
        write(&sb, "src/leap_more.txt", "the rest of it\n"),
        Turn::text("E2E-ONCE-B done"),
    ]);
    let b = sb.run_ok(
        &api,
        &["-p", "E2E-ONCE-B finish the leap years"],
        "E2E-ONCE-B done",
    );
    let first = waymark_part(
        &api.main_requests()[0]
            .find_text("SessionStart hook additional context")
            .unwrap_or_else(|| panic!("no brief for B\n{}", b.stdout)),
    );
    has(
        &first,
        &[
            "CRASH DETECTED",
            "attempt 1 of 3 (resuming makes it attempt 2 of 3)",
        ],
    );

    let c = next_brief(&sb, "E2E-ONCE-C");
    lacks(&c, &["CRASH DETECTED", "resuming makes it", "HUMAN NEEDED"]);
    has(
        &c,
        &[
            "\"Handle leap years\", attempt 2 of 3",
            "Working on: ",
            "The latest request: E2E-ONCE-B finish the leap years",
        ],
    );
    assert_eq!(crashes_declared(&sb), 1, "{c}");
    let hook = sb.hook_json();
    let ended: Vec<&serde_json::Value> = hook["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["status"] == "active")
        .collect();
    assert!(ended.is_empty(), "a session left active: {hook:#}");
}

/// A validation from Bash fails and the session stops: the brief announces attempt 2; the
/// next session's work takes it (and a pass keeps it); the brief after says attempt 2,
/// with no new attempt promised.
fn the_attempt_a_failed_validation_announces_is_the_one_taken(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("failed-attempt", json!({}), version);
    let mut turns = step(&sb, "Fix the parser");
    turns.extend([bash("./check.sh"), Turn::text("E2E-FA-1 done")]);
    let api = FakeApi::start(turns);
    sb.run_ok(&api, &["-p", "E2E-FA-1 go"], "E2E-FA-1 done");

    let api = FakeApi::start(vec![
        write(&sb, "src/fixed.txt", "fixed\n"),
        bash("./check.sh"),
        Turn::text("E2E-FA-2 done"),
    ]);
    sb.run_ok(&api, &["-p", "E2E-FA-2 fix it"], "E2E-FA-2 done");
    let announced = waymark_part(
        &api.main_requests()[0]
            .find_text("SessionStart hook additional context")
            .expect("a brief"),
    );
    has(
        &announced,
        &[
            "attempt 1 of 3 (resuming makes it attempt 2 of 3)",
            "Resume step 1 \"Fix the parser\" (attempt 2 of 3)",
        ],
    );
    assert_eq!(sb.hook_json()["current_step"]["attempt"], 2);

    let after = next_brief(&sb, "E2E-FA-3");
    has(
        &after,
        &["\"Fix the parser\", attempt 2 of 3", "a later run passed"],
    );
    lacks(&after, &["resuming makes it", "attempt 3"]);
}

/// A push killed in flight: the next session runs the check the brief names (`git fetch`,
/// `git status -sb`), sees the push did not land, and pushes again: the repeat guard lets
/// it through, and the remote has the commit.
fn the_check_the_brief_names_lets_an_unknown_push_run_again(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("push-checked", json!({}), version);
    let remote = origin(&sb);
    let hook = remote.join("hooks/pre-receive");
    fs::write(&hook, "#!/bin/sh\nsleep 30\n").unwrap();
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
    let marker = sb.root.join("E2E-PC.pid");
    let push = format!(
        "echo $$ > {0}.tmp && mv {0}.tmp {0} && git push -q origin main",
        marker.display()
    );
    let mut turns = step(&sb, "Ship the feature");
    turns.push(bash(&push));
    let (child, pid, _api) = start_then_sleep(&sb, "E2E-PC", turns);
    crash(child, &pid);
    fs::remove_file(&hook).unwrap();

    let api = FakeApi::start(vec![
        bash("git fetch -q origin && git status -sb"),
        bash("git push -q origin main"),
        Turn::text("E2E-PC-2 done"),
    ]);
    let run = sb.run_ok(&api, &["-p", "E2E-PC-2 carry on"], "E2E-PC-2 done");
    let why = format!("{}\n{}", run.stdout, sb.diagnose(&api));
    let results: Vec<String> = api
        .main_requests()
        .iter()
        .filter_map(|r| api.tool_result_text(r))
        .collect();
    assert!(
        results.iter().all(|r| !r.contains("waymark repeat guard")),
        "the push was refused after the check:\n{results:#?}\n{why}"
    );
    let head = git(&sb.project, &["rev-parse", "HEAD"]);
    let there = git(&remote, &["rev-parse", "main"]);
    assert_eq!(head.trim(), there.trim(), "the push did not land\n{why}");
    let brief = next_brief(&sb, "E2E-PC-3");
    lacks(&brief, &["outcome unknown"]);
}

/// Issue 42, case 7: `--plugin-dir` plus `waymark init` (registered twice). The agent's
/// `waymark doctor` names both registrations; after a crash, the change count leaves out
/// what `waymark init` wrote (`.claude/settings.json`, `.gitattributes`), and "nothing
/// changed" never sits beside a step's files unexplained.
fn after_waymark_init_the_setup_is_no_change_and_doctor_names_both_registrations(version: Version) {
    let Some(cli) = cli(version) else {
        return;
    };
    let sb = Sandbox::new("init-doctor", Binary::Built, version);
    let (_, path) = crate::plugin::one_wrapper_for_both_registrations(&sb);
    let pid = sb.root.join("E2E-INIT.pid");
    let mut turns = sb.plan(&["Handle leap years"]);
    turns.push(sb.start_step(1));
    turns.push(write(&sb, "src/leap.txt", "leap\n"));
    turns.push(bash("waymark doctor"));
    turns.push(sleeping(&pid));
    turns.push(Turn::text("E2E-INIT never reached"));
    let api = FakeApi::start(turns);
    let (mut c, _) = sb.command(cli, &api, &["-p", "E2E-INIT go"]);
    let child = c.env("PATH", &path).spawn().expect("spawn claude");
    let asleep = wait_for(std::time::Duration::from_secs(45), || pid.exists());
    assert!(asleep, "the session never slept\n{}", sb.diagnose(&api));
    let doctor = api
        .main_requests()
        .iter()
        .filter_map(|r| api.tool_result_text(r))
        .find(|t| t.contains("registered"))
        .unwrap_or_else(|| panic!("no doctor output\n{}", sb.diagnose(&api)));
    assert!(
        doctor.contains("registered 2 times: the plugin (loaded from"),
        "{doctor}"
    );
    crash(child, &pid);
    let brief = next_brief(&sb, "E2E-INIT-NEXT");
    has(
        &brief,
        &[
            "CRASH DETECTED",
            "Changed since the last commit (no checkpoint yet): 1 file, +1/−0 lines (1 new): src/leap.txt.",
        ],
    );
}

/// Issue 42, case 7: the step's files committed (a `git_commit` checkpoint), then a crash:
/// "nothing changed since the last checkpoint's commit" says the files listed are as that
/// commit has them, beside the files the step changed, not against them.
fn nothing_changed_since_the_commit_says_the_files_are_as_it_has_them(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("nothing-changed", json!({}), version);
    let mut turns = step(&sb, "Handle leap years");
    turns.push(write(&sb, "src/leap.txt", "leap\n"));
    turns.push(bash("git add -A && git commit -qm 'Handle leap years'"));
    let (child, pid, _api) = start_then_sleep(&sb, "E2E-NOTHING", turns);
    crash(child, &pid);
    let brief = next_brief(&sb, "E2E-NOTHING-NEXT");
    has(
        &brief,
        &[
            "Changed since the last checkpoint's commit: nothing: the files listed, if any, are as that commit has them.",
            "src/leap.txt",
        ],
    );
}
