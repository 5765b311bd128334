//! `waymark hook`: every real fixture, and the never-fail guarantee on bad input.

mod util;

use std::time::{Duration, Instant};

use serde_json::Value;
use util::{Project, RELEASES, context_of, fixtures_of};

#[test]
fn every_fixture_of_every_release_parses_and_exits_0() {
    for release in RELEASES {
        every_fixture_parses_and_exits_0(release);
    }
}

fn every_fixture_parses_and_exits_0(release: &str) {
    let p = Project::new();
    let mut seen = 0;
    for entry in std::fs::read_dir(fixtures_of(release)).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let text = p.fixture_of(release, &name);
        let event: Value = serde_json::from_str(&text).unwrap();
        let event_name = event["hook_event_name"].as_str().unwrap().to_string();
        let out = p.run(&["hook", &event_name], text);
        assert_eq!(out.status.code(), Some(0), "{name}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        if !stdout.trim().is_empty() {
            let v: Value = serde_json::from_str(stdout.trim())
                .unwrap_or_else(|e| panic!("{name}: stdout is not JSON ({e}): {stdout}"));
            assert_eq!(
                v["hookSpecificOutput"]["hookEventName"], event_name,
                "{name}"
            );
        }
        // Nothing on stderr: a real event is handled without complaint.
        assert!(
            out.stderr.is_empty(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        seen += 1;
    }
    assert!(seen >= 27, "only {seen} fixtures");
    let log = std::fs::read_to_string(p.path(".orchestration/waymark.log")).unwrap_or_default();
    assert!(!log.contains("ERROR"), "{log}");
}

#[test]
fn the_event_name_falls_back_to_the_payload_and_a_mismatch_is_logged() {
    let p = Project::new();
    p.hook("", &p.fixture("UserPromptSubmit.json"));
    assert_eq!(p.hook_json()["last_prompt"], "write hello");
    // The argument wins over hook_event_name, and the disagreement is logged.
    p.hook("Stop", &p.fixture("UserPromptSubmit.json"));
    assert!(
        p.read(".orchestration/waymark.log")
            .contains("using `Stop`")
    );
}

/// Runs a hook with raw bytes and checks the never-fail contract: exit 0, stdout empty,
/// one line on stderr, the reason in the log.
fn fails_quietly(p: &Project, event: &str, input: Vec<u8>, reason: &str) {
    let out = p.run(&["hook", event], input);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stdout.is_empty(),
        "stdout must stay clean: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "one line on stderr: {stderr}");
    assert!(stderr.contains(reason), "{stderr}");
    assert!(p.read(".orchestration/waymark.log").contains(reason));
}

#[test]
fn malformed_empty_and_wrong_typed_input_exit_0_with_a_clear_error() {
    let p = Project::new();
    fails_quietly(
        &p,
        "PostToolUse",
        b"{\"tool_name\": \"Write\", ".to_vec(),
        "not valid JSON",
    );
    fails_quietly(&p, "PostToolUse", Vec::new(), "stdin is empty");
    fails_quietly(&p, "PostToolUse", b"[1,2,3]".to_vec(), "not a JSON object");
    fails_quietly(
        &p,
        "SessionStart",
        br#"{"source": 42}"#.to_vec(),
        "`source` has the wrong type",
    );
    // No task was created by any of it.
    assert!(!p.path(".orchestration/hook.json").exists());
}

/// Half an emoji (a lone surrogate escape, as a client's truncation leaves it) costs
/// nothing but the half: the event is applied, on both clients' paths.
#[test]
fn a_lone_surrogate_escape_is_decoded_lossily_and_the_event_kept() {
    let p = Project::new();
    let root = serde_json::to_string(&p.root()).unwrap();
    let input = format!(
        r#"{{"session_id":"s1","cwd":{root},"hook_event_name":"UserPromptSubmit","prompt":"fix the parser \ud83d"}}"#
    );
    assert_eq!(p.hook("UserPromptSubmit", &input), "");
    assert_eq!(p.hook_json()["goal"], "fix the parser \u{fffd}");
    let codex = input.replace("fix the parser", "and the docs");
    let out = p.run(&["hook", "--agent", "codex", "UserPromptSubmit"], codex);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(p.hook_json()["last_prompt"], "and the docs \u{fffd}");
}

/// A client whose stdin never closes does not hold the tool call: the hook gives up
/// reading within its deadline, says so, and exits 0 (issue 50, item 5).
#[test]
fn a_stdin_that_never_closes_is_left_within_the_deadline() {
    let p = Project::new();
    let start = Instant::now();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("waymark"))
        .args(["hook", "PostToolUse"])
        .current_dir(p.root())
        .env("CLAUDE_PROJECT_DIR", p.root())
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut open = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut open, b"{\"session_id\": \"s1\", ").unwrap();
    let out = child.wait_with_output().unwrap();
    drop(open);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("stdin was not closed within"), "{err}");
}

#[test]
fn missing_fields_are_tolerated() {
    let p = Project::new();
    p.hook("UserPromptSubmit", r#"{"prompt": "hi"}"#);
    p.hook("PostToolUse", r#"{"tool_name": "Write"}"#);
    p.hook("Stop", "{}");
    assert_eq!(p.hook_json()["last_prompt"], "hi");
}

#[test]
fn non_utf8_bytes_do_not_cost_the_event() {
    let p = Project::new();
    let mut input = br#"{"session_id":"s","prompt":"fix the "#.to_vec();
    input.extend_from_slice(&[0xff, 0xfe]);
    input.extend_from_slice(br#" parser"}"#);
    let out = p.run(&["hook", "UserPromptSubmit"], input);
    assert_eq!(out.status.code(), Some(0));
    let prompt = p.hook_json()["last_prompt"].as_str().unwrap().to_string();
    assert!(
        prompt.starts_with("fix the ") && prompt.ends_with(" parser"),
        "{prompt}"
    );
}

#[test]
fn a_50_mb_write_is_handled() {
    let p = Project::new();
    let content = "x".repeat(79) + "\n";
    // Claude Code sends the content twice (input and response): 2 × 25 MB.
    let content = content.repeat(25 * 1024 * 1024 / 80);
    let event = serde_json::json!({
        "session_id": "s", "cwd": p.root(), "hook_event_name": "PostToolUse", "tool_name": "Write",
        "tool_input": {"file_path": p.path("big.txt"), "content": content},
        "tool_response": {"type": "create", "filePath": p.path("big.txt"), "content": content, "structuredPatch": []},
    });
    let input = serde_json::to_vec(&event).unwrap();
    assert!(input.len() >= 50 * 1024 * 1024, "{}", input.len());
    let out = p.run(&["hook", "PostToolUse"], input);
    assert_eq!(out.status.code(), Some(0));
    let files = &p.hook_json()["current_step"]["files_touched"];
    assert_eq!(files, &serde_json::json!(["big.txt"]));
}

#[test]
fn input_over_the_cap_is_refused_not_processed() {
    let p = Project::new();
    let input = vec![b' '; 65 * 1024 * 1024];
    fails_quietly(&p, "PostToolUse", input, "input over 64 MiB ignored");
}

#[test]
fn unknown_events_do_nothing() {
    let p = Project::new();
    let out = p.run(&["hook", "Notification"], r#"{"message":"hi"}"#);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    assert!(!p.path(".orchestration/hook.json").exists());
}

#[test]
fn a_panic_inside_a_handler_is_caught_and_logged() {
    let p = Project::new();
    let out = p
        .waymark()
        .env("WAYMARK_TEST_FAULT", "dispatch:panic")
        .args(["hook", "UserPromptSubmit"])
        .write_stdin(p.fixture("UserPromptSubmit.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert!(
        p.read(".orchestration/waymark.log")
            .contains("internal error (panic): injected fault at dispatch")
    );
}

#[test]
fn the_deadline_ends_a_stuck_event_with_exit_0() {
    let p = Project::new();
    let start = Instant::now();
    let out = p
        .waymark()
        .env("WAYMARK_TEST_FAULT", "dispatch:sleep")
        .env("WAYMARK_HOOK_DEADLINE", "300ms")
        .args(["hook", "Stop"])
        .write_stdin(p.fixture("Stop.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(start.elapsed() < Duration::from_secs(20));
    assert!(p.read(".orchestration/waymark.log").contains("deadline"));
}

#[test]
fn an_unwritable_project_still_exits_0() {
    let p = Project::new();
    // A file where the state directory should be: nothing can be written under it.
    std::fs::write(p.path(".orchestration"), "not a directory").unwrap();
    let out = p.run(
        &["hook", "UserPromptSubmit"],
        p.fixture("UserPromptSubmit.json"),
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("waymark: UserPromptSubmit"));
    assert_eq!(p.read(".orchestration"), "not a directory");
}

#[test]
fn post_tool_use_prints_nothing_without_a_warning() {
    let p = Project::new();
    assert_eq!(
        p.hook("PostToolUse", &p.fixture("PostToolUse-Write.json")),
        ""
    );
    assert!(context_of(&p.hook("SessionStart", &p.fixture("SessionStart-startup.json"))).is_some());
}

/// The same event twice from one Claude Code process (waymark registered by the plugin
/// and by `waymark init`) is handled once; another tool call is not mistaken for it. The
/// second registration shows itself at the session's start (both copies of it arrive),
/// and from then on every event is handled once.
#[test]
fn one_event_delivered_twice_is_handled_once() {
    let p = Project::new();
    let start = p.fixture("SessionStart-startup.json");
    p.hook("SessionStart", &start);
    p.hook("SessionStart", &start);
    p.hook("UserPromptSubmit", &p.fixture("UserPromptSubmit.json"));
    p.hook("UserPromptSubmit", &p.fixture("UserPromptSubmit.json"));
    let write = p.write_event("src/a.rs", "fn a() {}\n");
    p.hook("PostToolUse", &write);
    p.hook("PostToolUse", &write);
    let records = |p: &Project| {
        p.read(".orchestration/agent_trace.jsonl")
            .lines()
            .filter(|l| l.contains("\"tool_name\":\"Write\""))
            .count()
    };
    assert_eq!(records(&p), 1);
    let mut other: Value = serde_json::from_str(&write).unwrap();
    other["tool_use_id"] = "toolu_another".into();
    p.hook("PostToolUse", &other.to_string());
    assert_eq!(records(&p), 2);
}

/// An event applied late (kept in pending.jsonl) that panics is logged and dropped: it is
/// not met again by every hook after, and the hook's own event still goes through.
#[test]
fn a_kept_event_that_panics_is_dropped_not_met_again() {
    let p = Project::new();
    p.hook("UserPromptSubmit", &p.fixture("UserPromptSubmit.json"));
    p.keep("PostToolUse", &p.write_event("src/kept.rs", "k\n"));
    let out = p
        .waymark()
        .env("WAYMARK_TEST_FAULT", "dispatch@1:panic")
        .args(["hook", "PostToolUse"])
        .write_stdin(p.write_event("src/own.rs", "o\n"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let log = p.read(".orchestration/waymark.log");
    assert!(
        log.contains("a kept PostToolUse event panicked, dropped"),
        "{log}"
    );
    assert!(
        !p.path(".orchestration/pending.jsonl").exists(),
        "the kept event is gone"
    );
    let files = p.hook_json()["current_step"]["files_touched"].clone();
    assert!(files.to_string().contains("src/own.rs"), "{files}");
}

/// An event applied late (kept in pending.jsonl) is not this process's own: its session,
/// first seen there, gets no owner from the process applying it (another session's).
#[test]
fn a_kept_event_gives_its_session_no_owner_of_the_process_applying_it() {
    let p = Project::new();
    p.hook("UserPromptSubmit", &p.fixture("UserPromptSubmit.json"));
    let mut input: serde_json::Value =
        serde_json::from_str(&p.write_event("src/kept.rs", "k\n")).unwrap();
    input["session_id"] = "a-session-seen-late".into();
    p.keep("PostToolUse", &input.to_string());
    p.hook("PostToolUse", &p.write_event("src/own.rs", "o\n"));
    let hook = p.hook_json();
    let sessions = hook["sessions"].as_array().unwrap();
    let late = sessions
        .iter()
        .find(|s| s["session_id"] == "a-session-seen-late")
        .unwrap_or_else(|| panic!("{hook:#}"));
    assert!(late.get("owner").is_none_or(Value::is_null), "{late:#}");
}
