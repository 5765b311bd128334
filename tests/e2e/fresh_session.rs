//! Scenario 1: a fresh session plans three steps (Claude Code's task list on 2.1.197,
//! `waymark plan` on 2.1.332), starts one, writes and edits a file, commits it through Bash
//! and asks `waymark status` through the plugin's PATH shim.

use serde_json::{Value, json};

use crate::fake_api::{FakeApi, Turn};
use crate::harness::{Binary, Sandbox, Version, cli, git};
use crate::{by_trigger, last_session, strs};

on_each_version!(fresh_session_records_steps_files_commit_and_trace);

fn fresh_session_records_steps_files_commit_and_trace(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = Sandbox::new("fresh", Binary::Built, version);
    let api = FakeApi::start(script(&sb));
    sb.run_ok(
        &api,
        &["-p", "E2E-S1 write a greeting and commit it"],
        "E2E-S1-FINAL",
    );
    let why = sb.diagnose(&api);

    let head = the_cli_did_the_work(&sb);
    let hook = sb.hook_json();
    let task_id = hook["task_id"].as_str().unwrap();
    plan_and_session_are_recorded(&hook, &why);
    checkpoints_are_recorded(&hook, &head, &why);
    hook_md_is_readable_alone(&sb, task_id);
    the_api_saw_the_prompt_and_waymark_status(&api, task_id);
    the_trace_records_the_tools(&sb);
}

/// The session: three steps planned, the first done with a Write and an Edit, the second
/// started with a commit and `waymark status` through Bash.
fn script(sb: &Sandbox) -> Vec<Turn> {
    let file = sb.path("greeting.txt");
    let mut script = sb.plan(&[
        "Write the greeting",
        "Polish the greeting",
        "Commit the greeting",
    ]);
    script.extend([
        sb.start_step(1),
        Turn::tool(
            "Write",
            json!({"file_path": file, "content": "hello from E2E-S1-WRITE\nsecond line\n"}),
        ),
        Turn::tool(
            "Edit",
            json!({"file_path": file, "old_string": "hello", "new_string": "HELLO"}),
        ),
        sb.finish_step(1),
        sb.start_step(2),
        Turn::tool(
            "Bash",
            json!({"command": "git add greeting.txt && git commit -m 'E2E-S1-COMMIT greeting'", "description": "Commit the greeting"}),
        ),
        // The plugin's bin/ is on the Bash tool's PATH: the agent can ask waymark itself.
        Turn::tool(
            "Bash",
            json!({"command": "waymark status", "description": "Ask waymark"}),
        ),
        Turn::text("E2E-S1-FINAL all done"),
    ]);
    script
}

/// Checks that Claude Code really did what the script asked for; returns the commit's hash.
fn the_cli_did_the_work(sb: &Sandbox) -> String {
    assert_eq!(
        sb.read("greeting.txt"),
        "HELLO from E2E-S1-WRITE\nsecond line\n"
    );
    let head = git(&sb.project, &["log", "--format=%H %s", "-1"]);
    assert!(head.contains("E2E-S1-COMMIT greeting"), "{head}");
    head.split_whitespace().next().unwrap().to_string()
}

/// Checks hook.json: the plan from TaskCreate/TaskUpdate, the file in its step, the session.
fn plan_and_session_are_recorded(hook: &Value, why: &str) {
    let task_id = hook["task_id"].as_str().unwrap();
    assert!(task_id.starts_with("task-"), "{task_id}");
    let names: Vec<&str> = hook["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "Write the greeting",
            "Polish the greeting",
            "Commit the greeting"
        ]
    );
    let steps = &hook["steps"];
    assert_eq!(steps[0]["status"], "completed", "{why}");
    assert_eq!(steps[0]["files_touched"], json!(["greeting.txt"]), "{why}");
    assert_eq!(steps[1]["status"], "in_progress");
    assert_eq!(steps[2]["status"], "pending");
    assert_eq!(hook["state"], "step_running");
    let current = &hook["current_step"];
    assert_eq!(current["step_name"], "Polish the greeting");
    assert_eq!(current["attempt"], 1);
    // Stop kept the last assistant message; SessionEnd closed the session cleanly.
    assert_eq!(current["last_output"], "E2E-S1-FINAL all done");
    assert_eq!(last_session(hook)["status"], "ended");
    assert_eq!(hook["last_prompt"], "E2E-S1 write a greeting and commit it");
}

/// Checks the checkpoints: the step completion and the commit, with its real hash `head`.
fn checkpoints_are_recorded(hook: &Value, head: &str, why: &str) {
    let done = by_trigger(hook, "step_complete");
    assert_eq!(done.len(), 1, "{why}");
    assert!(strs(&done[0]["description"]).contains("Write the greeting"));
    let commits = by_trigger(hook, "git_commit");
    assert_eq!(commits.len(), 1, "{why}");
    assert!(strs(&commits[0]["description"]).contains("E2E-S1-COMMIT greeting"));
    assert_eq!(commits[0]["git_commit"], head);
    assert_eq!(commits[0]["git_branch"], "main");
}

/// Checks that HOOK.md, readable alone, names the task, the step, the commit and the end.
fn hook_md_is_readable_alone(sb: &Sandbox, task_id: &str) {
    let md = sb.read(".orchestration/HOOK.md");
    for needle in [
        task_id,
        "Polish the greeting",
        "Do not repeat step 1 \"Write the greeting\"",
        "E2E-S1-COMMIT greeting",
        "E2E-S1-FINAL all done",
    ] {
        assert!(md.contains(needle), "HOOK.md lacks {needle:?}:\n{md}");
    }
}

/// Checks that the fake API saw the prompt first, no resume brief (there was nothing to
/// resume), and that the agent's `waymark status` answered from the same hook.json.
fn the_api_saw_the_prompt_and_waymark_status(api: &FakeApi, task_id: &str) {
    let main = api.main_requests();
    assert!(main[0].text().contains("E2E-S1 write a greeting"));
    assert!(
        !main[0].text().contains("Resume brief"),
        "a fresh project got a resume brief"
    );
    let status = api
        .tool_result_text(main.last().unwrap())
        .expect("the last request answers `waymark status`");
    assert!(
        status.contains(task_id) && status.contains("Polish the greeting"),
        "`waymark status` through the plugin's PATH shim said:\n{status}"
    );
}

/// Checks the trace: the Write and the Edit with their file and lines, the commit's Bash call.
fn the_trace_records_the_tools(sb: &Sandbox) {
    let trace = sb.trace();
    let record_for = |tool: &str| {
        trace
            .iter()
            .find(|r| r["metadata"]["waymark"]["tool_name"] == tool)
            .unwrap_or_else(|| panic!("no {tool} record in the trace: {trace:#?}"))
    };
    for tool in ["Write", "Edit"] {
        let r = record_for(tool);
        assert_eq!(r["vcs"]["type"], "git");
        assert_eq!(r["tool"]["name"], "claude-code");
        assert_eq!(r["files"][0]["path"], "greeting.txt", "{r:#}");
        let range = &r["files"][0]["conversations"][0]["ranges"][0];
        assert_eq!(range["start_line"], 1, "{r:#}");
    }
    assert_eq!(
        record_for("Write")["files"][0]["conversations"][0]["ranges"][0]["end_line"],
        2
    );
    let bash = trace
        .iter()
        .find(|r| strs(&r["metadata"]["waymark"]["command"]).contains("git commit"))
        .unwrap_or_else(|| panic!("no git commit record in the trace: {trace:#?}"));
    assert_eq!(bash["metadata"]["waymark"]["exit_code"], 0);
    assert_eq!(bash["files"], json!([]));
}
