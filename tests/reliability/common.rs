//! Helpers shared by the reliability tests: running the real binary as a plain process
//! (for concurrency and killing), reading back the state files.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::util::Project;

/// The binary under test: this build's, or `WAYMARK_TEST_BIN` (the long concurrency run
/// uses the release build, as the budgets are measured on it: see docs/guarantees.md).
pub fn bin() -> &'static str {
    static BIN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        std::env::var("WAYMARK_TEST_BIN")
            .ok()
            .filter(|b| !b.is_empty())
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_waymark").to_string())
    })
}

/// `waymark hook <event>` in `p`, as a std process (not yet started), with the same
/// environment as `Project::waymark`.
pub fn hook_command(p: &Project, event: &str) -> Command {
    let mut c = Command::new(bin());
    c.args(["hook", event])
        .current_dir(p.root())
        .env("CLAUDE_PROJECT_DIR", p.root())
        .env("XDG_CONFIG_HOME", p.config.path())
        .env("HOME", p.config.path())
        .env_remove("WAYMARK_AUTO_RESUME_ON_START")
        .env_remove("WAYMARK_TEST_FAULT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Starts a hook process and hands it its input; the caller waits or kills.
pub fn spawn_hook(mut cmd: Command, input: &[u8]) -> Child {
    let mut child = cmd.spawn().expect("spawn waymark");
    let mut stdin = child.stdin.take().unwrap();
    // A killed child closes the pipe early: a write error here is expected then.
    let _ = stdin.write_all(input);
    drop(stdin);
    child
}

/// Runs one hook to the end.
/// `input` as Claude Code would send it for a later event of the same kind: with a
/// `prompt_id` of its own (the same input twice from one Claude Code process is one event
/// delivered to two registrations of waymark's, and handled once).
pub fn again(input: &Value) -> Value {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let mut v = input.clone();
    v["prompt_id"] = format!("again-{}", N.fetch_add(1, Ordering::SeqCst)).into();
    v
}

pub fn run_hook(p: &Project, event: &str, input: &Value) -> Output {
    let child = spawn_hook(hook_command(p, event), input.to_string().as_bytes());
    child.wait_with_output().unwrap()
}

/// Every file under `dir`, recursively (symlinks not followed).
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let path = e.path();
        let ft = e.file_type().unwrap();
        if ft.is_dir() {
            out.extend(walk(&path));
        }
        out.push(path);
    }
    out
}

/// Temp files left anywhere under `.orchestration`.
/// Temp files left in the state dir by writers that did not finish. A temp file a live
/// writer is using (a checkpoint capture, taken by a detached process after the event)
/// goes within moments; one a killed writer left stays: only those are returned.
pub fn tmp_leftovers(p: &Project) -> Vec<PathBuf> {
    let temps = || -> Vec<PathBuf> {
        walk(&p.path(".orchestration"))
            .into_iter()
            .filter(|f| f.to_string_lossy().ends_with(".tmp"))
            .collect()
    };
    let start = std::time::Instant::now();
    let mut found = temps();
    while !found.is_empty() && start.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(50));
        let now = temps();
        found.retain(|f| now.contains(f));
    }
    found
}

/// The trace's records; panics on any line that is not JSON, except (when `torn_ok`) a
/// last line without its newline.
pub fn trace_records(p: &Project) -> Vec<Value> {
    let text =
        std::fs::read_to_string(p.path(".orchestration/agent_trace.jsonl")).unwrap_or_default();
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "the trace ends in a torn line"
    );
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("trace line {}: not JSON ({e}): {l:.200}", i + 1))
        })
        .collect()
}

/// How many trace records carry this tool_use_id (metadata.waymark.tool_use_id).
pub fn trace_count(records: &[Value], tool_use_id: &str) -> usize {
    records
        .iter()
        .filter(|r| r["metadata"]["waymark"]["tool_use_id"] == tool_use_id)
        .count()
}

/// The lessons of AGENT.md: the `### ` sections.
pub fn lessons(p: &Project) -> Vec<String> {
    let text = std::fs::read_to_string(p.path("AGENT.md")).unwrap_or_default();
    text.split("\n### ")
        .skip(1)
        .map(|s| s.to_string())
        .collect()
}

/// Every file path hook.json records as touched (all steps, the current step, and the
/// files touched between steps).
pub fn files_touched(hook: &Value) -> Vec<String> {
    let mut files = Vec::new();
    let lists = hook["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| &s["files_touched"])
        .chain([
            &hook["current_step"]["files_touched"],
            &hook["unassigned_files"],
        ]);
    for list in lists {
        for f in list.as_array().into_iter().flatten() {
            files.push(f.as_str().unwrap().to_string());
        }
    }
    files
}

/// A small deterministic PRNG (xorshift64*), so a failing run can be repeated by seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn from_env_or_time(var: &str) -> (Rng, u64) {
        let seed = std::env::var(var)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
            });
        (Rng::new(seed), seed)
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// One cycle of ten mixed events from one agent, every identifier unique to `tag`:
/// a prompt, a step created and started, a Write and an Edit of `src/<dir>/<tag>.txt`,
/// a Bash call, a denied call, a failed Bash call, the step completed, and a second step
/// created (left pending). What each leaves behind is in [`Expect`].
pub fn cycle(root: &Path, session: &str, dir: &str, tag: &str) -> Vec<(&'static str, Value)> {
    let file = root.join(format!("src/{dir}/{tag}.txt"));
    let mut events = cycle_start(root, session, &file, tag);
    events.extend(cycle_end(root, session, &file, tag));
    events
}

/// Event `name` of session `session` in `root`, with the fields of `extra`.
fn cycle_event(
    root: &Path,
    session: &str,
    name: &'static str,
    extra: Value,
) -> (&'static str, Value) {
    let mut v = serde_json::json!({"session_id": session, "cwd": root, "hook_event_name": name,
           "permission_mode": "bypassPermissions"});
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    (name, v)
}

/// The first five events of a [`cycle`]: the prompt, the step created and started, the
/// Write of `file`, the Bash call.
fn cycle_start(root: &Path, session: &str, file: &Path, tag: &str) -> Vec<(&'static str, Value)> {
    use serde_json::json;
    let with = |name: &'static str, extra: Value| cycle_event(root, session, name, extra);
    vec![
        with(
            "UserPromptSubmit",
            json!({"prompt": format!("prompt {tag}")}),
        ),
        with(
            "PostToolUse",
            json!({"tool_name": "TaskCreate", "tool_use_id": format!("toolu_{tag}_create"),
                   "tool_input": {"subject": format!("Step {tag}"), "description": "d", "activeForm": format!("Doing {tag}")},
                   "tool_response": {"task": {"id": tag, "subject": format!("Step {tag}")}}}),
        ),
        with(
            "PostToolUse",
            json!({"tool_name": "TaskUpdate", "tool_use_id": format!("toolu_{tag}_start"),
                   "tool_input": {"taskId": tag, "status": "in_progress"},
                   "tool_response": {"success": true, "taskId": tag, "updatedFields": ["status"],
                                     "statusChange": {"from": "pending", "to": "in_progress"}}}),
        ),
        with(
            "PostToolUse",
            json!({"tool_name": "Write", "tool_use_id": format!("toolu_{tag}_write"),
                   "tool_input": {"file_path": file, "content": format!("{tag}\n")},
                   "tool_response": {"type": "create", "filePath": file, "content": format!("{tag}\n"),
                                     "structuredPatch": [], "originalFile": null}}),
        ),
        with(
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_use_id": format!("toolu_{tag}_bash"),
                   "tool_input": {"command": format!("echo {tag}")},
                   "tool_response": {"stdout": tag, "stderr": "", "interrupted": false}}),
        ),
    ]
}

/// The last five events of a [`cycle`]: the denied call, the Edit of `file`, the failed
/// Bash call, the step completed, the second step created.
fn cycle_end(root: &Path, session: &str, file: &Path, tag: &str) -> Vec<(&'static str, Value)> {
    use serde_json::json;
    let with = |name: &'static str, extra: Value| cycle_event(root, session, name, extra);
    vec![
        with(
            "PermissionDenied",
            json!({"tool_name": "Bash", "tool_use_id": format!("toolu_{tag}_denied"),
                   "tool_input": {"command": format!("rm -rf /tmp/{tag}")},
                   "reason": format!("denied-{tag}: rm -rf is not allowed")}),
        ),
        with(
            "PostToolUse",
            json!({"tool_name": "Edit", "tool_use_id": format!("toolu_{tag}_edit"),
                   "tool_input": {"file_path": file, "old_string": tag, "new_string": format!("{tag} edited")},
                   "tool_response": {"filePath": file, "oldString": tag, "newString": format!("{tag} edited"),
                                     "structuredPatch": [{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1,
                                                          "lines": [format!("-{tag}"), format!("+{tag} edited")]}]}}),
        ),
        with(
            "PostToolUseFailure",
            json!({"tool_name": "Bash", "tool_use_id": format!("toolu_{tag}_fail"),
                   "tool_input": {"command": format!("false {tag}")},
                   "error": format!("Exit code 1\n{tag} failed"), "is_interrupt": false}),
        ),
        with(
            "PostToolUse",
            json!({"tool_name": "TaskUpdate", "tool_use_id": format!("toolu_{tag}_done"),
                   "tool_input": {"taskId": tag, "status": "completed"},
                   "tool_response": {"success": true, "taskId": tag, "updatedFields": ["status"],
                                     "statusChange": {"from": "in_progress", "to": "completed"}}}),
        ),
        with(
            "TaskCreated",
            json!({"task_id": format!("{tag}-later"), "task_subject": format!("Later {tag}"),
                   "task_description": "after"}),
        ),
    ]
}

/// The tool_use_ids of a cycle that must each be in the trace exactly once.
pub fn traced_ids(tag: &str) -> [String; 4] {
    ["write", "bash", "edit", "fail"].map(|k| format!("toolu_{tag}_{k}"))
}
