//! Bad and hostile input: a corpus of malformed, truncated, wrong-typed, oversized and
//! hostile events (paths with `..`, absolute paths outside the root, symlinks leading out,
//! NUL bytes, a transcript that is a FIFO, 10,000 files in one event). Every one exits 0
//! within its deadline, writes nothing outside the project, and what it refused is said
//! in the log. (Malformed, empty and wrong-typed JSON, non-UTF-8, 50 MB and >64 MiB
//! inputs are in tests/hook_cli.rs.)

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::*;
use crate::util::Project;

/// A project at `<base>/proj` with a sibling `<base>/outside` holding a file, and a
/// symlink `proj/link` → `outside`.
pub struct Sandbox {
    pub base: tempfile::TempDir,
    pub p: Project,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let base = tempfile::tempdir().unwrap();
        let p = Project::new();
        // Move the scratch project under `base` so that "outside" is observable.
        let proj = base.path().join("proj");
        std::fs::rename(p.root(), &proj).unwrap();
        std::os::unix::fs::symlink(&proj, p.root()).unwrap();
        let outside = base.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("victim.txt"), "untouched\n").unwrap();
        std::os::unix::fs::symlink(&outside, proj.join("link")).unwrap();
        Sandbox { base, p }
    }

    pub fn root(&self) -> PathBuf {
        self.base.path().join("proj")
    }

    pub fn outside(&self) -> PathBuf {
        self.base.path().join("outside")
    }

    /// Every file outside the project, with its content.
    pub fn outside_state(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut m = BTreeMap::new();
        for f in walk(self.base.path()) {
            if f.starts_with(self.root()) {
                continue;
            }
            m.insert(f.clone(), std::fs::read(&f).unwrap_or_default());
        }
        m
    }
}

/// Runs one event against the sandbox's real root; asserts the never-fail contract.
/// Ends session `s`'s turn (a Stop event), as a session does after its tools ran.
fn stop(s: &Sandbox) {
    let stop = json!({"session_id": "s", "cwd": s.root(), "last_assistant_message": "done"});
    feed(s, "Stop", stop.to_string().as_bytes());
}

fn feed(s: &Sandbox, event: &str, input: &[u8]) -> std::process::Output {
    let mut cmd = hook_command(&s.p, event);
    cmd.env("CLAUDE_PROJECT_DIR", s.root())
        .current_dir(s.root());
    let start = Instant::now();
    let out = spawn_hook(cmd, input).wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{event}: {out:?}");
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{event} took {:?}",
        start.elapsed()
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !stdout.trim().is_empty() {
        serde_json::from_str::<Value>(stdout.trim())
            .unwrap_or_else(|e| panic!("{event}: stdout not JSON ({e}): {stdout:.300}"));
    }
    out
}

fn write_event(root: &Path, cwd: &Path, file_path: &str, id: &str) -> Value {
    json!({"session_id": "s", "cwd": cwd, "hook_event_name": "PostToolUse", "tool_name": "Write",
           "tool_use_id": id,
           "tool_input": {"file_path": file_path, "content": "pwned\n"},
           "tool_response": {"type": "create", "filePath": file_path, "content": "pwned\n", "structuredPatch": []},
           "transcript_path": root.join("no-such-transcript.jsonl")})
}

fn log(s: &Sandbox) -> String {
    std::fs::read_to_string(s.root().join(".orchestration/waymark.log")).unwrap_or_default()
}

/// hook.json, with its plan (plan.json) as `steps`.
fn hook_json(s: &Sandbox) -> Value {
    let read = |f: &str| std::fs::read_to_string(s.root().join(".orchestration").join(f));
    let mut hook: Value = serde_json::from_str(&read("hook.json").unwrap()).unwrap();
    if let Ok(plan) = read("plan.json") {
        hook["steps"] = serde_json::from_str::<Value>(&plan).unwrap()["steps"].clone();
    }
    hook
}

#[test]
fn paths_leading_out_of_the_project_are_never_recorded_as_touched_nor_written() {
    let s = Sandbox::new();
    let root = s.root();
    let before = s.outside_state();
    for (i, path) in hostile_paths(&s).iter().enumerate() {
        feed(
            &s,
            "PostToolUse",
            write_event(&root, &root, path, &format!("toolu_h{i}"))
                .to_string()
                .as_bytes(),
        );
    }
    // A cwd outside the root with a relative path: outside too.
    feed(
        &s,
        "PostToolUse",
        write_event(&root, &s.outside(), "victim.txt", "toolu_cwd")
            .to_string()
            .as_bytes(),
    );
    // One legitimate write, so that the task exists and we can look at what it holds.
    feed(
        &s,
        "PostToolUse",
        write_event(&root, &root, "src/ok.txt", "toolu_ok")
            .to_string()
            .as_bytes(),
    );

    assert_eq!(
        s.outside_state(),
        before,
        "something was written outside the project"
    );
    only_the_legitimate_path_is_recorded(&s);
}

/// Paths that lead out of the sandbox's project (`..`, absolute, through the symlink) or
/// hold control characters, and one 10,000 bytes long.
fn hostile_paths(s: &Sandbox) -> Vec<String> {
    let root = s.root();
    let out = s.outside();
    vec![
        "../outside/victim.txt".into(),
        "../../../../../../etc/passwd".into(),
        "/etc/passwd".into(),
        out.join("victim.txt").to_string_lossy().into(),
        format!("{}/src/../../outside/victim.txt", root.display()),
        "link/victim.txt".into(),
        format!("{}/link/new.txt", root.display()),
        "src/a\u{0}b.txt".into(),
        "src/line\nbreak.txt".into(),
        "src/esc\u{1b}[31m.txt".into(),
        "x".repeat(10_000),
    ]
}

/// Checks that only in-project paths without control characters are recorded as touched
/// (src/ok.txt among them) or in HOOK.md, that the log says why the others were refused,
/// and that the trace holds an outside path normalized and flagged.
fn only_the_legitimate_path_is_recorded(s: &Sandbox) {
    let root = s.root();
    let hook = hook_json(s);
    let files = files_touched(&hook);
    assert!(files.contains(&"src/ok.txt".to_string()), "{files:?}");
    for f in &files {
        assert!(
            !f.starts_with('/') && !f.split('/').any(|c| c == "..") && !f.starts_with("link/"),
            "an outside path was recorded as touched: {f}"
        );
        assert!(
            !f.chars().any(char::is_control),
            "a path with control characters was recorded: {f:?}"
        );
    }
    // HOOK.md, which the next agent reads, carries none of it either.
    let md = std::fs::read_to_string(root.join(".orchestration/HOOK.md")).unwrap();
    assert!(!md.contains("line\nbreak") && !md.contains('\u{0}') && !md.contains('\u{1b}'));
    // Each refusal is a clear log line.
    let log = log(s);
    assert!(log.contains("outside the project"), "{log}");
    assert!(log.contains("control character"), "{log}");
    // The trace records an outside path as the normalized absolute path the kernel
    // would open, flagged: never `/../etc/passwd`.
    let trace = std::fs::read_to_string(root.join(".orchestration/agent_trace.jsonl")).unwrap();
    assert!(!trace.contains("/../"), "an unnormalized path in the trace");
    assert!(
        trace.contains("\"path\":\"/etc/passwd\"")
            && trace.contains("/etc/passwd is outside the project root"),
        "{trace}"
    );
}

#[test]
fn a_missing_root_the_file_system_root_and_home_are_never_written_into() {
    let s = Sandbox::new();
    let home = s.base.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let missing = s.base.path().join("no/such/project");
    let slash_state = Path::new("/.orchestration");
    let slash_before = slash_state.exists();
    for (root, needle) in [
        (missing.as_path(), "does not create it"),
        (Path::new("/"), "file system's root"),
        (home.as_path(), "home directory"),
    ] {
        for event in ["SessionStart", "PostToolUse", "Stop"] {
            let input = write_event(root, root, "a.txt", "toolu_r");
            let mut cmd = hook_command(&s.p, event);
            cmd.env("CLAUDE_PROJECT_DIR", root).env("HOME", &home);
            let out = spawn_hook(cmd, input.to_string().as_bytes())
                .wait_with_output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0), "{event} in {}", root.display());
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(needle), "{event} in {}: {err}", root.display());
        }
        // Malformed input is refused before anything is parsed: still nothing written.
        let mut cmd = hook_command(&s.p, "Stop");
        cmd.env("CLAUDE_PROJECT_DIR", root).env("HOME", &home);
        let out = spawn_hook(cmd, b"{not json").wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0));
    }
    assert!(
        !s.base.path().join("no").exists(),
        "a missing root was created"
    );
    assert!(
        !home.join(".orchestration").exists(),
        "written into the home directory"
    );
    assert_eq!(slash_state.exists(), slash_before, "written into /");
}

#[test]
fn files_hard_linked_out_of_the_project_are_never_grown() {
    let s = Sandbox::new();
    let root = s.root();
    let state = root.join(".orchestration");
    std::fs::create_dir_all(&state).unwrap();
    // One outside file per name: each would grow (or be rewritten) through its link.
    let names = [
        ".orchestration/agent_trace.jsonl",
        ".orchestration/waymark.log",
        ".orchestration/intent_map.md",
        "AGENT.md",
    ];
    for (i, name) in names.iter().enumerate() {
        let victim = s.outside().join(format!("linked-{i}.txt"));
        std::fs::write(&victim, "untouched\n").unwrap();
        std::fs::hard_link(&victim, root.join(name)).unwrap();
    }
    let before = s.outside_state();
    let cycle = cycle(&root, "s", "a", "a1");
    for (e, v) in &cycle {
        feed(&s, e, v.to_string().as_bytes());
    }
    // A failed validation (a lesson for AGENT.md) and a denial (a governance lesson).
    feed(
        &s,
        "PostToolUseFailure",
        json!({"session_id": "s", "cwd": root, "tool_name": "Bash", "tool_use_id": "toolu_f",
               "tool_input": {"command": "cargo test"}, "error": "Exit code 101\nfailed",
               "is_interrupt": false})
        .to_string()
        .as_bytes(),
    );
    stop(&s);
    assert_eq!(
        s.outside_state(),
        before,
        "a file elsewhere grew through a hard link"
    );
    // The state itself was kept: the links only cost what was to be appended to them.
    let hook = hook_json(&s);
    assert!(hook["task_id"].is_string());
}

#[test]
fn a_state_dir_or_lessons_file_symlinked_out_is_refused() {
    for link in [".orchestration", "AGENT.md"] {
        let s = Sandbox::new();
        let target = s.outside().join(if link == "AGENT.md" {
            "AGENT.md"
        } else {
            "state"
        });
        if link == ".orchestration" {
            std::fs::create_dir_all(&target).unwrap();
        }
        std::os::unix::fs::symlink(&target, s.root().join(link)).unwrap();
        let before = s.outside_state();
        let root = s.root();
        let out = feed(
            &s,
            "PostToolUse",
            write_event(&root, &root, "src/a.txt", "t")
                .to_string()
                .as_bytes(),
        );
        feed(
            &s,
            "PermissionDenied",
            json!({"session_id": "s", "cwd": root, "tool_name": "Bash", "tool_input": {"command": "rm -rf /"},
                   "reason": "denied"}).to_string().as_bytes(),
        );
        // A state directory out of the project refuses the project; a lessons file out of
        // it only loses its lessons (the event is recorded, nothing written through it).
        match link {
            ".orchestration" => assert!(
                String::from_utf8_lossy(&out.stderr).contains("leads outside the project"),
                "{link}: {out:?}"
            ),
            _ => assert!(out.status.success() && root.join(".orchestration/hook.json").exists()),
        }
        assert_eq!(
            s.outside_state(),
            before,
            "{link}: written through the symlink"
        );
    }
}

/// Symlinks planted inside `.orchestration` (a committed repository can carry them) are
/// never written through: waymark's files are replaced or refused, the targets untouched.
#[test]
fn symlinks_planted_inside_the_state_dir_are_not_written_through() {
    let s = Sandbox::new();
    let root = s.root();
    let state = root.join(".orchestration");
    std::fs::create_dir_all(&state).unwrap();
    let victim = s.outside().join("victim.txt");
    for name in [
        "hook.json",
        "HOOK.md",
        "agent_trace.jsonl",
        "waymark.log",
        "hook.json.lock",
        "agent_trace.jsonl.lock",
        "intent_map.md",
    ] {
        std::os::unix::fs::symlink(&victim, state.join(name)).unwrap();
    }
    std::os::unix::fs::symlink(s.outside(), state.join("tasks")).unwrap();
    let before = s.outside_state();
    let cycle = cycle(&root, "s", "a", "a1");
    for (e, v) in &cycle {
        feed(&s, e, v.to_string().as_bytes());
    }
    stop(&s);
    assert_eq!(
        s.outside_state(),
        before,
        "written through a planted symlink"
    );
}

#[test]
fn a_transcript_that_never_ends_does_not_stall_the_hook() {
    let s = Sandbox::new();
    let fifo = s.outside().join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let root = s.root();
    let start = Instant::now();
    feed(
        &s,
        "UserPromptSubmit",
        json!({"session_id": "s", "cwd": root, "prompt": "hello", "transcript_path": fifo})
            .to_string()
            .as_bytes(),
    );
    feed(
        &s,
        "UserPromptSubmit",
        json!({"session_id": "s", "cwd": root, "prompt": "again", "transcript_path": "/dev/zero"})
            .to_string()
            .as_bytes(),
    );
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(hook_json(&s)["last_prompt"], "again");
}

/// Wrong types in every position the handlers read, truncations of real fixtures, and
/// odd JSON: each exits 0, and a task that existed before still parses after.
#[test]
fn wrong_types_truncations_and_odd_json_exit_0_and_keep_the_state() {
    let s = Sandbox::new();
    let root = s.root();
    let p = &s.p;
    let cycle = cycle(&root, "s", "a", "a1");
    for (e, v) in &cycle[..4] {
        feed(&s, e, v.to_string().as_bytes());
    }
    let mut corpus: Vec<(String, Vec<u8>)> = Vec::new();
    for (event, base) in &cycle {
        corpus.extend(wrong_typed_and_truncated(event, base));
    }
    corpus.extend(odd_json());
    for (event, bytes) in &corpus {
        feed(&s, event, bytes);
        let text = std::fs::read_to_string(p.path(".orchestration/hook.json"))
            .or_else(|_| std::fs::read_to_string(root.join(".orchestration/hook.json")))
            .unwrap();
        serde_json::from_str::<Value>(&text).unwrap_or_else(|e| panic!("{event}: {e}"));
    }
    assert!(corpus.len() > 500, "{}", corpus.len());
    assert!(
        s.outside_state().len() <= 2,
        "{:?}",
        s.outside_state().keys()
    );
}

/// `base` (an `event`) with an odd value in each field the handlers read, in each field of
/// its tool input, and cut short at four places.
fn wrong_typed_and_truncated(event: &str, base: &Value) -> Vec<(String, Vec<u8>)> {
    let mut corpus = Vec::new();
    let odd = [
        json!(null),
        json!(1),
        json!("s"),
        json!([1, 2]),
        json!({"a": {"b": [null]}}),
        json!(-1),
        json!(1e300),
        json!(true),
        json!(u64::MAX),
        json!("../../etc/passwd"),
    ];
    for key in [
        "tool_input",
        "tool_response",
        "session_id",
        "cwd",
        "prompt",
        "reason",
        "task_id",
        "error",
        "tool_name",
        "transcript_path",
        "tool_use_id",
    ] {
        for v in &odd {
            let mut e = base.clone();
            e[key] = v.clone();
            corpus.push((event.to_string(), e.to_string().into_bytes()));
        }
    }
    for field in [
        "file_path",
        "command",
        "taskId",
        "status",
        "subject",
        "content",
    ] {
        for v in &odd {
            let mut e = base.clone();
            if e["tool_input"].is_object() {
                e["tool_input"][field] = v.clone();
                corpus.push((event.to_string(), e.to_string().into_bytes()));
            }
        }
    }
    let text = base.to_string();
    for cut in [1, text.len() / 3, text.len() / 2, text.len() - 1] {
        corpus.push((event.to_string(), text.as_bytes()[..cut].to_vec()));
    }
    corpus
}

/// Odd JSON for five events: a duplicate key, deep nesting, a lone surrogate, NUL bytes.
fn odd_json() -> Vec<(String, Vec<u8>)> {
    let mut corpus: Vec<(String, Vec<u8>)> = Vec::new();
    for name in [
        "PostToolUse",
        "SessionStart",
        "Stop",
        "PreCompact",
        "PostCompact",
    ] {
        corpus.push((name.into(), b"{\"a\":1,\"a\":2}".to_vec()));
        corpus.push((name.into(), "[".repeat(10_000).into_bytes()));
        corpus.push((name.into(), b"{\"session_id\":\"\\ud800\"}".to_vec()));
        corpus.push((name.into(), vec![0u8; 1000]));
    }
    corpus
}

/// 10,000 files in one event: a TodoWrite with 10,000 items, a Bash output naming 10,000
/// files. Each completes well within the deadline, and the events after it stay cheap.
#[test]
fn ten_thousand_items_in_one_event_complete_within_the_deadline() {
    let s = Sandbox::new();
    let root = s.root();
    let todos: Vec<Value> = (0..10_000)
        .map(|i| json!({"content": format!("Fix file src/f{i}.rs"), "status": if i == 0 {"in_progress"} else {"pending"},
                        "activeForm": format!("Fixing src/f{i}.rs")}))
        .collect();
    let todo = json!({"session_id": "s", "cwd": root, "tool_name": "TodoWrite", "tool_use_id": "toolu_todo",
                      "tool_input": {"todos": todos}, "tool_response": {}});
    let out = feed(&s, "PostToolUse", todo.to_string().as_bytes());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // No "deadline reached" line on stderr (checked above): it finished within the
    // deadline. Wall-clock assertions flake on shared machines; the benchmark measures.
    let listing: String = (0..10_000)
        .map(|i| format!("src/dir{}/file{i}.rs\n", i % 100))
        .collect();
    let bash = json!({"session_id": "s", "cwd": root, "tool_name": "Bash", "tool_use_id": "toolu_ls",
                      "tool_input": {"command": "git ls-files"},
                      "tool_response": {"stdout": listing, "stderr": "", "interrupted": false}});
    let out = feed(&s, "PostToolUse", bash.to_string().as_bytes());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // An ordinary event afterwards still goes through within the deadline.
    let after = feed(
        &s,
        "PostToolUse",
        write_event(&root, &root, "src/after.txt", "toolu_after")
            .to_string()
            .as_bytes(),
    );
    assert!(
        after.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&after.stderr)
    );
    let hook = hook_json(&s);
    let steps = hook["steps"].as_array().unwrap().len();
    assert_eq!(steps, waymark::task::MAX_STEPS, "the plan is capped");
    assert!(
        log(&s).contains("9000 items were not added"),
        "the cap is logged: {}",
        log(&s)
    );
}

#[test]
fn json_that_is_not_a_task_is_restored_from_the_bak_like_any_corruption() {
    for bad in ["[]", "{}", "null", "0", "\"x\"", "{\"version\": \"2.0\"}"] {
        let p = Project::new();
        for (e, v) in cycle(p.root(), "s", "a", "a1") {
            run_hook(&p, e, &v);
        }
        let good = p.hook_json();
        p.write(".orchestration/hook.json", bad);
        let (e, v) = &cycle(p.root(), "s", "b", "b1")[3];
        let out = run_hook(&p, e, v);
        assert_eq!(out.status.code(), Some(0));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("restored the last good state"), "{bad}: {err}");
        // The event after it is not dropped: the task goes on from the .bak.
        let h = p.hook_json();
        assert_eq!(h["task_id"], good["task_id"], "{bad}");
        assert!(
            files_touched(&h).contains(&"src/b/b1.txt".to_string()),
            "{bad}"
        );
        p.waymark().arg("status").assert().success();
    }
}

#[test]
fn every_command_ends_quietly_when_its_reader_is_gone() {
    // `waymark status | head -1`: the reader closes the pipe; the command must not panic
    // or print an error, whatever it was in the middle of writing.
    let p = Project::new();
    for (e, v) in cycle(p.root(), "s", "a", "a1") {
        run_hook(&p, e, &v);
    }
    for args in [
        &["status"][..],
        &["checkpoints"],
        &["receipts"],
        &["trace"],
        &["recover"],
        &["intent", "list"],
        &["config", "show"],
        &["doctor"],
        &["--help"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = std::process::Command::new(bin())
            .args(args)
            .current_dir(p.root())
            .env("CLAUDE_PROJECT_DIR", p.root())
            .env("XDG_CONFIG_HOME", p.config.path())
            .env("HOME", p.config.path())
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe") && !err.contains("os error"),
            "{args:?}: {err}"
        );
        // Ended by SIGPIPE, as `ls | head` is, or on its own with its usual status.
        use std::os::unix::process::ExitStatusExt;
        assert!(
            out.status.signal() == Some(libc::SIGPIPE) || out.status.code().is_some(),
            "{args:?}: {:?}",
            out.status
        );
    }
}
