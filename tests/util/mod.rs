//! Shared helpers for the integration tests: scratch projects, real fixtures rewritten to
//! point into them, and running the real binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command as StdCommand};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::Value;

/// The directory the fixtures were recorded in.
pub const RECORDED_ROOT: &str = "/home/dev/project";

/// The Claude Code releases whose hook inputs are in `tests/fixtures/claude-code-<v>/`: the
/// oldest supported, and the one users run now.
pub const RELEASES: [&str; 2] = ["2.1.197", "2.1.332"];

/// The fixtures of the oldest release (2.1.197).
pub fn fixtures() -> PathBuf {
    fixtures_of(RELEASES[0])
}

pub fn fixtures_of(release: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/claude-code-{release}"))
}

/// A scratch project: a real git repo with an identity, and a private config dir.
pub struct Project {
    pub dir: tempfile::TempDir,
    pub config: tempfile::TempDir,
}

impl Project {
    pub fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q", "-b", "main"]);
        git(dir.path(), &["config", "user.email", "dev@example.com"]);
        git(dir.path(), &["config", "user.name", "Dev"]);
        Project {
            dir,
            config: tempfile::tempdir().unwrap(),
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// `waymark …` in this project, with its own config home.
    pub fn waymark(&self) -> Command {
        self.command(assert_cmd::cargo::cargo_bin("waymark"))
    }

    /// `program` run in this project as `waymark` is: in its root, with its config home.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.current_dir(self.root())
            .env("CLAUDE_PROJECT_DIR", self.root())
            .env("XDG_CONFIG_HOME", self.config.path())
            .env("HOME", self.config.path())
            .env_remove("WAYMARK_AUTO_RESUME_ON_START");
        c
    }

    /// A fixture's JSON with the recorded project path replaced by this project's root.
    pub fn fixture(&self, name: &str) -> String {
        self.fixture_of(RELEASES[0], name)
    }

    /// [`Project::fixture`] of another release.
    pub fn fixture_of(&self, release: &str, name: &str) -> String {
        let text = std::fs::read_to_string(fixtures_of(release).join(name)).unwrap();
        text.replace(RECORDED_ROOT, self.root().to_str().unwrap())
    }

    /// Writes `content` to `rel` as the agent's Write tool would, and returns the
    /// PostToolUse Write event Claude Code sends for it (the fixture's shape).
    pub fn write_event(&self, rel: &str, content: &str) -> String {
        self.write(rel, content);
        let mut e: Value = serde_json::from_str(&self.fixture("PostToolUse-Write.json")).unwrap();
        let abs = self.path(rel).display().to_string();
        e["tool_input"]["file_path"] = abs.clone().into();
        e["tool_input"]["content"] = content.into();
        e["tool_response"]["filePath"] = abs.into();
        e["tool_response"]["content"] = content.into();
        e.to_string()
    }

    /// `waymark <args…>` with `stdin`, run to completion.
    pub fn run(&self, args: &[&str], stdin: impl Into<Vec<u8>>) -> std::process::Output {
        self.waymark()
            .args(args)
            .write_stdin(stdin)
            .output()
            .unwrap()
    }

    /// Runs `waymark hook <event>` with `input` on stdin; returns stdout (asserting exit 0).
    pub fn hook(&self, event: &str, input: &str) -> String {
        let out = self.run(&["hook", event], input);
        assert_eq!(
            out.status.code(),
            Some(0),
            "hook {event} must exit 0; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// `line` (one JSON object) sealed as this project's machine seals its journals
    /// (`waymark::receipt::seal`: a MAC under its master key, made on first use): how a test
    /// plants journal lines waymark will take for its own.
    pub fn sealed(&self, line: &str) -> String {
        let config = waymark::config::Config {
            key_file: self
                .config
                .path()
                .join("waymark/keys/master.key")
                .display()
                .to_string(),
            ..waymark::config::Config::default()
        };
        let value: Value = serde_json::from_str(line).unwrap();
        let clean = waymark_redact::Clean::json(&value);
        waymark::receipt::seal::seal(&config, clean)
            .unwrap()
            .as_str()
            .to_string()
    }

    /// `input` kept by waymark for a later event, as a hook keeps its event when the task's
    /// lock is busy: another process holds the lock past the hook's deadline (500 ms here),
    /// so the journal line is this machine's own (sealed), as in real use.
    pub fn keep(&self, event: &str, input: &str) {
        let mut holder = hold(&self.path(".orchestration/hook.json.lock"));
        let out = self
            .waymark()
            .env("WAYMARK_HOOK_DEADLINE", "500ms")
            .args(["hook", event])
            .write_stdin(input)
            .output()
            .unwrap();
        holder.kill().unwrap();
        holder.wait().unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(
            self.path(".orchestration/pending.jsonl").exists(),
            "not kept"
        );
    }

    /// Replays a JSONL recording (rewritten to this project); returns stdout.
    pub fn replay_lines(&self, lines: &[String]) -> String {
        let input = lines.join("\n") + "\n";
        let out = self.run(&["replay", "-"], input);
        assert!(
            out.status.success(),
            "replay failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// The recorded session's lines, rewritten to this project.
    pub fn session_lines(&self) -> Vec<String> {
        self.fixture("session-tasks-commit-fail-compact.jsonl")
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// hook.json with the task's logs read back in: `checkpoints`, `receipts` and `history`
    /// as lists, as if they were in the file (they are in `tasks/<id>/*.jsonl`).
    pub fn hook_json(&self) -> Value {
        let mut hook: Value = serde_json::from_str(&self.read(".orchestration/hook.json")).unwrap();
        let dir = format!(
            ".orchestration/tasks/{}",
            hook["task_id"].as_str().unwrap_or_default()
        );
        for name in ["checkpoints", "receipts", "history"] {
            hook[name] = Value::Array(self.log(&format!("{dir}/{name}.jsonl")));
        }
        // The plan is plan.json (schema 3).
        if let Ok(plan) = std::fs::read_to_string(self.path(".orchestration/plan.json")) {
            let plan: Value = serde_json::from_str(&plan).unwrap();
            hook["steps"] = plan["steps"].clone();
        }
        hook
    }

    /// A JSONL file of the project, one value per line ([] when missing).
    pub fn log(&self, rel: &str) -> Vec<Value> {
        std::fs::read_to_string(self.path(rel))
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// Rewrites the current task's receipts log through `f` (one value per receipt).
    pub fn edit_receipts(&self, f: impl FnOnce(&mut Vec<Value>)) {
        let task = self.hook_json()["task_id"].as_str().unwrap().to_string();
        let rel = format!(".orchestration/tasks/{task}/receipts.jsonl");
        let mut receipts = self.log(&rel);
        f(&mut receipts);
        let text: String = receipts.iter().map(|r| format!("{r}\n")).collect();
        std::fs::write(self.path(&rel), text).unwrap();
    }

    /// The capture record of `checkpoint` (a checkpoint object of hook.json). Hooks take
    /// captures in a detached process, which may land a moment later: waited for.
    pub fn capture(&self, checkpoint: &Value) -> Value {
        let task = self.hook_json()["task_id"].as_str().unwrap().to_string();
        let rel = format!(
            ".orchestration/tasks/{task}/checkpoints/{}.json",
            checkpoint["checkpoint_id"].as_str().unwrap()
        );
        let start = std::time::Instant::now();
        while !self.path(&rel).exists() && start.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        serde_json::from_str(&self.read(&rel)).unwrap()
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    pub fn git(&self, args: &[&str]) -> String {
        git(self.root(), args)
    }
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = StdCommand::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The events `waymark replay` printed: its lines that start with an event's number (what
/// the agent reads is quoted under them, and the replay ends with what to open).
pub fn replayed_events(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|w| w.parse::<u32>().is_ok())
        })
        .collect()
}

/// The `additionalContext` of a hook's stdout, if any.
pub fn context_of(stdout: &str) -> Option<String> {
    let v: Value = serde_json::from_str(stdout.trim()).ok()?;
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .map(str::to_string)
}

/// `flock -x -o FILE sleep 30`: the task's lock held until flock is killed (`-o`: not
/// by the sleep it runs).
pub fn hold(lock: &Path) -> Child {
    let child = StdCommand::new("flock")
        .args(["-x", "-o"])
        .arg(lock)
        .args(["sleep", "30"])
        .spawn()
        .unwrap();
    // Until flock has it: a second, non-blocking flock fails while it is held.
    let start = Instant::now();
    while StdCommand::new("flock")
        .args(["-n"])
        .arg(lock)
        .arg("true")
        .status()
        .unwrap()
        .success()
    {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "flock never held the lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}
