//! Rewind after a real session (issue 16): a step's work checkpointed when its task
//! completes, a second session that rewrites a file with Write, edits another with a Bash
//! `sed -i` and adds a third; `waymark rewind` puts the project back as the checkpoint had
//! it, and the next session's brief says so.

use std::fs;

use serde_json::json;

use crate::by_trigger;
use crate::fake_api::{FakeApi, Turn};
use crate::harness::{Binary, Sandbox, Version, bash, cli, crash, sleeping, wait_for};

on_each_version!(
    rewind_after_a_real_session_restores_the_files_and_the_next_brief_says_so,
    a_rewound_conversation_puts_the_plan_back_and_names_the_checkpoint,
    a_crash_after_a_rewind_resumes_from_the_rewind_s_target,
);

fn rewind_after_a_real_session_restores_the_files_and_the_next_brief_says_so(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = Sandbox::new("rewind", Binary::Built, version);
    let checkpoint = a_step_done_and_captured(&sb);
    a_session_wanders_off(&sb);

    let out = sb.waymark(&["rewind", &checkpoint]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(sb.read("src/greet.txt"), "hello\n");
    assert_eq!(sb.read("src/names.txt"), "ada\ngrace\n");
    assert!(!sb.project.join("src/stray.txt").exists(), "{said}");

    let api = FakeApi::start(vec![Turn::text("E2E-RW3 done")]);
    sb.run_ok(&api, &["-p", "E2E-RW3 go on"], "E2E-RW3 done");
    let request = &api.main_requests()[0];
    let brief = request
        .find_text("Resume brief")
        .unwrap_or_else(|| panic!("no brief\n{}", sb.diagnose(&api)));
    assert!(
        brief.contains("FILES REWOUND") && brief.contains(&checkpoint),
        "{brief}"
    );
    assert!(
        fs::read_to_string(sb.project.join(".orchestration/HOOK.md"))
            .unwrap()
            .contains("FILES REWOUND")
    );
}

/// Runs a session whose one step writes two files and completes; checks that its
/// checkpoint's capture holds a snapshot, and returns the checkpoint's id.
fn a_step_done_and_captured(sb: &Sandbox) -> String {
    let mut script = sb.plan(&["Write the greeting"]);
    script.extend([
        sb.start_step(1),
        Turn::tool(
            "Write",
            json!({"file_path": sb.path("src/greet.txt"), "content": "hello\n"}),
        ),
        Turn::tool(
            "Write",
            json!({"file_path": sb.path("src/names.txt"), "content": "ada\ngrace\n"}),
        ),
        sb.finish_step(1),
        Turn::text("E2E-RW1 done"),
    ]);
    let api = FakeApi::start(script);
    sb.run_ok(&api, &["-p", "E2E-RW1 write the greeting"], "E2E-RW1 done");
    let hook = sb.hook_json();
    let done = by_trigger(&hook, "step_complete");
    let last = done
        .last()
        .unwrap_or_else(|| panic!("{}", sb.diagnose(&api)));
    let capture = sb.capture(&hook, last);
    assert!(capture["snapshot"].is_string(), "{capture}");
    last["checkpoint_id"].as_str().unwrap().to_string()
}

/// Runs a second session that rewrites a file with Write, edits another with a Bash
/// `sed -i` and adds a third; checks that the Bash tool ran.
fn a_session_wanders_off(sb: &Sandbox) {
    let api = FakeApi::start(vec![
        Turn::tool(
            "Write",
            json!({"file_path": sb.path("src/greet.txt"), "content": "hello, wandering\n"}),
        ),
        Turn::tool(
            "Bash",
            json!({"command": "sed -i s/grace/linus/ src/names.txt && echo stray > src/stray.txt", "description": "e2e"}),
        ),
        Turn::text("E2E-RW2 done"),
    ]);
    sb.run_ok(
        &api,
        &["-p", "E2E-RW2 wander", "--continue"],
        "E2E-RW2 done",
    );
    assert_eq!(
        sb.read("src/names.txt"),
        "ada\nlinus\n",
        "the Bash tool ran"
    );
}

/// The uuid of the transcript entry of the assistant's text `text` (the end of a turn).
fn entry_of(transcript: &str, text: &str) -> String {
    let body = fs::read_to_string(transcript).unwrap();
    body.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e["type"] == "assistant" && e["message"]["content"].to_string().contains(text))
        .and_then(|e| e["uuid"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no entry of {text:?} in {transcript}"))
}

/// Claude Code's own /rewind ("restore conversation"), as the CLI writes it: the next
/// prompt follows an earlier entry of the transcript (`--resume-session-at` is the same
/// rewind, scripted). waymark notices at the turn's next event, puts the plan back as it
/// stood then, and names the checkpoint whose `waymark rewind` undoes what Bash changed.
fn a_rewound_conversation_puts_the_plan_back_and_names_the_checkpoint(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = Sandbox::new("rewound-conversation", Binary::Built, version);
    let (session, kept) = a_first_turn_with_a_step_done(&sb);
    let transcript = a_second_turn_to_take_back(&sb);

    // The rewind: the conversation goes on from the end of the first turn.
    let end_of_first = entry_of(&transcript, "E2E-RC1 done");
    // The rewound turn's first tool call already sees the plan put back (issue 42, 4).
    let api = FakeApi::start(vec![bash("waymark plan"), Turn::text("E2E-RC3 done")]);
    sb.run_ok(
        &api,
        &[
            "-p",
            "E2E-RC3 go on",
            "--resume",
            &session,
            "--resume-session-at",
            &end_of_first,
        ],
        "E2E-RC3 done",
    );
    let why = sb.diagnose(&api);
    the_plan_is_back(&sb, &why);
    the_agent_is_told(&api, &kept, &why);
    let listed = api
        .main_requests()
        .iter()
        .find_map(|r| api.tool_result_text(r))
        .unwrap_or_else(|| panic!("no result of `waymark plan`\n{why}"));
    assert!(
        listed.contains("2. [>] Write the docs") && !listed.contains("[x] Write the docs"),
        "the first tool call saw the undone step:\n{listed}\n{why}"
    );
    // And that checkpoint's rewind undoes what Bash changed too.
    let out = sb.waymark(&["rewind", &kept]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(sb.read("parser.txt"), "parser v1\n");
    assert!(!sb.project.join("docs.txt").exists());
}

/// Runs a first turn that plans three steps, does the first and starts the second;
/// returns its session id and the id of the step's checkpoint.
fn a_first_turn_with_a_step_done(sb: &Sandbox) -> (String, String) {
    let mut script = sb.plan(&["Write the parser", "Write the docs", "Ship it"]);
    script.extend([
        sb.start_step(1),
        Turn::tool(
            "Write",
            json!({"file_path": sb.path("parser.txt"), "content": "parser v1\n"}),
        ),
        sb.finish_step(1),
        sb.start_step(2),
        Turn::text("E2E-RC1 done"),
    ]);
    let api = FakeApi::start(script);
    let run = sb.run_ok(&api, &["-p", "E2E-RC1 build"], "E2E-RC1 done");
    let session = run.json.as_ref().unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let kept = by_trigger(&sb.hook_json(), "step_complete")[0]["checkpoint_id"]
        .as_str()
        .unwrap()
        .to_string();
    (session, kept)
}

/// Runs a second turn, later taken back: the docs written, the parser changed through
/// Bash, step 2 done (checked). Returns the session's transcript path.
fn a_second_turn_to_take_back(sb: &Sandbox) -> String {
    let api = FakeApi::start(vec![
        Turn::tool(
            "Write",
            json!({"file_path": sb.path("docs.txt"), "content": "docs\n"}),
        ),
        bash("echo 'tuned by bash' >> parser.txt"),
        sb.finish_step(2),
        Turn::text("E2E-RC2 done"),
    ]);
    sb.run_ok(&api, &["-p", "E2E-RC2 docs", "--continue"], "E2E-RC2 done");
    let before = sb.hook_json();
    assert_eq!(
        before["steps"][1]["status"],
        "completed",
        "{}",
        sb.diagnose(&api)
    );
    before["sessions"][0]["transcript_path"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Checks that the plan is back as it stood at the end of the first turn, and that the
/// history records the rewound conversation.
fn the_plan_is_back(sb: &Sandbox, why: &str) {
    let hook = sb.hook_json();
    assert_eq!(hook["steps"][0]["status"], "completed", "{why}");
    assert_eq!(hook["steps"][1]["status"], "in_progress", "{why}");
    assert_eq!(hook["current_step"]["step_name"], "Write the docs", "{why}");
    assert!(
        hook["history"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["trigger"] == "conversation_rewound"),
        "{why}"
    );
}

/// Checks that the agent is told at the turn's first tool call: the step no longer done,
/// the checkpoint `kept`, and its `waymark rewind`.
fn the_agent_is_told(api: &FakeApi, kept: &str, why: &str) {
    let told = api
        .main_requests()
        .iter()
        .find_map(|r| r.find_string("CONVERSATION REWOUND"))
        .unwrap_or_else(|| panic!("the agent was not told\n{why}"));
    for needle in [
        "the plan is back as it was then: no longer done or started: \"Write the docs\"",
        &format!("checkpoint {kept}"),
        &format!("`waymark rewind {kept}` puts every file back"),
    ] {
        assert!(told.contains(needle), "lacks {needle:?}:\n{told}");
    }
}

/// The user rewinds to step 1's checkpoint, then a session crashes mid-turn (issue 31,
/// item 2). The next brief resumes from the rewind's target, never from the rewind's own
/// undo checkpoint: it neither says "Resumed from checkpoint: Before rewind" nor points
/// at the undo (which would undo the user's rewind), and the files the rewind put back
/// are not called changed.
fn a_crash_after_a_rewind_resumes_from_the_rewind_s_target(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = Sandbox::new("rewind-crash", Binary::Built, version);
    let target = two_steps_the_first_done(&sb);
    let out = sb.waymark(&["rewind", &target]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let undo = by_trigger(&sb.hook_json(), "pre_rewind")[0]["checkpoint_id"]
        .as_str()
        .unwrap()
        .to_string();
    a_session_killed_mid_turn(&sb);

    let api = FakeApi::start(vec![Turn::text("E2E-RK3 resumed")]);
    sb.run_ok(&api, &["-p", "E2E-RK3 carry on"], "E2E-RK3 resumed");
    let why = sb.diagnose(&api);
    let brief = api.main_requests()[0]
        .find_text("Resume brief")
        .unwrap_or_else(|| panic!("no brief\n{why}"));
    assert!(
        brief.contains(&format!("Resume from checkpoint {target}")),
        "{brief}\n{why}"
    );
    assert!(brief.contains("CRASH DETECTED"), "{brief}");
    assert!(
        brief.contains("Resumed from checkpoint: Step completed"),
        "{brief}"
    );
    assert!(!brief.contains("Before rewind"), "{brief}");
    // The undo is named only as the way back to the undone work, never as what to do.
    let todo = &brief[brief.find("What to do now").unwrap()..];
    assert!(
        !todo.contains(&undo) && !todo.contains("waymark rewind"),
        "{brief}"
    );
    assert!(
        !brief.contains("changed since the last checkpoint"),
        "{brief}"
    );
}

/// A session that plans two steps, writes step 1's file, completes it (its checkpoint is
/// returned), starts step 2 and writes a second file there; then stops.
fn two_steps_the_first_done(sb: &Sandbox) -> String {
    let mut script = sb.plan(&["Write the greeting", "Write the farewell"]);
    script.extend([
        sb.start_step(1),
        Turn::tool(
            "Write",
            json!({"file_path": sb.path("src/greet.txt"), "content": "hello\n"}),
        ),
        sb.finish_step(1),
        sb.start_step(2),
        Turn::tool(
            "Write",
            json!({"file_path": sb.path("src/bye.txt"), "content": "bye\n"}),
        ),
        Turn::text("E2E-RK1 done"),
    ]);
    let api = FakeApi::start(script);
    sb.run_ok(&api, &["-p", "E2E-RK1 write both"], "E2E-RK1 done");
    let hook = sb.hook_json();
    by_trigger(&hook, "step_complete")
        .first()
        .unwrap_or_else(|| panic!("{}", sb.diagnose(&api)))["checkpoint_id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A session killed (its whole process group, and the Bash tool's shell) while a Bash call
/// sleeps, after a Write of a new file: a crash mid-turn.
fn a_session_killed_mid_turn(sb: &Sandbox) {
    let started = sb.root.join("rk-shell.pid");
    let api = FakeApi::start(vec![
        Turn::tool(
            "Write",
            json!({"file_path": sb.path("src/farewell.txt"), "content": "farewell\n"}),
        ),
        sleeping(&started),
        Turn::text("E2E-RK2 never reached"),
    ]);
    let child = sb.spawn(&api, &["-p", "E2E-RK2 go on", "--continue"]);
    let asleep = wait_for(std::time::Duration::from_secs(45), || started.exists());
    assert!(asleep, "the Bash call never started\n{}", sb.diagnose(&api));
    crash(child, &started);
}
