//! Codex CLI scenarios: the real `codex exec` (0.169.0) with waymark registered by
//! `waymark init --agent codex`, against the fake Responses API. A crash (SIGKILL to the
//! native binary mid-turn) gives the next Codex session the resume brief; compaction
//! checkpoints and gives the brief again; shell validations get receipts with their real
//! exit codes; `/clear` in the interactive TUI gives the cleared thread the brief.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::codex::{self, add_file, codex, register, sleeping};
use crate::codex_api::{CTurn, CodexApi, SUMMARY_MARKER};
use crate::codex_tui;
use crate::harness::{Binary, Sandbox, Version, git, kill_group, wait_for};
use crate::{by_trigger, last_session, strs};

fn shell(cmd: &str) -> CTurn {
    CTurn::Shell(cmd.to_string())
}

/// Runs a Codex session that plans two steps, finishes the first, starts the second,
/// adds parser.txt with apply_patch and is killed (SIGKILL to the native codex and the
/// tool's shell) while a shell call sleeps. Returns the session's thread id as its shell
/// saw it (`$CODEX_THREAD_ID`).
pub fn codex_crash_while_a_step_runs(sb: &Sandbox, tag: &str) -> String {
    let started = sb.root.join("codex-sleeping.pid");
    let script = vec![
        shell("waymark plan 'Plan the parser' 'Implement the parser'"),
        shell("waymark step start 1"),
        shell("waymark step done 1"),
        shell("echo \"$CODEX_THREAD_ID\" > ../thread-id && waymark step start 2"),
        CTurn::Patch(add_file(
            "parser.txt",
            &[&format!("{tag} parser, half done")],
        )),
        CTurn::Shell(sleeping(&started)),
        CTurn::Text(format!("{tag} never reached")),
    ];
    let api = CodexApi::start(script);
    let mut child = codex::spawn(sb, &api, &[&format!("{tag} build the parser")]);
    let sleeping = wait_for(Duration::from_secs(45), || started.exists());
    let killed = kill_group(child.id());
    let status = child.wait().unwrap();
    assert!(
        sleeping,
        "the sleeping shell call never started\n{}",
        codex::diagnose(sb, &api)
    );
    let shell_pid: u32 = fs::read_to_string(&started)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    kill_group(shell_pid);
    let _ = fs::remove_file(&started);
    assert!(
        killed && !status.success(),
        "codex ended before it was killed: {status}"
    );
    fs::read_to_string(sb.root.join("thread-id"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

#[test]
fn codex_crash_then_the_next_codex_session_gets_the_brief() {
    if codex().is_none() {
        return;
    }
    let sb = Sandbox::new("codex-crash", Binary::Built, Version::CURRENT);
    register(&sb);
    let thread = codex_crash_while_a_step_runs(&sb, "E2E-CX1");
    let before = sb.hook_json();
    assert_eq!(before["state"], "step_running", "{}", sb.diagnose_files());
    let session = last_session(&before);
    assert_eq!(session["status"], "active");
    // The shell's CODEX_THREAD_ID is the hooks' session_id: `waymark step` from Codex's
    // shell counts for that session.
    assert_eq!(strs(&session["session_id"]), thread, "{before:#}");
    let touched = before["current_step"]["files_touched"].to_string();
    assert!(touched.contains("parser.txt"), "{touched}");
    trace_names_codex(&sb.trace());

    let api = CodexApi::start(vec![CTurn::Text("E2E-CX1-RESUMED".into())]);
    codex::run_ok(&sb, &api, &["E2E-CX1 carry on"], "E2E-CX1-RESUMED");
    let why = codex::diagnose(&sb, &api);
    let hook = sb.hook_json();
    // Told, and the session only answered: the crash is over, not to be told again.
    crate::crash::told_once(&hook, &why);
    let brief = api.turns()[0].developer_text();
    the_brief_names_the_work(&brief, &why);
    // Named by the random end of its UUIDv7 id: two Codex sessions started within a
    // minute share their first 8 digits (issue 49, item 8).
    let named = format!("Codex CLI session {}", &thread[thread.len() - 8..]);
    assert!(brief.contains(&named), "whose crash it was:\n{brief}");
}

/// The end of a Codex turn gives the running step what changed since the last
/// checkpoint's snapshot, not what earlier steps left uncommitted (issue 49, item 8).
#[test]
fn codex_turn_end_gives_the_step_only_what_changed_since_the_checkpoint() {
    if codex().is_none() {
        return;
    }
    let sb = Sandbox::new("codex-turn-files", Binary::Built, Version::CURRENT);
    register(&sb);
    let api = CodexApi::start(vec![
        shell("waymark plan 'Write one' 'Write two'"),
        shell("waymark step start 1"),
        shell("printf 'one\\n' > one.txt"),
        shell("waymark step done 1"),
        shell("waymark step start 2"),
        CTurn::Patch(add_file("two.txt", &["two"])),
        CTurn::Text("E2E-CXF done".into()),
    ]);
    codex::run_ok(&sb, &api, &["E2E-CXF write them"], "E2E-CXF done");
    let why = codex::diagnose(&sb, &api);
    let hook = sb.hook_json();
    assert_eq!(hook["current_step"]["step_name"], "Write two", "{why}");
    assert_eq!(
        hook["current_step"]["files_touched"],
        json!(["two.txt"]),
        "{why}"
    );
    let one = &hook["steps"][0];
    assert_eq!(one["files_touched"], json!(["one.txt"]), "{why}");
}

/// The brief a session got after a crash of the parser session: the crash, the running
/// step, the completed one (DO NOT REPEAT) and the file.
pub fn the_brief_names_the_work(brief: &str, why: &str) {
    for needle in [
        "Resume brief",
        "CRASH DETECTED",
        "\"Implement the parser\"",
        "DO NOT REPEAT",
        "Plan the parser",
        "parser.txt",
    ] {
        assert!(
            brief.contains(needle),
            "the brief lacks {needle:?}:\n{brief}\n{why}"
        );
    }
}

/// Codex's records name it: `tool.name` codex, the agent in waymark's metadata, and the
/// patch's file with the model Codex named as its contributor.
pub fn trace_names_codex(trace: &[Value]) {
    let codex: Vec<&Value> = trace
        .iter()
        .filter(|r| r["tool"]["name"] == "codex")
        .collect();
    assert!(!codex.is_empty(), "no record of Codex's: {trace:#?}");
    assert!(
        codex
            .iter()
            .all(|r| r["metadata"]["waymark"]["agent"] == "codex")
    );
    let patch = codex
        .iter()
        .find(|r| r["metadata"]["waymark"]["tool_name"] == "apply_patch")
        .unwrap_or_else(|| panic!("no apply_patch record: {trace:#?}"));
    assert_eq!(patch["files"][0]["path"], "parser.txt", "{patch:#}");
    let conv = &patch["files"][0]["conversations"][0];
    assert_eq!(
        conv["contributor"]["model_id"], "openai/gpt-5.5",
        "{patch:#}"
    );
    assert_eq!(patch["metadata"]["waymark"]["mutation_class"], "patch");
}

/// The project's validation: passes once hello.txt says "fixed".
const CHECK: &str = "#!/bin/sh\n\
if grep -q fixed hello.txt 2>/dev/null; then echo \"E2E-CV-$(echo PASSED)\"; exit 0; fi\n\
echo 'E2E-CV-FAILED: hello.txt is not fixed'; exit 1\n";

#[test]
fn codex_validations_get_receipts_with_their_exit_codes() {
    if codex().is_none() {
        return;
    }
    let sb = Sandbox::new("codex-validate", Binary::Built, Version::CURRENT);
    project_with_checks(&sb);
    register(&sb);
    let fix = "*** Begin Patch\n*** Update File: hello.txt\n@@\n-hello, broken\n+hello, fixed\n*** End Patch\n";
    let api = CodexApi::start(vec![
        shell("waymark plan 'Fix hello' && waymark step start 1"),
        shell("./check.sh"),
        CTurn::Patch(fix.into()),
        shell("./check.sh"),
        shell("echo made by the shell > shell-made.txt"),
        CTurn::Text("E2E-CV-FINAL".into()),
    ]);
    codex::run_ok(&sb, &api, &["E2E-CV fix hello"], "E2E-CV-FINAL");
    let why = codex::diagnose(&sb, &api);
    assert_eq!(sb.read("hello.txt"), "hello, fixed\n", "{why}");
    let hook = sb.hook_json();
    both_runs_have_receipts(&hook, &why);
    // Files no hook named (a shell's edit) join the step at Codex's Stop, from the tree.
    let touched = hook["current_step"]["files_touched"].to_string();
    let both = touched.contains("hello.txt") && touched.contains("shell-made.txt");
    assert!(both, "{touched}\n{why}");
    // The ledger has both runs with their codes, and `waymark receipts` checks them.
    let bash: Vec<i64> = sb
        .trace()
        .iter()
        .filter(|r| r["metadata"]["waymark"]["command"] == "./check.sh")
        .filter_map(|r| r["metadata"]["waymark"]["exit_code"].as_i64())
        .collect();
    assert_eq!(bash, [1, 0], "{why}");
    let listed = sb.waymark(&["receipts"]);
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    assert!(
        !sb.project.join(".orchestration/codex-bash.jsonl").exists(),
        "{why}"
    );
}

/// `./check.sh` as the project's validation command, hello.txt to fix, committed.
fn project_with_checks(sb: &Sandbox) {
    let check = sb.project.join("check.sh");
    fs::write(&check, CHECK).unwrap();
    fs::set_permissions(&check, fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(sb.project.join("hello.txt"), "hello, broken\n").unwrap();
    git(&sb.project, &["add", "check.sh", "hello.txt"]);
    git(&sb.project, &["commit", "-q", "-m", "the checks"]);
    fs::create_dir_all(sb.project.join(".orchestration")).unwrap();
    let config = json!({"validation_commands": [r"(^|[;&|\s])\./check\.sh\b"]});
    fs::write(
        sb.project.join(".orchestration/waymark.json"),
        config.to_string(),
    )
    .unwrap();
}

/// The failing check then the passing one: observed receipts with codes 1 and 0, of the
/// step planned from Codex's shell, and a validation checkpoint.
fn both_runs_have_receipts(hook: &Value, why: &str) {
    let receipts = hook["receipts"].as_array().cloned().unwrap_or_default();
    let codes: Vec<i64> = receipts
        .iter()
        .filter_map(|r| r["exit_code"].as_i64())
        .collect();
    assert_eq!(codes, [1, 0], "{why}");
    assert!(receipts.iter().all(|r| r["observed"] == true), "{why}");
    // Made by `waymark plan` and `waymark step start` from Codex's shell.
    assert!(
        receipts.iter().all(|r| r["step_name"] == "Fix hello"),
        "{why}"
    );
    assert!(
        by_trigger(hook, "validation")
            .iter()
            .any(|c| strs(&c["description"]).contains("./check.sh")),
        "{why}"
    );
}

#[test]
fn codex_compaction_checkpoints_and_gives_the_brief() {
    if codex().is_none() {
        return;
    }
    let sb = Sandbox::new("codex-compact", Binary::Built, Version::CURRENT);
    register(&sb);
    let api = CodexApi::start(vec![
        shell("waymark plan 'Write the notes' && waymark step start 1"),
        CTurn::Heavy(Box::new(CTurn::Patch(add_file(
            "notes.txt",
            &["E2E-CC notes"],
        )))),
        CTurn::Text("E2E-CC-FINAL".into()),
    ]);
    let limit = "model_auto_compact_token_limit=5000";
    codex::run_ok(
        &sb,
        &api,
        &["-c", limit, "E2E-CC write notes"],
        "E2E-CC-FINAL",
    );
    let why = codex::diagnose(&sb, &api);
    let requests = api.requests();
    let at = requests.iter().position(|r| r.answered == "compaction");
    let at = at.unwrap_or_else(|| panic!("Codex did not compact\n{why}"));
    let hook = sb.hook_json();
    let pre = by_trigger(&hook, "pre_compact");
    assert_eq!(pre.len(), 1, "{why}");
    assert_eq!(
        hook["state"], "step_running",
        "compaction is no crash\n{why}"
    );
    // The request after the compaction holds the summary and waymark's brief.
    let after = requests[at + 1..]
        .iter()
        .find(|r| r.answered != "compaction")
        .unwrap_or_else(|| panic!("no request after the compaction\n{why}"));
    assert!(after.text().contains(SUMMARY_MARKER), "{why}");
    let brief = after.developer_text();
    for needle in [
        "Resume brief",
        "Write the notes",
        "notes.txt",
        "pre_compact",
    ] {
        assert!(
            brief.contains(needle),
            "the brief lacks {needle:?}:\n{brief}\n{why}"
        );
    }
    assert!(Path::new(&sb.path("notes.txt")).exists(), "{why}");
}

/// Ctrl-C in Codex (SIGINT to the native binary mid-tool-call) fires Interrupt then
/// SessionEnd: the turn stopped, the session ended, and the next session finds no crash.
#[test]
fn codex_interrupted_is_a_stop_not_a_crash() {
    if codex().is_none() {
        return;
    }
    let sb = Sandbox::new("codex-interrupt", Binary::Built, Version::CURRENT);
    register(&sb);
    let started = sb.root.join("codex-interrupted.pid");
    let api = CodexApi::start(vec![
        shell("waymark plan 'Build it' && waymark step start 1"),
        CTurn::Shell(sleeping(&started)),
        CTurn::Text("E2E-CI never reached".into()),
    ]);
    let mut child = codex::spawn(&sb, &api, &["E2E-CI build it"]);
    let sleeping = wait_for(Duration::from_secs(45), || started.exists());
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .is_ok_and(|s| s.success());
    let ended = wait_for(Duration::from_secs(20), || {
        child.try_wait().ok().flatten().is_some()
    });
    if !ended {
        kill_group(child.id());
    }
    let why = codex::diagnose(&sb, &api);
    assert!(sleeping && sent && ended, "{why}");
    let hook = sb.hook_json();
    let session = last_session(&hook);
    assert_ne!(session["status"], "active", "{why}");
    let last = strs(&hook["current_step"]["last_output"]);
    assert!(last.contains("interrupted"), "{last}\n{why}");

    let api = CodexApi::start(vec![CTurn::Text("E2E-CI-AGAIN".into())]);
    codex::run_ok(&sb, &api, &["E2E-CI go on"], "E2E-CI-AGAIN");
    let why = codex::diagnose(&sb, &api);
    let hook = sb.hook_json();
    assert_ne!(hook["state"], "recovering", "{why}");
    let brief = api.turns()[0].developer_text();
    assert!(
        brief.contains("Resume brief") && !brief.contains("CRASH DETECTED"),
        "{brief}"
    );
}

/// `/clear` in Codex's interactive TUI, typed into the real TUI under a pseudo-terminal
/// (`codex exec` has no /clear). Measured with 0.169.0: clearing sends no SessionEnd; the
/// cleared conversation is a new thread, whose SessionStart (source `clear`) fires with its
/// first prompt; at exit both threads get SessionEnd (`other`). So that SessionStart does
/// what Claude Code's SessionEnd(clear) does (the `clear` checkpoint, the note of what
/// changed), and the cleared thread starts with waymark's brief.
#[test]
fn codex_clear_gives_the_brief_in_the_cleared_thread() {
    if codex().is_none() {
        return;
    }
    let sb = Sandbox::new("codex-clear", Binary::Built, Version::CURRENT);
    register(&sb);
    let api = CodexApi::start(vec![
        shell("waymark plan 'Write the notes' && waymark step start 1"),
        CTurn::Patch(add_file("notes.txt", &["E2E-CXC notes"])),
        CTurn::Text("E2E-CXC-FIRST".into()),
        CTurn::Text("E2E-CXC-NEXT".into()),
    ]);
    let mut tui = codex_tui::start(&sb, &api);
    let ready = tui.wait_text("Ask Codex to do anything", Duration::from_secs(30));
    tui.ensure(ready, "the TUI never offered its prompt");
    tui.submit("E2E-CXC-PROMPT write the notes");
    turn_ends(&mut tui, &sb, "E2E-CXC-FIRST");
    assert!(
        Path::new(&sb.path("notes.txt")).exists(),
        "{}",
        tui.diagnose()
    );
    assert_eq!(
        sb.hook_json()["state"],
        "step_running",
        "{}",
        tui.diagnose()
    );

    tui.command("/clear", "start a new chat");
    // The new thread's header: the TUI is ready for the cleared conversation.
    let cleared = tui.wait_text("permissions:", Duration::from_secs(20));
    tui.ensure(cleared, "/clear did not start a new chat");
    tui.submit("E2E-CXC go on");
    turn_ends(&mut tui, &sb, "E2E-CXC-NEXT");
    tui.command("/quit", "exit Codex");
    let exited = tui.wait_exit(Duration::from_secs(20));
    tui.ensure(
        exited.is_some_and(|s| s.success()),
        "/quit did not end Codex",
    );

    // The SessionEnd hooks run as Codex exits: given a moment to land.
    wait_for(Duration::from_secs(10), || {
        let sessions = sb.hook_json()["sessions"].clone();
        let sessions = sessions.as_array().cloned().unwrap_or_default();
        sessions.iter().all(|s| s["status"] == "ended")
    });
    let why = tui.diagnose();
    the_cleared_thread_starts_from_the_brief(&api, &why);
    let hook = sb.hook_json();
    assert_eq!(hook["state"], "step_running", "/clear is no crash\n{why}");
    assert!(hook.get("recovery").is_none_or(Value::is_null), "{why}");
    // Codex sends no SessionEnd at /clear: the SessionStart(clear) made the checkpoint
    // Claude Code's SessionEnd(clear) makes, with the files as they were then.
    let clear = by_trigger(&hook, "clear");
    assert_eq!(clear.len(), 1, "one checkpoint before /clear\n{why}");
    assert_eq!(clear[0]["description"], "Before /clear", "{why}");
    // Two sessions (the thread cleared and the new one), both ended at exit, not at /clear.
    let sessions = hook["sessions"].as_array().cloned().unwrap_or_default();
    assert_eq!(sessions.len(), 2, "{why}");
    for s in &sessions {
        assert_eq!(s["status"], "ended", "{why}");
        assert_eq!(s["end_reason"], "other", "{why}");
    }
}

/// The first request of the cleared thread: a thread of its own, without the conversation
/// before /clear, with waymark's `clear` brief naming the step, its file and the request.
fn the_cleared_thread_starts_from_the_brief(api: &CodexApi, why: &str) {
    let turns = api.turns();
    let thread = |r: &crate::codex_api::CRequest| r.body["client_metadata"]["thread_id"].clone();
    let after = turns
        .iter()
        .find(|r| r.text().contains("E2E-CXC go on"))
        .unwrap_or_else(|| panic!("no request after /clear\n{why}"));
    assert_ne!(thread(after), thread(&turns[0]), "the same thread\n{why}");
    assert_ne!(thread(after), Value::Null, "{why}");
    let old = after.text();
    assert!(
        !old.contains("E2E-CXC-FIRST") && !old.contains("_call_output"),
        "the conversation before /clear is still there\n{why}"
    );
    let brief = after.developer_text();
    for needle in [
        "Resume brief",
        "— session clear",
        "\"Write the notes\"",
        "notes.txt",
        "The task: E2E-CXC-PROMPT write the notes",
    ] {
        assert!(
            brief.contains(needle),
            "the brief lacks {needle:?}:\n{brief}\n{why}"
        );
    }
    assert!(!brief.contains("CRASH DETECTED"), "{brief}\n{why}");
    // What changed before /clear, as Claude Code's cleared session is told it.
    assert!(
        brief.contains("Changed before /clear, since "),
        "{brief}\n{why}"
    );
}

/// Waits for the turn to end: waymark's Stop recorded `last` as the step's last output,
/// and the TUI told its terminal the turn is over.
fn turn_ends(tui: &mut codex_tui::Tui, sb: &Sandbox, last: &str) {
    let stopped = wait_for(Duration::from_secs(45), || {
        let hook = sb.read(".orchestration/hook.json");
        let hook: Value = serde_json::from_str(&hook).unwrap_or(Value::Null);
        hook["current_step"]["last_output"] == last
    });
    let over = stopped && tui.wait_turn_over(Duration::from_secs(10));
    tui.ensure(over, &format!("the turn did not end with {last:?}"));
}

/// A shell call held when its Codex session was killed (its exit code still to come from
/// the rollout), the crash declared by the Claude Code session that came next, and the
/// held call applied at the next Codex session's start: the crash is declared once, and
/// the step's attempt is spent once (issue 49, item 8). Codex is killed by a second
/// PostToolUse hook, registered beside waymark's, once waymark has held the call.
#[test]
fn a_held_call_applied_after_claude_declared_the_crash_declares_nothing_again() {
    if codex().is_none() || crate::harness::cli(Version::CURRENT).is_none() {
        return;
    }
    let sb = crate::resume::sandbox("codex-held", json!({}), Version::CURRENT);
    register(&sb);
    let held = sb.root.join("held");
    kill_after_held(&sb, "notes.txt", &held);
    let api = CodexApi::start(vec![
        shell("waymark plan 'Write the notes'"),
        shell("waymark step start 1"),
        shell("echo more >> notes.txt"),
        CTurn::Text("E2E-CXH never reached".into()),
    ]);
    let mut child = codex::spawn(&sb, &api, &["E2E-CXH write the notes"]);
    let was_held = wait_for(Duration::from_secs(45), || held.exists());
    kill_group(child.id());
    let _ = child.wait();
    if let Ok(pid) = fs::read_to_string(&held) {
        kill_group(pid.trim().parse().unwrap_or(0));
    }
    let why = codex::diagnose(&sb, &api);
    assert!(was_held, "the call was never held\n{why}");
    let journal = sb.read(".orchestration/codex-bash.jsonl");
    assert!(journal.contains("notes.txt"), "{journal}\n{why}");

    let brief = crate::resume::next_brief(&sb, "E2E-CXH-CLAUDE");
    assert!(brief.contains("CRASH DETECTED"), "{brief}");
    assert!(brief.contains("Codex CLI session"), "whose crash: {brief}");
    let attempt = sb.hook_json()["steps"][0]["attempt"].clone();

    let api = CodexApi::start(vec![CTurn::Text("E2E-CXH-NEXT".into())]);
    codex::run_ok(&sb, &api, &["E2E-CXH-NEXT go on"], "E2E-CXH-NEXT");
    let why = codex::diagnose(&sb, &api);
    let brief = api.turns()[0].developer_text();
    assert!(
        !brief.contains("CRASH DETECTED"),
        "declared again:\n{brief}"
    );
    assert!(!brief.contains("skip_step"), "{brief}");
    let hook = sb.hook_json();
    assert_eq!(crate::goal::crashes_declared(&hook), 1, "{hook:#}\n{why}");
    assert_eq!(hook["steps"][0]["attempt"], attempt, "{hook:#}");
    assert!(!sb.project.join(".orchestration/codex-bash.jsonl").exists());
    let trace = sb.read(".orchestration/agent_trace.jsonl");
    assert!(trace.contains("echo more >> notes.txt"), "applied: {trace}");
}

/// Registers a second PostToolUse hook for Codex, run beside waymark's (Codex runs the
/// hooks of one event concurrently): for the call whose input names `needle`, it waits
/// until waymark has held the call, then writes its own pid to `signal` and sleeps, for
/// the test to kill Codex there, between the call's PostToolUse and the next event.
fn kill_after_held(sb: &Sandbox, needle: &str, signal: &Path) {
    let script = sb.root.join("after-held.sh");
    let journal = sb.project.join(".orchestration/codex-bash.jsonl");
    let body = format!(
        "#!/bin/sh\ngrep -q '{needle}' || exit 0\n\
         for _ in $(seq 200); do grep -q '{needle}' '{j}' 2>/dev/null && break; sleep 0.05; done\n\
         sleep 0.3\necho $$ > '{s}.tmp' && mv '{s}.tmp' '{s}'\nsleep 30\n",
        j = journal.display(),
        s = signal.display(),
    );
    fs::write(&script, body).unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    let path = sb.project.join(".codex/hooks.json");
    let mut hooks: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    let post = hooks["hooks"]["PostToolUse"][0]["hooks"]
        .as_array_mut()
        .unwrap();
    post.push(json!({"type": "command", "command": script.display().to_string(), "timeout": 60}));
    fs::write(&path, serde_json::to_string_pretty(&hooks).unwrap()).unwrap();
}
