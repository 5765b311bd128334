//! One task across agents: a Claude Code session crashes mid-step and the next session is
//! Codex CLI's, and the other way round. Whichever agent comes next gets the same resume
//! brief (the crash, the plan, the running step, the files), and the ledger names the
//! agent that made each change.

use serde_json::Value;

use crate::codex::{self, codex, register};
use crate::codex_api::{CTurn, CodexApi};
use crate::codex_sessions::{codex_crash_while_a_step_runs, the_brief_names_the_work};
use crate::fake_api::{FakeApi, Turn};
use crate::harness::{Binary, Sandbox, Version, cli};

#[test]
fn a_task_crashed_in_claude_code_goes_on_in_codex() {
    if cli(Version::CURRENT).is_none() || codex().is_none() {
        return;
    }
    let sb = Sandbox::new("handoff-to-codex", Binary::Built, Version::CURRENT);
    crate::crash::crash_while_a_step_runs(&sb);
    register(&sb);
    let finish = "*** Begin Patch\n*** Update File: parser.txt\n@@\n-E2E-S2 parser, half done\n+E2E-S2 parser, done by Codex\n*** End Patch\n";
    let api = CodexApi::start(vec![
        CTurn::Patch(finish.into()),
        CTurn::Text("E2E-HO1-RESUMED".into()),
    ]);
    codex::run_ok(&sb, &api, &["E2E-HO1 carry on"], "E2E-HO1-RESUMED");
    let why = codex::diagnose(&sb, &api);
    // The Codex session found the crash and was told; its patch took the step up again.
    the_brief_names_the_work(&api.turns()[0].developer_text(), &why);
    let hook = sb.hook_json();
    let triggers: Vec<&str> = hook["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["trigger"].as_str())
        .collect();
    assert!(
        triggers.ends_with(&["crash_detected", "step_resume"]),
        "{triggers:?}\n{why}"
    );
    assert_eq!(
        hook["current_step"]["step_name"], "Implement the parser",
        "{why}"
    );
    assert_eq!(
        sb.read("parser.txt"),
        "E2E-S2 parser, done by Codex\n",
        "{why}"
    );
    // parser.txt was written by both: the ledger says who wrote what.
    let writers = writers_of(&sb.trace(), "parser.txt");
    assert_eq!(writers, ["claude-code", "codex"], "{why}");
}

#[test]
fn a_task_crashed_in_codex_goes_on_in_claude_code() {
    if cli(Version::CURRENT).is_none() || codex().is_none() {
        return;
    }
    let sb = Sandbox::new("handoff-to-claude", Binary::Built, Version::CURRENT);
    register(&sb);
    codex_crash_while_a_step_runs(&sb, "E2E-HO2");
    let api = FakeApi::start(vec![Turn::text("E2E-HO2-RESUMED")]);
    sb.run_ok(&api, &["-p", "E2E-HO2 carry on"], "E2E-HO2-RESUMED");
    let why = sb.diagnose(&api);
    let hook = sb.hook_json();
    crate::crash::told_once(&hook, &why);
    let brief = api.main_requests()[0]
        .find_text("SessionStart hook additional context")
        .unwrap_or_else(|| panic!("no SessionStart context in the first request\n{why}"));
    the_brief_names_the_work(&brief, &why);
    assert!(
        brief.contains("Codex CLI session"),
        "whose crash it was:\n{brief}"
    );
    assert_eq!(writers_of(&sb.trace(), "parser.txt"), ["codex"], "{why}");
}

/// The `tool.name` of each record that wrote `path`, in order.
fn writers_of(trace: &[Value], path: &str) -> Vec<String> {
    trace
        .iter()
        .filter(|r| {
            r["files"]
                .as_array()
                .is_some_and(|f| f.iter().any(|f| f["path"] == path))
        })
        .filter_map(|r| r["tool"]["name"].as_str().map(str::to_string))
        .collect()
}
