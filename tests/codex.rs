//! `waymark hook --agent codex`: Codex CLI's inputs (their shapes as Codex 0.169.0 sends
//! them, codex-facts-measured.md) through the binary, with no Codex installed: patches
//! name their files, a shell call's verdict is read from the rollout at the next event,
//! and the records name Codex and its model. The real client: tests/e2e/codex_sessions.rs.

mod util;

use serde_json::{Value, json};
use util::{Project, context_of};

const SESSION: &str = "01a21ec5-0000-7000-8000-000000000001";

/// A Codex input for `event` in project `p`, its rollout at `rollout`, with `extra` fields.
fn input(p: &Project, event: &str, rollout: &str, extra: Value) -> String {
    input_of(SESSION, p, event, rollout, extra)
}

/// [`input`] from the session `session`.
fn input_of(session: &str, p: &Project, event: &str, rollout: &str, extra: Value) -> String {
    let mut v = json!({
        "session_id": session,
        "transcript_path": rollout,
        "cwd": p.root().display().to_string(),
        "hook_event_name": event,
        "model": "gpt-5.5",
        "permission_mode": "bypassPermissions",
        "turn_id": "turn-1",
    });
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    v.to_string()
}

/// A shell call's PostToolUse fields: Codex's carry its output and no exit code.
fn shell_call(id: &str, command: &str, output: &str) -> Value {
    json!({"tool_name": "Bash", "tool_use_id": id,
        "tool_input": {"command": command}, "tool_response": output})
}

fn codex_hook(p: &Project, event: &str, stdin: String) -> String {
    let out = p.run(&["hook", "--agent", "codex", event], stdin);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A Codex event run with a fault injected (`store::faults`), to its end.
fn codex_hook_with_fault(
    p: &Project,
    event: &str,
    stdin: &str,
    fault: &str,
) -> std::process::Output {
    p.waymark()
        .args(["hook", "--agent", "codex", event])
        .env("WAYMARK_TEST_FAULT", fault)
        .write_stdin(stdin)
        .output()
        .unwrap()
}

/// What Codex writes to the rollout once a shell call returned (after PostToolUse).
fn call_output_line(call_id: &str, code: i32, output: &str) -> String {
    let text = format!(
        "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code {code}\nOriginal token count: 3\nOutput:\n{output}"
    );
    let line = json!({"timestamp": "2026-11-27T20:00:00.000Z", "type": "response_item",
        "payload": {"type": "function_call_output", "call_id": call_id, "output": text}});
    format!("{line}\n")
}

#[test]
fn a_codex_session_through_the_binary() {
    let p = Project::new();
    let rollout = p.path("rollout.jsonl").display().to_string();
    std::fs::write(&rollout, "{\"type\":\"session_meta\"}\n").unwrap();
    let r = rollout.as_str();
    let start = codex_hook(
        &p,
        "SessionStart",
        input(&p, "SessionStart", r, json!({"source": "startup"})),
    );
    // No task yet: the note on keeping a plan, in Codex's output format.
    let v: Value = serde_json::from_str(start.trim()).unwrap();
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let prompt = json!({"prompt": "fix the parser"});
    codex_hook(
        &p,
        "UserPromptSubmit",
        input(&p, "UserPromptSubmit", r, prompt),
    );

    // An apply_patch: its files from the patch's headers.
    std::fs::write(p.path("parser.rs"), "fn parse() {}\n").unwrap();
    let patch = "*** Begin Patch\n*** Add File: parser.rs\n+fn parse() {}\n*** End Patch\n";
    let call = json!({"tool_name": "apply_patch", "tool_use_id": "call_1",
        "tool_input": {"command": patch},
        "tool_response": "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nA parser.rs\n"});
    codex_hook(&p, "PostToolUse", input(&p, "PostToolUse", r, call));
    let hook = p.hook_json();
    assert!(
        hook["current_step"]["files_touched"]
            .to_string()
            .contains("parser.rs")
    );

    // A failing validation: no exit code in PostToolUse, so it is held...
    let test = shell_call("call_2", "cargo test", "test result: FAILED\n");
    codex_hook(&p, "PostToolUse", input(&p, "PostToolUse", r, test));
    assert!(p.path(".orchestration/codex-bash.jsonl").exists());
    assert!(p.hook_json()["receipts"].as_array().unwrap().is_empty());
    // ...until the rollout has the model's copy, read at the next event (here the Stop).
    let line = call_output_line("call_2", 101, "test result: FAILED\n");
    std::fs::OpenOptions::new()
        .append(true)
        .open(&rollout)
        .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()))
        .unwrap();
    let stop = json!({"stop_hook_active": false, "last_assistant_message": "done"});
    codex_hook(&p, "Stop", input(&p, "Stop", r, stop));
    assert!(!p.path(".orchestration/codex-bash.jsonl").exists());
    let hook = p.hook_json();
    let receipts = hook["receipts"].as_array().unwrap();
    assert_eq!(receipts.len(), 1, "{hook:#}");
    assert_eq!(receipts[0]["exit_code"], 101);
    records_name_codex(&p);
}

const SCHEMA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/agent-trace/trace-record.json"
);

/// Every record is Codex's and valid Agent Trace; the patch's names the model as its
/// contributor.
fn records_name_codex(p: &Project) {
    let trace: Vec<Value> = p
        .read(".orchestration/agent_trace.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!trace.is_empty());
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(SCHEMA).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for r in &trace {
        assert!(validator.is_valid(r), "not Agent Trace: {r:#}");
        assert_eq!(r["tool"]["name"], "codex", "{r:#}");
        assert_eq!(r["metadata"]["waymark"]["agent"], "codex", "{r:#}");
    }
    let patch = &trace[0];
    assert_eq!(patch["files"][0]["path"], "parser.rs");
    let contributor = &patch["files"][0]["conversations"][0]["contributor"];
    assert_eq!(contributor["model_id"], "openai/gpt-5.5");
    assert_eq!(patch["metadata"]["waymark"]["mutation_class"], "patch");
    // The added file's one line, hashed as a Write of it would be.
    let range = &patch["files"][0]["conversations"][0]["ranges"][0];
    assert_eq!(range["start_line"], 1, "{patch:#}");
    assert_eq!(range["end_line"], 1, "{patch:#}");
    assert!(
        range["content_hash"]
            .as_str()
            .is_some_and(|h| !h.is_empty()),
        "{patch:#}"
    );
    let bash = trace
        .iter()
        .find(|r| r["metadata"]["waymark"]["command"] == "cargo test");
    assert_eq!(bash.unwrap()["metadata"]["waymark"]["exit_code"], 101);
}

/// A call whose session was killed before its verdict reached the rollout is applied at
/// another session's first event as a command whose end was not seen: never a passing
/// receipt.
#[test]
fn a_verdict_that_never_came_is_no_pass() {
    let p = Project::new();
    let rollout = p.path("rollout.jsonl").display().to_string();
    std::fs::write(&rollout, "").unwrap();
    let test = shell_call("call_9", "cargo test", "running 3 tests\n");
    codex_hook(&p, "PostToolUse", input(&p, "PostToolUse", &rollout, test));
    let other = |event: &str, extra: Value| input_of("another-session", &p, event, &rollout, extra);
    codex_hook(
        &p,
        "SessionStart",
        other("SessionStart", json!({"source": "startup"})),
    );
    let hook = p.hook_json();
    let receipts = hook["receipts"].as_array().unwrap();
    assert_eq!(receipts.len(), 1, "{hook:#}");
    assert_ne!(receipts[0]["exit_code"], 0);
    // Any event of another session, not only its start: here its prompt.
    let test = shell_call("call_10", "cargo test", "running 3 tests\n");
    codex_hook(&p, "PostToolUse", input(&p, "PostToolUse", &rollout, test));
    codex_hook(
        &p,
        "UserPromptSubmit",
        other("UserPromptSubmit", json!({"prompt": "go on"})),
    );
    assert!(!p.path(".orchestration/codex-bash.jsonl").exists());
    assert_eq!(p.hook_json()["receipts"].as_array().unwrap().len(), 2);
}

/// A held call is applied once: the event that applies it killed before it rewrote the
/// held calls' file, the next finds its trace record and moves past it (one receipt, one
/// record), as a kept event is (handlers::pending).
#[test]
fn a_held_call_applied_by_a_killed_hook_is_not_applied_again() {
    let p = Project::new();
    let rollout = p.path("rollout.jsonl").display().to_string();
    let r = rollout.as_str();
    std::fs::write(r, call_output_line("call_5", 0, "ok\n")).unwrap();
    let test = shell_call("call_5", "cargo test", "ok\n");
    codex_hook(&p, "PostToolUse", input(&p, "PostToolUse", r, test));
    let stop = input(&p, "Stop", r, json!({"stop_hook_active": false}));
    let killed = codex_hook_with_fault(&p, "Stop", &stop, "held.applied:kill");
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&killed.status),
        Some(9)
    );
    assert!(p.path(".orchestration/codex-bash.jsonl").exists());
    // The next event (another: the killed one's is taken, as a duplicate would be).
    let again = input(&p, "Stop", r, json!({"stop_hook_active": true}));
    // The validation's checkpoint capture, forked before the kill, holds what the killed
    // hook held until it is written: the next event waits for it as a tool call would.
    let held = p.path(".orchestration/capture.held");
    let start = std::time::Instant::now();
    while held.exists() && start.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    codex_hook(&p, "Stop", again);
    assert!(!p.path(".orchestration/codex-bash.jsonl").exists());
    let hook = p.hook_json();
    assert_eq!(hook["receipts"].as_array().unwrap().len(), 1, "{hook:#}");
    let records = p.read(".orchestration/agent_trace.jsonl");
    assert_eq!(records.matches("\"call_5\"").count(), 1, "{records}");
    assert!(
        p.read(".orchestration/waymark.log")
            .contains("not applied again")
    );
}

/// Held calls are applied within the first half of the hook's deadline: what is left
/// waits for the next event, in order.
#[test]
fn held_calls_are_applied_within_half_the_deadline() {
    let p = Project::new();
    p.write(".orchestration/waymark.json", r#"{"hook_deadline": "1s"}"#);
    let rollout = p.path("rollout.jsonl").display().to_string();
    let r = rollout.as_str();
    let mut outputs = String::new();
    for id in ["call_a", "call_b"] {
        outputs.push_str(&call_output_line(id, 0, "ok\n"));
        let call = shell_call(id, &format!("echo {id} >> log.txt"), "ok\n");
        codex_hook(&p, "PostToolUse", input(&p, "PostToolUse", r, call));
    }
    std::fs::write(r, outputs).unwrap();
    // Half a second at each call applied: the second would begin past half the deadline.
    let stop = input(&p, "Stop", r, json!({"stop_hook_active": false}));
    let out = codex_hook_with_fault(&p, "Stop", &stop, "held.applied:pause");
    assert_eq!(out.status.code(), Some(0));
    let left = p.read(".orchestration/codex-bash.jsonl");
    assert!(
        left.contains("call_b") && !left.contains("call_a"),
        "{left}"
    );
    let again = input(&p, "Stop", r, json!({"stop_hook_active": true}));
    codex_hook(&p, "Stop", again);
    assert!(!p.path(".orchestration/codex-bash.jsonl").exists());
    let records = p.read(".orchestration/agent_trace.jsonl");
    let a = records.find("\"call_a\"").unwrap();
    let b = records.find("\"call_b\"").unwrap();
    assert!(a < b, "{records}");
}

/// Issue 49, item 8: a Codex session killed with a shell call held, the crash declared by
/// Claude Code's next session (which only answers), the held call applied late by the
/// next Codex session: it is recorded, but it neither brings the killed session back
/// mid-turn (a second crash declared) nor spends an attempt. Two Codex sessions started
/// within a minute (UUIDv7 ids that begin alike) read apart in the brief.
#[test]
fn a_held_call_of_a_crashed_session_applied_later_declares_nothing_again() {
    let p = Project::new();
    let rollout = p.path("rollout.jsonl").display().to_string();
    let r = rollout.as_str();
    std::fs::write(r, "").unwrap();
    codex_hook(
        &p,
        "UserPromptSubmit",
        input(
            &p,
            "UserPromptSubmit",
            r,
            json!({"prompt": "write the notes"}),
        ),
    );
    p.run(&["plan", "Write the notes"], "");
    p.run(&["step", "start", "1"], "");
    p.write("notes.txt", "half\n");
    let call = shell_call("call_h", "echo more >> notes.txt", "");
    codex_hook(&p, "PostToolUse", input(&p, "PostToolUse", r, call));
    assert!(p.path(".orchestration/codex-bash.jsonl").exists());
    // Codex is killed; Claude Code's next session declares the crash, answers, stops.
    let claude = json!({"session_id": "claude-1", "cwd": p.root(), "hook_event_name": "SessionStart", "source": "startup"});
    let brief = context_of(&p.hook("SessionStart", &claude.to_string())).unwrap();
    assert!(
        brief.contains("CRASH DETECTED (signal): Codex CLI session 00000001 ended mid-turn"),
        "{brief}"
    );
    let stop = json!({"session_id": "claude-1", "cwd": p.root(), "hook_event_name": "Stop", "stop_hook_active": false, "last_assistant_message": "it crashed"});
    p.hook("Stop", &stop.to_string());
    let attempt = p.hook_json()["steps"][0]["attempt"].clone();
    // The next Codex session, started within the same minute as the first.
    let next = "01a21ec5-0000-7000-8000-000000000002";
    let start = input_of(next, &p, "SessionStart", r, json!({"source": "startup"}));
    let brief = context_of(&codex_hook(&p, "SessionStart", start)).unwrap();
    assert!(!brief.contains("CRASH DETECTED"), "{brief}");
    assert!(!p.path(".orchestration/codex-bash.jsonl").exists());
    let hook = p.hook_json();
    let crashes = hook["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["trigger"] == "crash_detected")
        .count();
    assert_eq!(crashes, 1, "{hook:#}");
    assert_eq!(hook["steps"][0]["attempt"], attempt, "{hook:#}");
    let records = p.read(".orchestration/agent_trace.jsonl");
    assert!(
        records.contains("\"call_h\""),
        "the held call is recorded: {records}"
    );
}

/// Journals carried in by a clone (issue 50, item 3): a committed `codex-bash.jsonl` with
/// a planted rollout saying "Process exited with code 0", and a committed `pending.jsonl`
/// holding a passing validation, are never applied: no receipt is signed with the key of
/// whoever works in the clone, and each is said in the log.
#[test]
fn journals_a_repository_carries_are_never_applied() {
    let p = Project::new();
    let rollout = p.path("planted-rollout.jsonl").display().to_string();
    std::fs::write(
        &rollout,
        call_output_line("call_x", 0, "all tests passed\n"),
    )
    .unwrap();
    let held = json!({"received_at": "2026-11-27T20:00:00Z", "session_id": SESSION,
        "transcript_path": rollout, "call_id": "call_x",
        "input": serde_json::from_str::<Value>(&input(&p, "PostToolUse", &rollout, shell_call("call_x", "cargo test", "ok"))).unwrap()});
    let fixture: Value = serde_json::from_str(&p.fixture("PostToolUse-Bash.json")).unwrap();
    let mut validation = fixture.clone();
    validation["tool_input"]["command"] = "cargo test".into();
    validation["cwd"] = p.root().display().to_string().into();
    let kept =
        json!({"received_at": "2026-11-27T20:00:00Z", "event": "PostToolUse", "input": validation});
    p.write(".orchestration/codex-bash.jsonl", &format!("{held}\n"));
    p.write(".orchestration/pending.jsonl", &format!("{kept}\n"));
    // Work in the clone: a Codex event and a Claude Code event, which apply journals.
    let other = input_of(
        "another-session",
        &p,
        "UserPromptSubmit",
        &rollout,
        json!({"prompt": "go"}),
    );
    codex_hook(&p, "UserPromptSubmit", other);
    p.hook("Stop", &p.fixture("Stop.json"));
    let hook = p.hook_json();
    assert!(hook["receipts"].as_array().unwrap().is_empty(), "{hook:#}");
    let trace = std::fs::read_to_string(p.path(".orchestration/agent_trace.jsonl"));
    assert!(!trace.unwrap_or_default().contains("cargo test"));
    let log = p.read(".orchestration/waymark.log");
    assert!(
        log.contains("a held call this machine did not hold"),
        "{log}"
    );
    assert!(
        log.contains("a kept event this machine did not keep"),
        "{log}"
    );
    assert!(!p.path(".orchestration/codex-bash.jsonl").exists());
}

/// A 50 MB shell output is held by its end: the held call stays small (issue 50, item 5).
#[test]
fn a_huge_shell_output_is_held_by_its_end() {
    let p = Project::new();
    let rollout = p.path("rollout.jsonl").display().to_string();
    std::fs::write(&rollout, "").unwrap();
    let output = format!("{}\ntest result: ok\n", "noise ".repeat(9 << 20));
    let call = shell_call("call_big", "cargo test", &output);
    codex_hook(&p, "PostToolUse", input(&p, "PostToolUse", &rollout, call));
    let held = std::fs::metadata(p.path(".orchestration/codex-bash.jsonl")).unwrap();
    assert!(held.len() < 2 << 20, "{} bytes held", held.len());
    assert!(
        p.read(".orchestration/codex-bash.jsonl")
            .contains("test result: ok")
    );
}

/// Claude Code's events take none of Codex's path: a Codex call held for its verdict is
/// left for Codex's next event though the verdict is there, and Claude Code's own shell
/// call is recorded at once.
#[test]
fn claude_codes_events_leave_codexs_held_calls_alone() {
    let p = Project::new();
    let rollout = p.path("rollout.jsonl").display().to_string();
    std::fs::write(&rollout, call_output_line("call_c", 0, "ok\n")).unwrap();
    let held = shell_call("call_c", "cargo test", "ok\n");
    codex_hook(&p, "PostToolUse", input(&p, "PostToolUse", &rollout, held));
    let before = p.read(".orchestration/codex-bash.jsonl");
    p.write("b.txt", "hi\n");
    p.hook("PostToolUse", &p.fixture("PostToolUse-Bash.json"));
    assert_eq!(p.read(".orchestration/codex-bash.jsonl"), before);
    let records = p.read(".orchestration/agent_trace.jsonl");
    assert!(!records.contains("\"call_c\""), "{records}");
    assert!(
        records.contains("toolu_6f646ca5e9bd4a3eaaa4aa4f"),
        "{records}"
    );
}

/// `waymark init --agent codex` writes .codex/hooks.json once, keeps other entries, and
/// `--remove` takes only its own out.
#[test]
fn init_for_codex_is_idempotent_and_removable() {
    let p = Project::new();
    p.write(
        ".codex/hooks.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-me"}]}]}}"#,
    );
    for _ in 0..2 {
        let out = p.run(&["init", "--agent", "codex"], "");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v: Value = serde_json::from_str(&p.read(".codex/hooks.json")).unwrap();
    assert_eq!(v["hooks"]["Stop"].as_array().unwrap().len(), 2, "{v:#}");
    let ours = v["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(ours.ends_with("hook --agent codex PostToolUse"), "{ours}");
    assert!(!p.path(".claude/settings.json").exists());
    // `waymark doctor` checks Codex's registration too.
    let doctor = String::from_utf8(p.run(&["doctor"], "").stdout).unwrap();
    assert!(
        doctor.contains("hooks.json (Codex CLI) for 11 events"),
        "{doctor}"
    );
    let out = p.run(&["init", "--agent", "codex", "--remove"], "");
    assert!(out.status.success());
    let v: Value = serde_json::from_str(&p.read(".codex/hooks.json")).unwrap();
    assert_eq!(
        v,
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-me"}]}]}})
    );
    let bad = p.run(&["init", "--agent", "gemini"], "");
    assert_eq!(bad.status.code(), Some(2));
}

/// Codex sends no SessionEnd at `/clear` (measured with the TUI: tests/e2e/codex_sessions.rs):
/// the new thread's SessionStart(`clear`) makes what Claude Code's SessionEnd(`clear`)
/// makes, the "Before /clear" checkpoint and the note of what changed. Claude Code's own
/// SessionStart(`clear`) makes neither (its SessionEnd did).
#[test]
fn a_codex_clear_keeps_what_claude_codes_session_end_keeps() {
    let p = Project::new();
    std::fs::write(p.path("README.md"), "readme\n").unwrap();
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "init"]);
    // Codex keeps its rollouts in its own home, outside the project.
    let rollout = p.config.path().join("rollout.jsonl").display().to_string();
    std::fs::write(&rollout, "{\"type\":\"session_meta\"}\n").unwrap();
    let r = rollout.as_str();
    codex_hook(
        &p,
        "UserPromptSubmit",
        input(
            &p,
            "UserPromptSubmit",
            r,
            json!({"prompt": "write the parser"}),
        ),
    );
    std::fs::write(p.path("parser.rs"), "fn parse() {}\n").unwrap();
    let patch = "*** Begin Patch\n*** Add File: parser.rs\n+fn parse() {}\n*** End Patch\n";
    let call = json!({"tool_name": "apply_patch", "tool_use_id": "call_1",
        "tool_input": {"command": patch}, "tool_response": "Success.\n"});
    codex_hook(&p, "PostToolUse", input(&p, "PostToolUse", r, call));
    let clears = |p: &Project| {
        let hook = p.hook_json();
        let checkpoints = hook["checkpoints"].as_array().cloned().unwrap_or_default();
        checkpoints
            .into_iter()
            .filter(|c| c["trigger"] == "clear")
            .collect::<Vec<_>>()
    };
    // Claude Code's SessionStart(clear) alone: its SessionEnd(clear) did the keeping.
    let claude = p.hook(
        "SessionStart",
        &p.fixture_of("2.1.332", "SessionStart-clear.json"),
    );
    assert!(!claude.contains("Changed before /clear"), "{claude}");
    assert!(clears(&p).is_empty());
    // Codex's: the cleared thread's start does it.
    let cleared = "01a21ec5-0000-7000-8000-000000000002";
    let start = input_of(cleared, &p, "SessionStart", r, json!({"source": "clear"}));
    let brief = codex_hook(&p, "SessionStart", start);
    assert!(
        brief.contains("Changed before /clear, since the last commit (no checkpoint yet): 1 file"),
        "{brief}"
    );
    let clear = clears(&p);
    assert_eq!(clear.len(), 1, "{:#}", p.hook_json());
    assert_eq!(clear[0]["description"], "Before /clear");
}
