//! Scenario 2: Claude Code is killed (SIGKILL, whole process group) while a Bash call of a
//! running step sleeps; the next session starts with the resume brief.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::fake_api::{FakeApi, Turn};
use crate::harness::{Binary, Sandbox, Version, cli, kill_group, sleeping, wait_for};
use crate::{last_session, strs};

on_each_version!(
    crash_mid_step_then_new_session_gets_the_resume_brief,
    a_turn_that_ends_on_an_api_error_is_a_stop_not_a_crash,
);

fn crash_mid_step_then_new_session_gets_the_resume_brief(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = Sandbox::new("crash", Binary::Built, version);
    crash_while_a_step_runs(&sb);

    // What the crash left: a running step, a session that never ended.
    let before = sb.hook_json();
    assert_eq!(before["state"], "step_running", "{}", sb.diagnose_files());
    assert_eq!(last_session(&before)["status"], "active");
    assert_eq!(before["current_step"]["step_name"], "Implement the parser");

    // A new session (not --continue): crash detection, recovery, the brief.
    let api = FakeApi::start(vec![Turn::text("E2E-S2-RESUMED")]);
    sb.run_ok(&api, &["-p", "E2E-S2 carry on"], "E2E-S2-RESUMED");
    let why = sb.diagnose(&api);
    let hook = sb.hook_json();
    let action = recovery_recommends_an_action(told_once(&hook, &why), &why);
    the_brief_names_the_crash(&api, action, &why);
    the_brief_keeps_the_work_since_the_checkpoint(&api, &hook, &why);
    // The session told only answered: the crash is over, and HOOK.md, like the next
    // brief, no longer announces it.
    let md = sb.read(".orchestration/HOOK.md");
    assert!(!md.contains("Crash detected"), "{md}");
}

/// The crash was declared once and told to the session that only answered: the recovery
/// ended with that session's turn (`crash_told`), the step still in progress. The details
/// of the crash as declared.
pub(crate) fn told_once<'a>(hook: &'a Value, why: &str) -> &'a Value {
    assert_eq!(hook["state"], "step_pending", "{why}");
    assert!(hook["recovery"].is_null(), "{why}");
    let history = hook["history"].as_array().unwrap();
    let triggers: Vec<&str> = history
        .iter()
        .filter_map(|h| h["trigger"].as_str())
        .collect();
    assert!(
        triggers.ends_with(&["crash_detected", "crash_told"]),
        "{triggers:?}\n{why}"
    );
    &history[history.len() - 2]["details"]
}

/// Runs a session that plans two steps, finishes the first and is killed (its whole
/// process group, and the Bash tool's shell) while a Bash call of the second sleeps.
pub(crate) fn crash_while_a_step_runs(sb: &Sandbox) {
    // The Bash tool runs its shell in a process group of its own: it writes its pid there
    // so that the "crash" can take it down too, as a real crash of the machine would.
    let started = sb.root.join("sleeping-shell.pid");
    let mut script = sb.plan(&["Plan the parser", "Implement the parser"]);
    script.extend([
        sb.start_step(1),
        sb.finish_step(1),
        sb.start_step(2),
        Turn::tool(
            "Write",
            json!({"file_path": sb.path("parser.txt"), "content": "E2E-S2 parser, half done\n"}),
        ),
        sleeping(&started),
        Turn::text("E2E-S2 never reached"),
    ]);
    let api = FakeApi::start(script);
    let mut child = sb.spawn(&api, &["-p", "E2E-S2 build the parser"]);
    let sleeping = wait_for(Duration::from_secs(45), || Path::new(&started).exists());
    let killed = kill_group(child.id());
    let status = child.wait().unwrap();
    if !sleeping {
        panic!(
            "the sleeping Bash call never started\n{}",
            sb.diagnose(&api)
        );
    }
    let shell: u32 = std::fs::read_to_string(&started)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    kill_group(shell);
    assert!(
        killed && !status.success(),
        "claude ended before it was killed: {status}\n{}",
        sb.diagnose(&api)
    );
}

/// Checks that the crash declared (its history event's details) was by signal and
/// recommends a known action; returns it.
fn recovery_recommends_an_action<'a>(crash: &'a Value, why: &str) -> &'a str {
    let action = strs(&crash["recommended_action"]);
    assert!(
        [
            "retry_from_checkpoint",
            "retry_step",
            "manual",
            "skip_step",
            "rollback"
        ]
        .contains(&action),
        "recommended_action {action:?}\n{why}"
    );
    assert_eq!(crash["crash_type"], "signal", "{why}");
    action
}

/// Checks that the new session's first request carried the brief, naming the crash, the
/// `action`, the running step and the completed one (marked DO NOT REPEAT).
fn the_brief_names_the_crash(api: &FakeApi, action: &str, why: &str) {
    let first = &api.main_requests()[0];
    let context = first
        .find_text("SessionStart hook additional context")
        .unwrap_or_else(|| panic!("no SessionStart context in the first request\n{why}"));
    for needle in [
        "Resume brief",
        "CRASH DETECTED",
        action,
        "\"Implement the parser\"",
        "attempt 1",
        "DO NOT REPEAT",
        "Plan the parser",
        "parser.txt",
        "HOOK.md",
    ] {
        assert!(
            context.contains(needle),
            "the resume brief lacks {needle:?}:\n{context}"
        );
    }
    // The completed step is the one marked DO NOT REPEAT, not the running one.
    let dnr = &context[context.find("DO NOT REPEAT").unwrap()..];
    assert!(dnr.contains("Plan the parser"), "{context}");
}

/// Step 1's checkpoint is seconds old at the crash, so work resumes from it; the brief
/// tells the agent to keep what step 2 did since (parser.txt) and never offers the rewind
/// to that checkpoint, which would delete it (issue 31, item 1).
fn the_brief_keeps_the_work_since_the_checkpoint(api: &FakeApi, hook: &Value, why: &str) {
    let crash = told_once(hook, why);
    assert_eq!(
        crash["recommended_action"], "retry_from_checkpoint",
        "{why}"
    );
    // The checkpoint it resumes from: step 1's, the last one.
    let checkpoint = strs(
        &hook["recent_checkpoints"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["checkpoint_id"],
    );
    let context = api.main_requests()[0]
        .find_text("SessionStart hook additional context")
        .unwrap();
    let keep = format!("Resume from checkpoint {checkpoint}: keep the work done since it");
    assert!(context.contains(&keep), "{context}");
    assert!(!context.contains("waymark rewind"), "{context}");
}

/// A turn that ends on an API error (Claude Code's StopFailure, issue 31 item 5): the
/// session is stopped, not crashed, and the next session's brief says the last turn
/// failed and why, with no crash and no recovery.
fn a_turn_that_ends_on_an_api_error_is_a_stop_not_a_crash(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = Sandbox::new("api-error", Binary::Built, version);
    let mut script = sb.plan(&["Write the parser"]);
    script.extend([
        sb.start_step(1),
        Turn::tool(
            "Write",
            json!({"file_path": sb.path("parser.txt"), "content": "E2E-AE parser\n"}),
        ),
        Turn::ApiError,
    ]);
    let api = FakeApi::start(script);
    sb.run(&api, &["-p", "E2E-AE1 build the parser"]);
    // Claude Code may exit before its StopFailure hook is done (a loaded machine): the
    // hook's record is waited for, as the next session would find it.
    let recorded = || last_session(&sb.hook_json())["failed_turn"].is_object();
    wait_for(Duration::from_secs(10), recorded);
    let why = sb.diagnose(&api);
    let hook = sb.hook_json();
    let session = last_session(&hook);
    // Stopped (idle), or ended as `-p` ends a session: not mid-turn, so never a crash.
    assert_ne!(session["status"], "active", "{why}");
    assert!(session["failed_turn"].is_object(), "{why}");

    let api = FakeApi::start(vec![Turn::text("E2E-AE2 resumed")]);
    sb.run_ok(
        &api,
        &["-p", "E2E-AE2 go on", "--continue"],
        "E2E-AE2 resumed",
    );
    let why = sb.diagnose(&api);
    assert_ne!(sb.hook_json()["state"], "recovering", "{why}");
    // The conversation goes on, so the first session's own context comes first.
    let context = api.main_requests()[0]
        .find_string("Resume brief")
        .unwrap_or_else(|| panic!("no brief\n{why}"));
    assert!(!context.contains("CRASH DETECTED"), "{context}");
    assert!(
        context.contains("last turn ended on an API error")
            && context.contains("E2E injected failure"),
        "{context}"
    );
}
