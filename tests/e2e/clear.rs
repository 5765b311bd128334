//! Scenario 4: `/clear` checkpoints before the conversation is dropped, and the cleared
//! session starts with the brief (plus what changed since the last checkpoint).
//!
//! Claude Code 2.1.197 runs `/clear` in `-p` mode: `-p "/clear" --continue` fires
//! SessionStart(resume) → SessionEnd(reason "clear") → SessionStart(source "clear") →
//! SessionEnd(other), so no event has to be replayed by hand.

use serde_json::json;

use crate::by_trigger;
use crate::fake_api::{FakeApi, Turn};
use crate::harness::{Binary, Sandbox, Version, cli};

on_each_version!(clear_checkpoints_and_the_cleared_session_gets_the_brief);

fn clear_checkpoints_and_the_cleared_session_gets_the_brief(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = Sandbox::new("clear", Binary::Built, version);
    let mut script = sb.plan(&["Port the CLI"]);
    script.extend([
        sb.start_step(1),
        Turn::tool(
            "Write",
            json!({"file_path": sb.path("cli.txt"), "content": "E2E-S4 cli\n"}),
        ),
        Turn::text("E2E-S4-FIRST"),
    ]);
    let api = FakeApi::start(script);
    sb.run_ok(&api, &["-p", "E2E-S4-PROMPT port the cli"], "E2E-S4-FIRST");
    assert!(by_trigger(&sb.hook_json(), "clear").is_empty());

    let api = FakeApi::start(vec![]);
    let run = sb.run(&api, &["-p", "/clear", "--continue"]);
    let why = sb.diagnose(&api);
    assert!(run.status.success(), "{run:?}\n{why}");
    let debug = std::fs::read_to_string(&run.debug_file).unwrap_or_default();
    assert!(
        debug.contains("SessionEnd:clear"),
        "Claude Code did not send SessionEnd(clear)\n{why}"
    );

    let hook = sb.hook_json();
    let clear = by_trigger(&hook, "clear");
    assert_eq!(clear.len(), 1, "{why}");
    assert_eq!(clear[0]["description"], "Before /clear");
    assert_eq!(clear[0]["step_name"], "Port the CLI");
    assert_eq!(sb.capture(&hook, clear[0])["files"][0]["path"], "cli.txt");
    assert_eq!(hook["state"], "step_running", "/clear is no crash");
    // The "work changed" note was handed to the cleared session's brief, once.
    assert!(hook.get("clear_note").is_none(), "{why}");

    // The cleared conversation starts from the brief alone.
    let api = FakeApi::start(vec![Turn::text("E2E-S4-NEXT")]);
    sb.run_ok(&api, &["-p", "E2E-S4 go on", "--continue"], "E2E-S4-NEXT");
    let why = sb.diagnose(&api);
    let first = &api.main_requests()[0];
    // The old conversation's answer is gone; its request lives on only in the brief.
    assert!(
        !first.text().contains("E2E-S4-FIRST"),
        "the conversation before /clear is still there"
    );
    let brief = first
        .find_text("— session clear")
        .unwrap_or_else(|| panic!("no brief after /clear\n{why}"));
    for needle in [
        "SessionStart hook additional context",
        "Resume brief",
        "Resumed from checkpoint: Before /clear (clear",
        "\"Port the CLI\", attempt 1",
        "The task: E2E-S4-PROMPT port the cli",
        "cli.txt",
        "Changed before /clear, since ",
        "HOOK.md",
    ] {
        assert!(brief.contains(needle), "brief lacks {needle:?}:\n{brief}");
    }
}
