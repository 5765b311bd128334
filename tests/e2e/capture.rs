//! Captures the hook inputs of a Claude Code release into `tests/fixtures/claude-code-<v>/`,
//! as the fixtures of 2.1.197 were: real sessions of the real CLI with a plugin that
//! registers every hook event and keeps its stdin. Not a test of waymark (ignored); run it
//! when a new release is to be supported:
//!
//! ```sh
//! cargo test --test e2e capture -- --ignored
//! ```
//!
//! Paths are rewritten to the recorded project `/home/dev/project` (home `/home/dev`), as
//! the integration tests expect. The sessions: a task-list session with the task tools
//! turned on (`CLAUDE_CODE_ENABLE_TODO_TOOLS=true`, loaded through ToolSearch), a session
//! with the default tools keeping its plan with `waymark plan`, `/compact`, automatic
//! compaction, `/clear`, a turn that fails on an API error, and a permission request.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};

use crate::fake_api::{FakeApi, Turn};
use crate::harness::{Binary, Sandbox, Version, bash, cli, repo_root};

/// Every hook event 2.1.332 names (docs/events.md). WorktreeCreate and WorktreeRemove are
/// left out: a hook registered for them replaces Claude Code's own `git worktree` calls.
const EVENTS: &[&str] = &[
    "SessionStart",
    "SessionEnd",
    "Setup",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "PermissionRequest",
    "PermissionDenied",
    "Notification",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "TeammateIdle",
    "TaskCreated",
    "TaskCompleted",
    "PreCompact",
    "PostCompact",
    "InstructionsLoaded",
    "ConfigChange",
    "CwdChanged",
    "FileChanged",
    "Elicitation",
    "ElicitationResult",
];

#[test]
#[ignore = "writes tests/fixtures/claude-code-2.1.332/: run by hand for a new release"]
fn capture_the_hook_inputs_of_the_current_release() {
    let version = Version::CURRENT;
    let Some(cli) = cli(version) else {
        return;
    };
    let sb = Sandbox::new("capture", Binary::Built, version);
    let inputs = sb.root.join("inputs");
    let plugin = capture_plugin(&sb, &inputs);
    let capture = Capture {
        sb: &sb,
        cli,
        plugin,
    };
    task_list_sessions(&capture);
    default_tools_sessions(&capture);
    failure_and_permission_sessions(&capture);
    write_fixtures(&sb, &inputs, version);
    rewound_transcript(&sb, cli, version);
}

/// The capture's world: the sandbox, the CLI, and the plugin that keeps the inputs.
struct Capture<'a> {
    sb: &'a Sandbox,
    cli: &'a crate::harness::Cli,
    plugin: std::path::PathBuf,
}

impl Capture<'_> {
    /// Runs the CLI against `api` with `args` (and the capture plugin) and `env`; checks
    /// that it ends well, but for the turn that fails on an API error, which must not.
    fn run(&self, api: &FakeApi, args: &[&str], env: &[(&str, &str)]) {
        let mut args = args.to_vec();
        args.extend(["--plugin-dir", self.plugin.to_str().unwrap()]);
        let (mut c, _) = self.sb.command(self.cli, api, &args);
        for (k, v) in env {
            c.env(k, v);
        }
        let status = c.status().expect("run claude");
        // The turn that fails on an API error is the one run that ends in an error.
        let failing = args.contains(&"This turn fails");
        assert_eq!(
            status.success(),
            !failing,
            "{args:?}\n{}",
            self.sb.diagnose(api)
        );
    }
}

/// The task list, turned on and loaded through ToolSearch as the model must; then
/// `/compact`.
fn task_list_sessions(capture: &Capture) {
    let sb = capture.sb;
    let api = FakeApi::start(vec![
        Turn::tool(
            "ToolSearch",
            json!({"query": "select:TaskCreate,TaskUpdate"}),
        ),
        Turn::tool(
            "TaskCreate",
            json!({"subject": "Analyze parser", "description": "read it", "activeForm": "Analyzing the parser"}),
        ),
        Turn::tool(
            "TaskCreate",
            json!({"subject": "Implement fix", "description": "nil-safe", "activeForm": "Implementing the fix"}),
        ),
        Turn::tool(
            "TaskUpdate",
            json!({"taskId": "1", "status": "in_progress"}),
        ),
        Turn::tool("TaskUpdate", json!({"taskId": "1", "status": "completed"})),
        Turn::tool(
            "TaskUpdate",
            json!({"taskId": "2", "status": "in_progress"}),
        ),
        Turn::tool(
            "Write",
            json!({"file_path": sb.path("src/parser.rs"), "content": "fn parse() {}\n"}),
        ),
        Turn::tool("Read", json!({"file_path": sb.path("src/parser.rs")})),
        Turn::tool(
            "Edit",
            json!({"file_path": sb.path("src/parser.rs"), "old_string": "fn parse() {}", "new_string": "fn parse() -> Option<()> { None }"}),
        ),
        bash("git add -A && git commit -qm 'Add nil-safe parser' && git log --oneline -1"),
        bash("echo 'test parser::nil ... FAILED'; exit 101"),
        Turn::text("Capture: task list done"),
    ]);
    capture.run(
        &api,
        &["-p", "Fix the parser so it handles nil input"],
        &[("CLAUDE_CODE_ENABLE_TODO_TOOLS", "true")],
    );
    let api = FakeApi::start(vec![]);
    capture.run(&api, &["-p", "/compact", "--continue"], &[]);
}

/// The default tools: the plan kept with waymark, a subagent, an automatic compaction;
/// then `/clear`.
fn default_tools_sessions(capture: &Capture) {
    let api = FakeApi::start(vec![
        bash("waymark plan 'Write the docs' 'Review them'"),
        bash("waymark step start 1"),
        Turn::ToolThen {
            name: "Agent".into(),
            input: json!({"description": "Write the docs", "prompt": "Write docs/a.md", "subagent_type": "general-purpose", "run_in_background": false}),
            then: 5,
        },
        Turn::tool(
            "Write",
            json!({"file_path": capture.sb.path("docs/a.md"), "content": "# A\n"}),
        ),
        Turn::text("subagent done"),
        Turn::TooLong,
        Turn::text("Capture: docs done"),
    ]);
    capture.run(&api, &["-p", "Write the docs"], &[]);
    let api = FakeApi::start(vec![]);
    capture.run(&api, &["-p", "/clear", "--continue"], &[]);
}

/// A turn that ends on an API error, and a permission request (no bypass).
fn failure_and_permission_sessions(capture: &Capture) {
    let api = FakeApi::start(vec![Turn::ApiError]);
    capture.run(&api, &["-p", "This turn fails"], &[]);
    let api = FakeApi::start(vec![
        bash("touch needs-permission.txt"),
        Turn::text("Capture: refused"),
    ]);
    capture.run(
        &api,
        &["-p", "Touch a file", "--permission-mode", "default"],
        &[],
    );
}

/// A transcript whose conversation was rewound as the CLI writes it: two turns, then a
/// third that goes on from the end of the first (`--resume-session-at`, the rewind of
/// Claude Code's SDK; /rewind writes the same). Kept as `transcript-rewound.jsonl`.
fn rewound_transcript(sb: &Sandbox, cli: &crate::harness::Cli, version: Version) {
    let run = |script: Vec<Turn>, args: &[&str]| {
        let api = FakeApi::start(script);
        let (mut c, _) = sb.command(cli, &api, args);
        let out = c.stdout(std::process::Stdio::piped()).output().unwrap();
        let json: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        json["session_id"].as_str().unwrap_or_default().to_string()
    };
    let session = run(
        vec![Turn::text("Capture: first turn done")],
        &["-p", "First turn"],
    );
    run(
        vec![Turn::text("Capture: second turn done")],
        &["-p", "Second turn", "--continue"],
    );
    let dir = sb.home.join(".claude/projects");
    let transcript = walk_for(&dir, &format!("{session}.jsonl")).expect("the transcript");
    let text = fs::read_to_string(&transcript).unwrap();
    let end_of_first = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| {
            e["message"]["content"]
                .to_string()
                .contains("first turn done")
        })
        .and_then(|e| e["uuid"].as_str().map(str::to_string))
        .expect("the first turn's end");
    run(
        vec![Turn::text("Capture: rewound turn done")],
        &[
            "-p",
            "Rewound turn",
            "--resume",
            &session,
            "--resume-session-at",
            &end_of_first,
        ],
    );
    let project = sb.project.to_string_lossy().into_owned();
    let text = fs::read_to_string(&transcript)
        .unwrap()
        .replace(&project, "/home/dev/project")
        .replace(&project.replace(['/', '.'], "-"), "-home-dev-project")
        .replace(&sb.home.to_string_lossy().into_owned(), "/home/dev")
        .replace(&sb.tmp.to_string_lossy().into_owned(), "/tmp/claude");
    let out = repo_root().join(format!("tests/fixtures/claude-code-{version}"));
    fs::write(out.join("transcript-rewound.jsonl"), text).unwrap();
}

/// The first file named `name` under `dir`.
fn walk_for(dir: &Path, name: &str) -> Option<std::path::PathBuf> {
    for entry in fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = walk_for(&path, name) {
                return Some(found);
            }
        } else if path.file_name().is_some_and(|n| n == name) {
            return Some(path);
        }
    }
    None
}

/// A plugin that registers every event and keeps each input as `<n>-<Event>.json`.
fn capture_plugin(sb: &Sandbox, inputs: &Path) -> std::path::PathBuf {
    let dir = sb.root.join("capture-plugin");
    fs::create_dir_all(dir.join(".claude-plugin")).unwrap();
    fs::create_dir_all(dir.join("hooks")).unwrap();
    fs::create_dir_all(inputs).unwrap();
    fs::write(
        dir.join(".claude-plugin/plugin.json"),
        json!({"name": "capture", "version": "0.0.0", "description": "keeps hook inputs"})
            .to_string(),
    )
    .unwrap();
    let script = dir.join("hooks/keep");
    fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat > '{0}'/\"$(date +%s%N)-$1.json\"\n",
            inputs.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    let hooks: serde_json::Map<String, Value> = EVENTS
        .iter()
        .map(|e| {
            let command = format!("\"${{CLAUDE_PLUGIN_ROOT}}/hooks/keep\" {e}");
            (
                e.to_string(),
                json!([{"hooks": [{"type": "command", "command": command}]}]),
            )
        })
        .collect();
    fs::write(
        dir.join("hooks/hooks.json"),
        json!({"hooks": hooks}).to_string(),
    )
    .unwrap();
    dir
}

/// The kept inputs, in order, rewritten to the recorded paths: one pretty file per event
/// (and per tool, source or trigger), and the whole run as `sessions.jsonl`.
fn write_fixtures(sb: &Sandbox, inputs: &Path, version: Version) {
    let out = repo_root().join(format!("tests/fixtures/claude-code-{version}"));
    fs::create_dir_all(&out).unwrap();
    let mut names: Vec<_> = fs::read_dir(inputs)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    names.sort();
    let project = sb.project.to_string_lossy().into_owned();
    let dashed = project.replace(['/', '.'], "-");
    let rewrite = |text: &str| {
        text.replace(&project, "/home/dev/project")
            .replace(&dashed, "-home-dev-project")
            .replace(&sb.home.to_string_lossy().into_owned(), "/home/dev")
            .replace(&sb.tmp.to_string_lossy().into_owned(), "/tmp/claude")
            .replace(&sb.root.to_string_lossy().into_owned(), "/home/dev/work")
    };
    let mut lines = String::new();
    let mut seen = std::collections::HashSet::new();
    for path in names {
        let text = rewrite(&fs::read_to_string(&path).unwrap());
        let Ok(value) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        lines.push_str(&value.to_string());
        lines.push('\n');
        let event = value["hook_event_name"].as_str().unwrap_or("Unknown");
        let variant = ["tool_name", "source", "trigger", "reason"]
            .iter()
            .find_map(|k| value[k].as_str())
            .map(|v| format!("{event}-{v}"))
            .unwrap_or_else(|| event.to_string());
        for name in [event.to_string(), variant] {
            if seen.insert(name.clone()) {
                let pretty = serde_json::to_string_pretty(&value).unwrap();
                fs::write(out.join(format!("{name}.json")), pretty + "\n").unwrap();
            }
        }
    }
    fs::write(out.join("sessions.jsonl"), lines).unwrap();
}
