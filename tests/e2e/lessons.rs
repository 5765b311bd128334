//! Issue 51, "The shared brain is read": a lesson written in one task is in the first
//! request of the next task's session, on Claude Code (both releases) and Codex CLI; a
//! verification lesson whose command passed since is shown no more; a governance lesson
//! (a write deny mode refused) reaches the next agent the same way.

use std::fs;

use serde_json::json;

use crate::codex::{self, codex, register};
use crate::codex_api::{CTurn, CodexApi};
use crate::fake_api::{FakeApi, Turn};
use crate::harness::{Sandbox, Version, bash, cli};
use crate::resume::{sandbox, write};

on_each_version!(
    a_failed_validation_is_a_lesson_the_next_task_is_told_until_it_passes,
    a_write_deny_mode_refused_is_a_lesson_the_next_task_is_told,
);

/// The SessionStart context of `api`'s first request ("" when none).
fn context(api: &FakeApi) -> String {
    api.main_requests()[0]
        .find_text("SessionStart hook additional context")
        .unwrap_or_default()
}

/// A task that fails `./check.sh`, then is finished (its one step done).
fn a_task_that_failed_its_check(sb: &Sandbox) {
    let mut turns = sb.plan(&["Fix the parser"]);
    turns.extend([
        sb.start_step(1),
        bash("./check.sh"),
        sb.finish_step(1),
        Turn::text("E2E-LS-1 done"),
    ]);
    let api = FakeApi::start(turns);
    sb.run_ok(&api, &["-p", "E2E-LS-1 fix the parser"], "E2E-LS-1 done");
    let md = sb.read("AGENT.md");
    assert!(md.contains("Verification failed: ./check.sh"), "{md}");
}

fn a_failed_validation_is_a_lesson_the_next_task_is_told_until_it_passes(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("lessons", json!({}), version);
    a_task_that_failed_its_check(&sb);
    // A new session, a new request: the lesson is in its first request.
    let api = FakeApi::start(vec![
        write(&sb, "src/fixed.txt", "fixed\n"),
        bash("./check.sh"),
        Turn::text("E2E-LS-2 done"),
    ]);
    sb.run_ok(&api, &["-p", "E2E-LS-2 add the docs"], "E2E-LS-2 done");
    let told = context(&api);
    assert!(
        told.contains("[waymark] Lessons from earlier work")
            && told.contains("Verification failed: ./check.sh"),
        "{told}\n{}",
        sb.diagnose(&api)
    );
    // It passed since: settled, and the next agent is not told of it.
    assert!(
        sb.read("AGENT.md")
            .contains("**Settled**: passed since (rcpt-")
    );
    let api = FakeApi::start(vec![Turn::text("E2E-LS-3 done")]);
    sb.run_ok(&api, &["-p", "E2E-LS-3 and the changelog"], "E2E-LS-3 done");
    let told = context(&api);
    assert!(!told.contains("Verification failed"), "{told}");
}

fn a_write_deny_mode_refused_is_a_lesson_the_next_task_is_told(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("deny-lesson", json!({"scope_enforcement": "deny"}), version);
    fs::write(
        sb.project.join(".orchestration/active_intents.yaml"),
        "active_intents:\n  - id: INT-L\n    name: Greeting\n    status: IN_PROGRESS\n    owned_scope:\n      - src/greeting/**\n",
    )
    .unwrap();
    let api = FakeApi::start(vec![
        write(&sb, "docs/outside.txt", "no\n"),
        bash("waymark task done"),
        Turn::text("E2E-DL-1 done"),
    ]);
    sb.run_ok(
        &api,
        &["-p", "E2E-DL-1 write the greeting"],
        "E2E-DL-1 done",
    );
    assert!(
        !sb.project.join("docs/outside.txt").exists(),
        "the write was refused"
    );
    let api = FakeApi::start(vec![Turn::text("E2E-DL-2 done")]);
    sb.run_ok(&api, &["-p", "E2E-DL-2 next"], "E2E-DL-2 done");
    let told = context(&api);
    assert!(
        told.contains("Scope violation denied: docs/outside.txt"),
        "{told}"
    );
}

/// The same on Codex CLI: the lesson a failing check left in a Claude Code task is in the
/// first request of the next Codex session.
#[test]
fn codex_is_told_the_lessons_too() {
    if cli(Version::CURRENT).is_none() || codex().is_none() {
        return;
    }
    let sb = sandbox("lessons-codex", json!({}), Version::CURRENT);
    register(&sb);
    a_task_that_failed_its_check(&sb);
    let api = CodexApi::start(vec![CTurn::Text("E2E-LSC done".into())]);
    codex::run_ok(&sb, &api, &["E2E-LSC add the docs"], "E2E-LSC done");
    let told = api.turns()[0].developer_text();
    assert!(
        told.contains("Verification failed: ./check.sh"),
        "{told}\n{}",
        codex::diagnose(&sb, &api)
    );
}

/// A write deny mode refused to Codex (its apply_patch out of the intent's scope) is a
/// governance lesson, told to the next Codex session.
#[test]
fn codex_is_told_a_governance_lesson_too() {
    if codex().is_none() {
        return;
    }
    let sb = sandbox(
        "deny-lesson-codex",
        json!({"scope_enforcement": "deny"}),
        Version::CURRENT,
    );
    register(&sb);
    fs::write(
        sb.project.join(".orchestration/active_intents.yaml"),
        "active_intents:\n  - id: INT-C\n    name: Greeting\n    status: IN_PROGRESS\n    owned_scope:\n      - src/greeting/**\n",
    )
    .unwrap();
    let api = CodexApi::start(vec![
        CTurn::Patch(codex::add_file("docs/outside.md", &["no"])),
        CTurn::Text("E2E-DLC-1 done".into()),
    ]);
    codex::run_ok(
        &sb,
        &api,
        &["E2E-DLC-1 write the greeting"],
        "E2E-DLC-1 done",
    );
    assert!(
        !sb.project.join("docs/outside.md").exists(),
        "the patch was refused"
    );
    let api = CodexApi::start(vec![CTurn::Text("E2E-DLC-2 done".into())]);
    codex::run_ok(&sb, &api, &["E2E-DLC-2 next"], "E2E-DLC-2 done");
    let told = api.turns()[0].developer_text();
    assert!(
        told.contains("Scope violation denied: docs/outside.md"),
        "{told}\n{}",
        codex::diagnose(&sb, &api)
    );
}
