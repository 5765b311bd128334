//! Running the real Claude Code CLI with waymark loaded as a plugin, in a scratch world.
//!
//! - [`cli`] installs a supported `@anthropic-ai/claude-code` ([`Version`]) from npm into
//!   `<repo>/.e2e/cli-<version>` once (guarded by a process-wide `OnceLock` and a file lock,
//!   so parallel test threads and parallel `cargo test` runs do not race), and reuses it
//!   when it is already there.
//! - [`Sandbox`] is one scenario's world: a scratch HOME, CLAUDE_CODE_TMPDIR, a real git
//!   project and a plugin dir (a copy of the repo's `plugin/`, with `bin/waymark.bin`
//!   linked to the waymark binary cargo built for this test run).
//! - [`Sandbox::run`] runs `claude -p` against a [`FakeApi`], with a timeout, in its own
//!   process group (killed whole on timeout).

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::fake_api::{FakeApi, Turn};

/// A Bash tool call.
pub fn bash(command: &str) -> Turn {
    Turn::tool("Bash", json!({"command": command, "description": "e2e"}))
}

/// A Claude Code release the suite runs against. Every scenario runs on each (see
/// `on_each_version!` in main.rs); the hook inputs in `tests/fixtures/claude-code-<version>/`
/// were captured from them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version(pub &'static str);

impl Version {
    /// The oldest release waymark supports (June 2026): the agent has Claude Code's task
    /// list (TaskCreate, TaskUpdate) by default.
    pub const OLDEST: Version = Version("2.1.197");
    /// The release users run now (24 Nov 2026): with the default model the agent has no
    /// task list at all, and keeps its plan with `waymark plan` / `waymark step` from Bash.
    pub const CURRENT: Version = Version("2.1.332");
    pub const ALL: [Version; 2] = [Version::OLDEST, Version::CURRENT];

    /// Whether the agent is offered TaskCreate / TaskUpdate with default settings.
    pub fn has_task_tools(self) -> bool {
        self == Version::OLDEST
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}
/// How long one `claude -p` run may take before it is killed.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(60);

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// How to start the installed CLI: a program and the arguments that come before ours.
#[derive(Debug, Clone)]
pub struct Cli {
    pub program: PathBuf,
    pub pre_args: Vec<OsString>,
}

impl Cli {
    pub fn command(&self) -> Command {
        let mut c = Command::new(&self.program);
        c.args(&self.pre_args);
        c
    }
}

/// The installed CLI of `version`, or `None` when it cannot be installed outside CI (the
/// test then returns early after a loud message). In CI (`CI` set and not `false`/`0`) a
/// missing CLI fails the test: the suite must never pass there by skipping.
pub fn cli(version: Version) -> Option<&'static Cli> {
    static CLIS: [OnceLock<Result<Cli, String>>; 2] = [OnceLock::new(), OnceLock::new()];
    let slot = Version::ALL
        .iter()
        .position(|v| *v == version)
        .expect("a supported version");
    match CLIS[slot].get_or_init(|| install(version)) {
        Ok(c) => Some(c),
        Err(why) => {
            let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
            if ci {
                panic!("end-to-end suite: cannot run the Claude Code CLI: {why}");
            }
            // Written to the real stderr, not through `eprintln!`, which the test harness
            // captures and shows only for failing tests: a skip must be seen.
            static ONCE: std::sync::Once = std::sync::Once::new();
            ONCE.call_once(|| {
                let _ = writeln!(
                    std::io::stderr(),
                    "\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\
                     !! SKIPPED: the end-to-end tests against the real Claude Code CLI.\n\
                     !! {why}\n\
                     !! (With CI set this is a failure. Install node and npm to run them.)\n\
                     !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
                );
            });
            None
        }
    }
}

/// Installs (or finds) the CLI of `version` and picks the entry point that works: the
/// native `node_modules/.bin/claude` when npm ran the package's postinstall, else
/// `node cli-wrapper.cjs` (npm 11 may hold install scripts back).
fn install(version: Version) -> Result<Cli, String> {
    let dir = repo_root().join(".e2e").join(format!("cli-{version}"));
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let lock_path = dir.parent().unwrap().join("install.lock");
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| format!("cannot open {}: {e}", lock_path.display()))?;
    fs4::FileExt::lock(&lock).map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;

    if let Some(cli) = working_entry(&dir, version) {
        return Ok(cli);
    }
    let spec = format!("@anthropic-ai/claude-code@{version}");
    eprintln!("e2e: installing {spec} into {} (npm)", dir.display());
    let out = Command::new("npm")
        .arg("install")
        .arg("--prefix")
        .arg(&dir)
        .arg(&spec)
        .args(["--no-audit", "--no-fund"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run npm ({e}); node and npm are needed to install {spec}"))?;
    if !out.status.success() {
        return Err(format!(
            "`npm install {spec}` failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    working_entry(&dir, version).ok_or_else(|| {
        format!(
            "{spec} was installed into {} but neither node_modules/.bin/claude nor \
             `node cli-wrapper.cjs` answers `--version` with {version}",
            dir.display()
        )
    })
}

fn working_entry(dir: &Path, version: Version) -> Option<Cli> {
    let package = dir.join("node_modules/@anthropic-ai/claude-code");
    let candidates = [
        Cli {
            program: dir.join("node_modules/.bin/claude"),
            pre_args: vec![],
        },
        Cli {
            program: PathBuf::from("node"),
            pre_args: vec![package.join("cli-wrapper.cjs").into()],
        },
    ];
    candidates.into_iter().find(|c| {
        c.command()
            .arg("--version")
            .env("DISABLE_AUTOUPDATER", "1")
            .stdin(Stdio::null())
            .output()
            .is_ok_and(|o| {
                o.status.success() && String::from_utf8_lossy(&o.stdout).contains(version.0)
            })
    })
}

/// How the plugin's hook launcher finds waymark in a sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binary {
    /// `bin/waymark.bin` → the binary cargo built for this test run.
    Built,
    /// No binary anywhere (and the runs set WAYMARK_NO_BUILD / WAYMARK_NO_PATH).
    Missing,
    /// `bin/waymark.bin` is an executable that fails every time (exit 1, junk on stdout).
    Failing,
    /// `bin/waymark.bin` exists but is not executable.
    NotExecutable,
}

/// One finished run of `claude -p`.
#[derive(Debug)]
pub struct Run {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// `--output-format json` result, when stdout parsed.
    pub json: Option<Value>,
    pub debug_file: PathBuf,
}

impl Run {
    /// The final assistant text (`result` of the JSON output).
    pub fn result(&self) -> &str {
        self.json
            .as_ref()
            .and_then(|j| j.get("result"))
            .and_then(Value::as_str)
            .unwrap_or("")
    }
}

/// One scenario's scratch world. Set `WAYMARK_E2E_KEEP=1` to keep it after the test.
pub struct Sandbox {
    dir: Option<TempDir>,
    pub root: PathBuf,
    pub home: PathBuf,
    pub tmp: PathBuf,
    pub project: PathBuf,
    pub plugin: PathBuf,
    pub logs: PathBuf,
    pub binary: Binary,
    /// The Claude Code release this sandbox's runs use.
    pub version: Version,
    runs: AtomicUsize,
}

impl Sandbox {
    pub fn new(name: &str, binary: Binary, version: Version) -> Sandbox {
        let dir = tempfile::Builder::new()
            .prefix(&format!("waymark-e2e-{name}-{version}-"))
            .tempdir()
            .expect("tempdir");
        let root = dir.path().to_path_buf();
        let (home, tmp, project, plugin, logs) = (
            root.join("home"),
            root.join("tmp"),
            root.join("project"),
            root.join("plugin"),
            root.join("logs"),
        );
        for d in [&home, &tmp, &project, &logs] {
            fs::create_dir_all(d).unwrap();
        }
        make_plugin(&plugin, binary);
        git(&project, &["init", "-q", "-b", "main"]);
        git(&project, &["config", "user.name", "E2E Tester"]);
        git(&project, &["config", "user.email", "e2e@example.invalid"]);
        git(&project, &["config", "commit.gpgsign", "false"]);
        fs::write(project.join("README.md"), "# e2e project\n").unwrap();
        git(&project, &["add", "README.md"]);
        git(&project, &["commit", "-q", "-m", "initial"]);
        let keep = std::env::var_os("WAYMARK_E2E_KEEP").is_some();
        if keep {
            eprintln!("e2e: keeping {}", root.display());
        }
        Sandbox {
            dir: if keep {
                let _ = dir.keep();
                None
            } else {
                Some(dir)
            },
            root,
            home,
            tmp,
            project,
            plugin,
            logs,
            binary,
            version,
            runs: AtomicUsize::new(0),
        }
    }

    /// `waymark …` in the project, as the user would run it after the session, with the
    /// sandbox's HOME (so the same key and config).
    pub fn waymark(&self, args: &[&str]) -> std::process::Output {
        Command::new(env!("CARGO_BIN_EXE_waymark"))
            .args(args)
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env_remove("CLAUDE_PROJECT_DIR")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run waymark")
    }

    /// The absolute path of a file in the project (Write and Edit need absolute paths).
    pub fn path(&self, rel: &str) -> String {
        self.project.join(rel).to_string_lossy().into_owned()
    }

    /// The turns by which this version's agent records the plan `steps`: a TaskCreate per
    /// step where the agent has Claude Code's task list, else one `waymark plan` from its
    /// Bash tool (the plugin's `bin/` is on that PATH), as waymark's SessionStart note asks.
    pub fn plan(&self, steps: &[&str]) -> Vec<Turn> {
        if self.version.has_task_tools() {
            return steps
                .iter()
                .map(|s| {
                    Turn::tool(
                        "TaskCreate",
                        json!({"subject": s, "description": "e2e", "activeForm": format!("Doing: {s}")}),
                    )
                })
                .collect();
        }
        let names: Vec<String> = steps.iter().map(|s| format!("'{s}'")).collect();
        vec![bash(&format!("waymark plan {}", names.join(" ")))]
    }

    /// The turn that starts step `n` (1-based, in the order [`Sandbox::plan`] made them).
    pub fn start_step(&self, n: usize) -> Turn {
        self.step_turn(n, "in_progress", "start")
    }

    /// The turn that completes step `n`.
    pub fn finish_step(&self, n: usize) -> Turn {
        self.step_turn(n, "completed", "done")
    }

    fn step_turn(&self, n: usize, status: &str, verb: &str) -> Turn {
        if self.version.has_task_tools() {
            Turn::tool(
                "TaskUpdate",
                json!({"taskId": n.to_string(), "status": status}),
            )
        } else {
            bash(&format!("waymark step {verb} {n}"))
        }
    }

    /// The `claude` command for one run against `api`, with the scratch environment, and
    /// the sandbox's plugin loaded with `--plugin-dir`.
    pub fn command(&self, cli: &Cli, api: &FakeApi, args: &[&str]) -> (Command, PathBuf) {
        self.command_with(cli, api, args, Some(&self.plugin))
    }

    /// [`Sandbox::command`], loading `plugin_dir` if any (none: only the plugins installed
    /// in the scratch HOME).
    pub fn command_with(
        &self,
        cli: &Cli,
        api: &FakeApi,
        args: &[&str],
        plugin_dir: Option<&Path>,
    ) -> (Command, PathBuf) {
        let n = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        let debug_file = self.logs.join(format!("run-{n}.debug.log"));
        let mut c = cli.command();
        c.args(args).arg("--output-format").arg("json");
        // A run that names its permission mode is asked for permissions as a user would be.
        if !args.contains(&"--permission-mode") {
            c.arg("--dangerously-skip-permissions");
        }
        if let Some(dir) = plugin_dir {
            c.arg("--plugin-dir").arg(dir);
        }
        c.arg("--debug-file")
            .arg(&debug_file)
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("LANG", "C.UTF-8")
            .env("SHELL", "/bin/bash")
            .env("ANTHROPIC_BASE_URL", api.base_url())
            .env("ANTHROPIC_API_KEY", "sk-test")
            .env("IS_SANDBOX", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("CLAUDE_CODE_TMPDIR", &self.tmp)
            .stdin(Stdio::null())
            .stdout(File::create(self.logs.join(format!("run-{n}.stdout"))).unwrap())
            .stderr(File::create(self.logs.join(format!("run-{n}.stderr"))).unwrap())
            .process_group(0);
        if self.binary != Binary::Built {
            c.env("WAYMARK_NO_BUILD", "1").env("WAYMARK_NO_PATH", "1");
        }
        (c, debug_file)
    }

    /// Starts `claude` in its own process group and returns at once (see [`kill_group`]).
    pub fn spawn(&self, api: &FakeApi, args: &[&str]) -> Child {
        let cli = cli(self.version).expect("checked by the caller");
        let (mut c, _) = self.command(cli, api, args);
        c.spawn().expect("spawn claude")
    }

    /// Runs `claude` to the end (killed after [`RUN_TIMEOUT`]).
    pub fn run(&self, api: &FakeApi, args: &[&str]) -> Run {
        let cli = cli(self.version).expect("checked by the caller");
        let (mut c, debug_file) = self.command(cli, api, args);
        let n = self.runs.load(Ordering::SeqCst);
        let mut child = c.spawn().expect("spawn claude");
        let start = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().expect("wait") {
                break s;
            }
            if start.elapsed() > RUN_TIMEOUT {
                kill_group(child.id());
                let _ = child.wait();
                panic!(
                    "claude {args:?} did not finish in {RUN_TIMEOUT:?}\n{}",
                    self.diagnose(api)
                );
            }
            thread::sleep(Duration::from_millis(20));
        };
        let stdout = fs::read_to_string(self.logs.join(format!("run-{n}.stdout"))).unwrap();
        let stderr = fs::read_to_string(self.logs.join(format!("run-{n}.stderr"))).unwrap();
        let json = serde_json::from_str(stdout.trim()).ok();
        Run {
            status,
            stdout,
            stderr,
            json,
            debug_file,
        }
    }

    /// Runs `claude` and asserts it ended well with `expected` as its final text.
    pub fn run_ok(&self, api: &FakeApi, args: &[&str], expected: &str) -> Run {
        let run = self.run(api, args);
        assert!(
            run.status.success() && run.result().contains(expected),
            "claude {args:?} did not end with {expected:?}: {}\nstdout: {}\nstderr: {}\n{}",
            run.status,
            run.stdout,
            run.stderr,
            self.diagnose(api)
        );
        run
    }

    /// A file of the project, "" when missing.
    pub fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.project.join(rel)).unwrap_or_default()
    }

    /// `.orchestration/hook.json`, asserting that the hooks fired at all (a broken plugin
    /// is ignored silently by Claude Code, so its absence is the first thing to report).
    ///
    /// The task's logs are read back in: `checkpoints`, `receipts` and `history` as lists,
    /// as if they were in the file (they are in `tasks/<id>/*.jsonl`), and the plan
    /// (`plan.json`) as `steps`.
    pub fn hook_json(&self) -> Value {
        let text = self.read(".orchestration/hook.json");
        assert!(
            !text.is_empty(),
            "no .orchestration/hook.json: waymark's hooks did not run\n{}",
            self.diagnose_files()
        );
        let mut hook: Value = serde_json::from_str(&text).expect("hook.json is JSON");
        let dir = format!(
            ".orchestration/tasks/{}",
            hook["task_id"].as_str().unwrap_or_default()
        );
        for name in ["checkpoints", "receipts", "history"] {
            let lines: Vec<Value> = self
                .read(&format!("{dir}/{name}.jsonl"))
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str(l).expect("a log line is JSON"))
                .collect();
            hook[name] = Value::Array(lines);
        }
        // The plan is plan.json (schema 3).
        let plan = self.read(".orchestration/plan.json");
        if !plan.is_empty() {
            let plan: Value = serde_json::from_str(&plan).expect("plan.json is JSON");
            hook["steps"] = plan["steps"].clone();
        }
        hook
    }

    /// The capture record of checkpoint `checkpoint` (hooks take it in a detached
    /// process, which may land a moment after the run ends: waited for, up to 10 s).
    pub fn capture(&self, hook: &Value, checkpoint: &Value) -> Value {
        let rel = format!(
            ".orchestration/tasks/{}/checkpoints/{}.json",
            hook["task_id"].as_str().unwrap_or_default(),
            checkpoint["checkpoint_id"].as_str().unwrap_or_default()
        );
        let landed = wait_for(Duration::from_secs(10), || !self.read(&rel).is_empty());
        assert!(landed, "no capture at {rel}\n{}", self.diagnose_files());
        serde_json::from_str(&self.read(&rel)).expect("a capture is JSON")
    }

    /// The trace ledger, one JSON value per line.
    pub fn trace(&self) -> Vec<Value> {
        self.read(".orchestration/agent_trace.jsonl")
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).expect("trace line is JSON"))
            .collect()
    }

    /// Everything useful when an assertion fails: the files waymark wrote, its log, the
    /// requests the fake API saw, and the end of each run's debug log.
    pub fn diagnose(&self, api: &FakeApi) -> String {
        format!(
            "{}\n--- fake API requests:\n{}",
            self.diagnose_files(),
            api.describe()
        )
    }

    pub fn diagnose_files(&self) -> String {
        let mut s = format!(
            "--- sandbox: {} (WAYMARK_E2E_KEEP=1 keeps it)\n",
            self.root.display()
        );
        for rel in [".orchestration/waymark.log", ".orchestration/hook.json"] {
            let text = self.read(rel);
            s.push_str(&format!("--- {rel}:\n{}\n", tail_chars(&text, 3000)));
        }
        if let Ok(entries) = fs::read_dir(&self.logs) {
            let mut names: Vec<_> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("run-"))
                })
                .collect();
            names.sort();
            for p in names {
                let text = fs::read_to_string(&p).unwrap_or_default();
                let interesting: Vec<&str> = text
                    .lines()
                    .filter(|l| {
                        let l = l.to_lowercase();
                        l.contains("hook") || l.contains("error") || l.contains("plugin")
                    })
                    .collect();
                let body = if p.to_string_lossy().ends_with(".debug.log") {
                    interesting.join("\n")
                } else {
                    text.clone()
                };
                s.push_str(&format!(
                    "--- {}:\n{}\n",
                    p.file_name().unwrap().to_string_lossy(),
                    tail_chars(&body, 2500)
                ));
            }
        }
        s
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        // Keep the world of a failed test for a look; a passing one is removed.
        if thread::panicking() {
            if let Some(d) = self.dir.take() {
                eprintln!("e2e: test failed, sandbox kept at {}", d.path().display());
                let _ = d.keep();
            }
        }
    }
}

fn tail_chars(s: &str, n: usize) -> &str {
    let count = s.chars().count();
    if count <= n {
        return s;
    }
    let skip = s.char_indices().nth(count - n).map(|(i, _)| i).unwrap_or(0);
    &s[skip..]
}

/// A Bash call that writes its shell's pid to `pid` and sleeps: the turn is mid-way while
/// it runs (the Bash tool runs its shell in a process group of its own).
pub fn sleeping(pid: &Path) -> Turn {
    Turn::tool(
        "Bash",
        serde_json::json!({
            "command": format!("echo $$ > {0}.tmp && mv {0}.tmp {0} && sleep 30", pid.display()),
            "description": "A long build",
            "timeout": 120000
        }),
    )
}

/// Kills a session mid-turn, as a crash of the machine would: Claude Code's whole process
/// group, and the group of the Bash tool's shell whose pid is in `pid` (then removed).
pub fn crash(mut child: std::process::Child, pid: &Path) {
    kill_group(child.id());
    let _ = child.wait();
    let shell: u32 = fs::read_to_string(pid).unwrap().trim().parse().unwrap();
    kill_group(shell);
    fs::remove_file(pid).unwrap();
}

/// SIGKILL to the whole process group led by `leader` (a child spawned with
/// `process_group(0)`), so that what it started dies with it. False when there was no
/// such group left to kill.
pub fn kill_group(leader: u32) -> bool {
    Command::new("kill")
        .arg("-KILL")
        .arg("--")
        .arg(format!("-{leader}"))
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs git in `dir`, asserting success.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        // Neither the user's git config nor a git hook's environment leaks in.
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A plugin dir for the sandbox: the repo's `plugin/` (manifest, hooks, PATH shim),
/// copied, and the binary the launcher will find.
fn make_plugin(plugin: &Path, binary: Binary) {
    copy_dir(&repo_root().join("plugin"), plugin);
    let bin = plugin.join("bin/waymark.bin");
    match binary {
        Binary::Built => symlink(env!("CARGO_BIN_EXE_waymark"), &bin).unwrap(),
        Binary::Missing => {}
        Binary::Failing => {
            let mut f = File::create(&bin).unwrap();
            f.write_all(b"#!/bin/sh\necho 'this is not hook JSON {'\necho 'waymark.bin: broken on purpose' >&2\nexit 1\n")
                .unwrap();
            fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
        }
        Binary::NotExecutable => {
            fs::write(&bin, b"not a program").unwrap();
            fs::set_permissions(&bin, fs::Permissions::from_mode(0o644)).unwrap();
        }
    }
}

pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Waits until `cond` holds, up to `timeout`; false on timeout.
pub fn wait_for(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if cond() {
            return true;
        }
        thread::sleep(Duration::from_millis(25));
    }
    cond()
}
