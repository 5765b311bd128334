//! Generated projects and the events run against them.
//!
//! Each project is a real git repository with a task in progress, made by feeding real
//! Claude Code 2.1.197 hook inputs (tests/fixtures) through the release binary, so
//! hook.json is exactly what waymark itself writes. Two snapshots of hook.json are kept:
//! `active` (mid-turn, after a Write) and `idle` (after Stop). Before every timed run the
//! event's snapshot is copied back, so every run does the same work from the same state.

use std::cell::Cell;
use std::fmt::Write as _;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use chrono::Duration;
use serde_json::{Value, json};
use waymark::git::head::Head;
use waymark::receipt::{Ed25519Signer, MasterKey, ReceiptSigner, Run, ValidationReceipt};
use waymark::task::capture::Capture;
use waymark::task::{CheckpointTrigger, FileSnapshot, Hook, HookEvent, StepSource};

/// Where everything lives, and the binary under test.
pub struct Bench {
    pub dir: PathBuf,
    pub bin: PathBuf,
    pub config_home: PathBuf,
    pub fixtures: PathBuf,
    /// A copy of the recorded transcript, so Stop reads a real one (its tail).
    pub transcript: PathBuf,
    /// The plugin (`plugin/`), whose hooks.json says what Claude Code runs per event.
    pub plugin: PathBuf,
    /// The plugin's data directory, its `bin/waymark` the binary under test: what the
    /// launcher finds for an installed plugin.
    pub plugin_data: PathBuf,
    /// Each event's command in hooks.json.
    pub registered: std::collections::BTreeMap<String, String>,
}

impl Bench {
    /// waymark's configuration as the bench's events see it (for what the bench writes
    /// through waymark's own code): the key in the bench's config home.
    pub fn config(&self) -> waymark_core::config::Config {
        let key = self.config_home.join("waymark/keys/master.key");
        waymark_core::config::Config {
            key_file: key.to_string_lossy().into_owned(),
            ..Default::default()
        }
    }

    /// `waymark hook <event>` as Claude Code runs it: `/bin/sh -c "<the command
    /// hooks.json registers>"`, the launcher finding the binary under test in the plugin's
    /// data directory, as for a plugin installed from a marketplace.
    pub fn hook(&self, root: &Path, event: &str) -> Command {
        let registered = self
            .registered
            .get(event)
            .unwrap_or_else(|| panic!("hooks.json registers no {event}"));
        let mut c = Command::new("/bin/sh");
        c.args(["-c", registered])
            .env("CLAUDE_PLUGIN_ROOT", &self.plugin)
            .env("CLAUDE_PLUGIN_DATA", &self.plugin_data);
        self.in_project(&mut c, root).env("WAYMARK_DEV", "0");
        c
    }

    /// `waymark <args>` for a project, with a clean environment: no user config, no
    /// `WAYMARK_*` overrides from the caller's shell.
    pub fn waymark(&self, root: &Path, args: &[&str]) -> Command {
        self.waymark_under(None, root, args)
    }

    /// The same, run under a wrapper (`valgrind --tool=callgrind …`).
    pub fn waymark_under(&self, wrapper: Option<&[&str]>, root: &Path, args: &[&str]) -> Command {
        let mut cmd = match wrapper {
            Some([program, rest @ ..]) => {
                let mut c = Command::new(program);
                c.args(rest).arg(&self.bin);
                c
            }
            _ => Command::new(&self.bin),
        };
        cmd.args(args);
        self.in_project(&mut cmd, root);
        cmd
    }

    /// `cmd` run in the project as a hook is: its root the working directory and
    /// `CLAUDE_PROJECT_DIR`, no user config, no `WAYMARK_*` overrides from the caller's shell.
    fn in_project<'c>(&self, cmd: &'c mut Command, root: &Path) -> &'c mut Command {
        cmd.current_dir(root)
            .env("CLAUDE_PROJECT_DIR", root)
            .env("XDG_CONFIG_HOME", &self.config_home);
        for (k, _) in std::env::vars_os() {
            let k = k.to_string_lossy();
            if k.starts_with("WAYMARK_") || k.starts_with("CONTEXTD_") {
                cmd.env_remove(&*k);
            }
        }
        cmd
    }
}

/// The events measured, each from the state a real session would be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Event {
    /// Write of a file the step already touched (the common case within a step).
    Write,
    /// Write of a file the step has not touched yet: hook.json is saved (durably).
    WriteNew,
    /// Edit of a file the step already touched: nothing in hook.json changes.
    Edit,
    /// A plain Bash command (classified, nothing to checkpoint).
    Bash,
    /// `git commit` through Bash: a `git_commit` checkpoint with the git state.
    BashCommit,
    /// A validation command through Bash: an observed, signed receipt and a `validation`
    /// checkpoint with the git state.
    BashValidation,
    /// A Read: nothing to record unless an interval checkpoint is due.
    Read,
    /// A new session after the previous one ended cleanly (Stop).
    SessionStart,
    /// A new session while the previous one was mid-turn: crash detected, task recovering.
    SessionStartCrash,
    /// Checkpoint (git state, file snapshots) before compaction.
    PreCompact,
    /// End of turn: last output kept, session idle, context usage read from the transcript.
    Stop,
    /// Before a tool runs (a Write): scope enforcement, on every tool call.
    PreToolUse,
    /// A prompt: the session turns active, the prompt kept.
    Prompt,
    /// TaskUpdate completing the running step: the plan changes, a `step_complete`
    /// checkpoint with the git state.
    StepDone,
}

pub const EVENTS: &[Event] = &[
    Event::Write,
    Event::WriteNew,
    Event::Edit,
    Event::Bash,
    Event::BashCommit,
    Event::BashValidation,
    Event::Read,
    Event::SessionStart,
    Event::SessionStartCrash,
    Event::PreCompact,
    Event::Stop,
    Event::PreToolUse,
    Event::Prompt,
    Event::StepDone,
];

impl Event {
    pub fn label(self) -> &'static str {
        match self {
            Event::Write => "PostToolUse Write",
            Event::WriteNew => "PostToolUse Write (new file)",
            Event::Edit => "PostToolUse Edit",
            Event::Bash => "PostToolUse Bash",
            Event::BashCommit => "PostToolUse Bash git commit",
            Event::BashValidation => "PostToolUse Bash validation",
            Event::Read => "PostToolUse Read",
            Event::SessionStart => "SessionStart",
            Event::SessionStartCrash => "SessionStart + crash recovery",
            Event::PreCompact => "PreCompact",
            Event::Stop => "Stop",
            Event::PreToolUse => "PreToolUse Write",
            Event::Prompt => "UserPromptSubmit",
            Event::StepDone => "PostToolUse TaskUpdate (step completed)",
        }
    }

    pub fn hook_name(self) -> &'static str {
        match self {
            Event::Write
            | Event::WriteNew
            | Event::Edit
            | Event::Bash
            | Event::BashCommit
            | Event::BashValidation
            | Event::Read
            | Event::StepDone => "PostToolUse",
            Event::SessionStart | Event::SessionStartCrash => "SessionStart",
            Event::PreCompact => "PreCompact",
            Event::Stop => "Stop",
            Event::PreToolUse => "PreToolUse",
            Event::Prompt => "UserPromptSubmit",
        }
    }

    fn file(self) -> &'static str {
        match self {
            Event::Write => "write.json",
            Event::WriteNew => "write-new.json",
            Event::Edit => "edit.json",
            Event::Bash => "bash.json",
            Event::BashCommit => "bash-commit.json",
            Event::BashValidation => "bash-validation.json",
            Event::Read => "read.json",
            Event::SessionStart => "session-start.json",
            Event::SessionStartCrash => "session-start-crash.json",
            Event::PreCompact => "pre-compact.json",
            Event::Stop => "stop.json",
            Event::PreToolUse => "pre-tool-use.json",
            Event::Prompt => "prompt.json",
            Event::StepDone => "step-done.json",
        }
    }

    /// True when the event runs from the idle snapshot (the previous turn ended).
    fn starts_idle(self) -> bool {
        matches!(self, Event::SessionStart)
    }

    /// True for the events that make a checkpoint with the git state (docs/design.md
    /// holds them to a budget of their own).
    pub fn checkpoints_with_git(self) -> bool {
        matches!(
            self,
            Event::BashCommit | Event::BashValidation | Event::PreCompact | Event::StepDone
        )
    }

    /// Events that start git in the hook itself: crash recovery counts the lines changed
    /// since the last checkpoint's commit for the brief (`git diff`), and is held to its
    /// own budget (≤ 10 ms) instead of the no-git one.
    pub fn runs_git(self) -> bool {
        self == Event::SessionStartCrash
    }
}

/// One generated project.
pub struct Project {
    pub name: String,
    pub root: PathBuf,
    pub events: PathBuf,
    active: PathBuf,
    idle: PathBuf,
    /// hook.json is grown to its largest after each preparation.
    grown: Cell<bool>,
    /// When the snapshots were made: they age (a session's last event saved again once
    /// a minute, interval checkpoints, stale sessions). See [`Project::fresh`].
    prepared_at: Cell<Instant>,
}

/// How old the snapshots may grow before they are made again. A session's last event
/// is saved again when it is over a minute old (`waymark_core::task::session`): an event
/// run from older snapshots saves hook.json where a session's next tool call, a few
/// seconds later, does not.
pub const FRESH: std::time::Duration = std::time::Duration::from_secs(45);

/// The session the task was made in, and the one that starts afterwards.
const PREV_SESSION: &str = "bench-prev-0000-4000-8000-000000000001";
const NEW_SESSION: &str = "bench-new-0000-4000-8000-000000000002";

impl Project {
    /// A git repository with a few files and a task in progress (see the module doc).
    pub fn create(bench: &Bench, name: &str, extra_files: usize) -> Project {
        let root = bench.dir.join("projects").join(name);
        let events = bench.dir.join("events").join(name);
        fs::create_dir_all(root.join("src")).unwrap();
        fs::create_dir_all(&events).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        git(&root, &["config", "user.email", "bench@example.com"]);
        git(&root, &["config", "user.name", "bench"]);
        fs::write(root.join("hello.txt"), "hello world\n").unwrap();
        fs::write(root.join("README.md"), "# bench project\n").unwrap();
        fs::write(root.join("src/lib.rs"), "pub fn parse() {}\n").unwrap();
        for i in 0..extra_files {
            let dir = root.join(format!("gen/d{:03}", i / 100));
            if i % 100 == 0 {
                fs::create_dir_all(&dir).unwrap();
            }
            fs::write(
                dir.join(format!("f{i:05}.rs")),
                format!("// generated file {i}\npub fn f{i}() -> u32 {{ {i} }}\n"),
            )
            .unwrap();
        }
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-qm", "initial"]);
        if extra_files > 0 {
            // A repository at rest: files written in the second of their index are "racily
            // clean", and every git command of an event would hash them all again until
            // someone's `git status` refreshes the index (main.rs, `settle_repository`).
            std::thread::sleep(std::time::Duration::from_millis(1100));
            git(&root, &["status", "--porcelain"]);
        }
        // What the agent's Write created (untracked, like a real new file).
        fs::write(root.join("src/parser.rs"), "pub fn parse() {}\n").unwrap();

        let p = Project {
            name: name.to_string(),
            active: events.join("hook.active.json"),
            idle: events.join("hook.idle.json"),
            root,
            events,
            grown: Cell::new(false),
            prepared_at: Cell::new(Instant::now()),
        };
        p.write_events(bench);
        p.prepare(bench);
        p
    }

    /// Makes the snapshots again from a new task, so that they are never old enough for an
    /// `interval` checkpoint (5 min) to change what an event does in a long run.
    ///
    /// `events.seen` goes too: left, the new snapshots would keep the key of the last
    /// timed event (taken by the benchmark, the hook's Claude Code process), and a run of
    /// that event within the next 30 s (the strace count after the rounds) would be
    /// skipped as a duplicate of it.
    fn refresh(&self, bench: &Bench) {
        for f in ["hook.json", "hook.json.bak", "HOOK.md", "events.seen"] {
            let _ = fs::remove_file(self.root.join(".orchestration").join(f));
        }
        self.prepare(bench);
        if self.grown.get() {
            self.grow_hook();
        }
    }

    /// Makes the snapshots again when they are older than [`FRESH`]: called before every
    /// measured run (timed, counted or traced), so each starts from the state a session's
    /// next event would find.
    pub fn fresh(&self, bench: &Bench) {
        if self.prepared_at.get().elapsed() > FRESH {
            self.refresh(bench);
        }
    }

    /// The event inputs, from the fixtures with paths and sessions pointed at this project.
    fn write_events(&self, bench: &Bench) {
        let root = self.root.to_string_lossy().into_owned();
        let fx = |name: &str, session: &str| {
            let text = fs::read_to_string(bench.fixtures.join(format!("{name}.json"))).unwrap();
            let mut v: Value = serde_json::from_str(&text).unwrap();
            relocate(&mut v, &root, &bench.transcript.to_string_lossy());
            v["session_id"] = json!(session);
            v
        };
        self.write_tool_events(&fx, &root);
        self.write_session_events(&fx);
        self.write_prep_events(&fx);
    }

    /// Writes the event input `v` as `file` in this project's events.
    fn save_event(&self, file: &str, v: &Value) {
        fs::write(self.events.join(file), serde_json::to_vec(v).unwrap()).unwrap();
    }

    /// The timed events of tools: writes (to a file and to a new one), an edit, Bash (a
    /// command, a commit, a validation), a read, a PreToolUse, and a step marked done.
    /// `fx` gives a fixture's input pointed at this project, at `root`.
    fn write_tool_events(&self, fx: &dyn Fn(&str, &str) -> Value, root: &str) {
        let save = |file: &str, v: &Value| self.save_event(file, v);
        save(Event::Write.file(), &fx("PostToolUse-Write", PREV_SESSION));
        let mut write = fx("PostToolUse-Write", PREV_SESSION);
        let new_file = format!("{root}/src/parser.rs");
        write["tool_input"]["file_path"] = json!(new_file);
        write["tool_input"]["content"] = json!("pub fn parse() {}\n");
        write["tool_response"]["filePath"] = json!(new_file);
        write["tool_response"]["content"] = json!("pub fn parse() {}\n");
        save(Event::WriteNew.file(), &write);
        save(Event::Edit.file(), &fx("PostToolUse-Edit", PREV_SESSION));
        save(Event::Bash.file(), &fx("PostToolUse-Bash", PREV_SESSION));
        let mut commit = fx("PostToolUse-Bash", PREV_SESSION);
        commit["tool_input"]["command"] = json!("git add -A && git commit -qm 'Add the parser'");
        commit["tool_response"]["stdout"] =
            json!("[main 1a2b3c4] Add the parser\n 1 file changed, 1 insertion(+)");
        save(Event::BashCommit.file(), &commit);
        let mut validation = fx("PostToolUse-Bash", PREV_SESSION);
        validation["tool_input"]["command"] = json!("cargo test");
        validation["tool_response"]["stdout"] =
            json!("running 3 tests\n...\ntest result: ok. 3 passed; 0 failed; 0 ignored");
        save(Event::BashValidation.file(), &validation);
        save(Event::Read.file(), &fx("PostToolUse-Read", PREV_SESSION));
        let mut pre = fx("PostToolUse-Write", PREV_SESSION);
        pre["hook_event_name"] = json!("PreToolUse");
        for key in ["tool_response", "duration_ms"] {
            pre.as_object_mut().unwrap().remove(key);
        }
        save(Event::PreToolUse.file(), &pre);
        let mut done = fx("PostToolUse-TaskUpdate", PREV_SESSION);
        done["tool_input"] = json!({"taskId": "1", "status": "completed"});
        done["tool_response"]["taskId"] = json!("1");
        done["tool_response"]["statusChange"] = json!({"from": "in_progress", "to": "completed"});
        save(Event::StepDone.file(), &done);
    }

    /// The timed events of the session: a new session's start (with and without a crash
    /// to recover), PreCompact, Stop and a prompt.
    fn write_session_events(&self, fx: &dyn Fn(&str, &str) -> Value) {
        let save = |file: &str, v: &Value| self.save_event(file, v);
        let start = fx("SessionStart-startup", NEW_SESSION);
        save(Event::SessionStart.file(), &start);
        save(Event::SessionStartCrash.file(), &start);
        save(Event::PreCompact.file(), &fx("PreCompact", PREV_SESSION));
        save(Event::Stop.file(), &fx("Stop", PREV_SESSION));
        let mut prompt = fx("UserPromptSubmit", PREV_SESSION);
        prompt["prompt"] = json!("Go on with the parser");
        save(Event::Prompt.file(), &prompt);
    }

    /// The session that made the task: prompt, plan, step started, first file written.
    fn write_prep_events(&self, fx: &dyn Fn(&str, &str) -> Value) {
        let save = |file: &str, v: &Value| self.save_event(file, v);
        save("prep-1.json", &fx("SessionStart-startup", PREV_SESSION));
        let mut prompt = fx("UserPromptSubmit", PREV_SESSION);
        prompt["prompt"] = json!("Implement the parser and its tests");
        save("prep-2.json", &prompt);
        let mut create = fx("PostToolUse-TaskCreate", PREV_SESSION);
        create["tool_input"]["subject"] = json!("Implement the parser");
        create["tool_input"]["activeForm"] = json!("Implementing the parser");
        create["tool_response"]["task"] = json!({"id": "1", "subject": "Implement the parser"});
        save("prep-3.json", &create);
        let mut update = fx("PostToolUse-TaskUpdate", PREV_SESSION);
        update["tool_input"]["taskId"] = json!("1");
        update["tool_response"]["taskId"] = json!("1");
        save("prep-4.json", &update);
        let mut first = fx("PostToolUse-Write", PREV_SESSION);
        first["tool_input"]["content"] = json!("hello world\n");
        save("prep-5.json", &first);
    }

    /// Runs the preparing session and keeps the two hook.json snapshots.
    fn prepare(&self, bench: &Bench) {
        let prep = [
            ("SessionStart", "prep-1.json"),
            ("UserPromptSubmit", "prep-2.json"),
            ("PostToolUse", "prep-3.json"),
            ("PostToolUse", "prep-4.json"),
            ("PostToolUse", "prep-5.json"),
        ];
        // The preparing session's Claude Code is a process that is gone by the time the
        // timed events run (`timeout` waits for each hook and exits): waymark finds the
        // session's owner dead, so a new session start finds a crash, not a live session.
        for (name, file) in prep {
            let input = self.events.join(file);
            self.run_checked_under(bench, Some(&["timeout", "60"]), name, &input);
        }
        self.snapshot(&self.active);
        self.run_checked(bench, "Stop", &self.event_file(Event::Stop));
        self.snapshot(&self.idle);
        // Read as plain JSON: a baseline build (round 2) writes an older schema.
        let hook: Value = serde_json::from_slice(&fs::read(&self.active).unwrap()).unwrap();
        let touched = &hook["current_step"]["files_touched"];
        assert_eq!(touched, &json!(["hello.txt"]), "prepared state");
        self.prepared_at.set(Instant::now());
    }

    fn run_checked(&self, bench: &Bench, name: &str, input: &Path) -> String {
        self.run_checked_under(bench, None, name, input)
    }

    /// [`Self::run_checked`] under a wrapper program.
    fn run_checked_under(
        &self,
        bench: &Bench,
        wrapper: Option<&[&str]>,
        name: &str,
        input: &Path,
    ) -> String {
        let out = bench
            .waymark_under(wrapper, &self.root, &["hook", name])
            .stdin(fs::File::open(input).unwrap())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert!(out.status.success(), "waymark hook {name} exit");
        assert!(
            out.stderr.is_empty(),
            "waymark hook {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    pub fn hook_json(&self) -> PathBuf {
        self.root.join(".orchestration/hook.json")
    }

    fn hook_md(&self) -> PathBuf {
        self.root.join(".orchestration/HOOK.md")
    }

    pub fn event_file(&self, e: Event) -> PathBuf {
        self.events.join(e.file())
    }

    /// Waits (not timed) for the capture of the checkpoint event `e` made, which the hook
    /// left to a forked copy: the next measurement must not share the machine with it (in
    /// real use it runs while the model thinks). The benchmark is the child subreaper of
    /// its hooks ([`crate::measure::become_subreaper`]), so the forked copy, orphaned when the hook exits,
    /// is its child: waiting for it needs nothing of the build's state files, whose schema
    /// differs between builds.
    pub fn settle(&self, e: Event) {
        let wait = if e.checkpoints_with_git() {
            std::time::Duration::from_secs(5)
        } else {
            std::time::Duration::ZERO
        };
        crate::measure::reap_orphans(wait);
    }

    /// The state files an event starts from, each beside the snapshot `to` under its own
    /// extension: hook.json, the HOOK.md and plan.json (with its .bak) the same save
    /// wrote, and `events.seen` (the events taken so far: a timed event is new to it, as
    /// every tool call is, and is not skipped as a duplicate of the run before).
    fn state_files(&self, to: &Path) -> [(PathBuf, PathBuf); 5] {
        let state = self.root.join(".orchestration");
        [
            (self.hook_json(), to.to_path_buf()),
            (self.hook_md(), to.with_extension("md")),
            (state.join("plan.json"), to.with_extension("plan")),
            (state.join("plan.json.bak"), to.with_extension("plan.bak")),
            (state.join("events.seen"), to.with_extension("seen")),
        ]
    }

    /// Keeps the state the event starts from ([`Self::state_files`]) beside `to`; a file
    /// the state does not have is kept as absent.
    fn snapshot(&self, to: &Path) {
        for (live, kept) in self.state_files(to) {
            match fs::copy(&live, &kept) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    let _ = fs::remove_file(&kept);
                }
                Err(e) => panic!("{}: {e}", live.display()),
            }
        }
        let lengths: String = self
            .task_logs()
            .iter()
            .map(|log| format!("{}\t{}\n", fs::metadata(log).unwrap().len(), log.display()))
            .collect();
        fs::write(to.with_extension("logs"), lengths).unwrap();
    }

    /// The task's append-only logs (history, checkpoints, receipts, turns): a timed event
    /// may append to them, and the next run must find them as the snapshot left them (a
    /// log it did not have is removed), or it reads a receipt past hook.json's count as
    /// an interrupted save.
    fn task_logs(&self) -> Vec<PathBuf> {
        let tasks = self.root.join(".orchestration/tasks");
        let Ok(dirs) = fs::read_dir(tasks) else {
            return Vec::new();
        };
        let files = dirs.flat_map(|d| fs::read_dir(d.unwrap().path()).into_iter().flatten());
        files
            .map(|f| f.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect()
    }

    /// Puts the state files back as the event starts from them (not timed), and syncs
    /// them.
    ///
    /// The copy is bench work no real session does: left dirty, its blocks (and whatever
    /// the runs before it left in the file system's journal) would be flushed by the timed
    /// event's own fsync, which measured 0.4 ms more for SessionStart on a small project,
    /// and more with hook.json at its caps. A real event comes a model turn after the one
    /// before it; the sync starts every timed run from a settled disk, and the event still
    /// pays for its own fsync in full.
    pub fn reset(&self, e: Event) {
        let from = if e.starts_idle() {
            &self.idle
        } else {
            &self.active
        };
        self.restore(from);
    }

    /// Puts back the state kept beside `from` ([`Self::snapshot`]), synced.
    fn restore(&self, from: &Path) {
        for (live, kept) in self.state_files(from) {
            if !kept.exists() {
                let _ = fs::remove_file(&live);
                continue;
            }
            fs::copy(&kept, &live).unwrap();
            fs::File::open(&live).and_then(|f| f.sync_all()).unwrap();
        }
        let kept = fs::read_to_string(from.with_extension("logs")).unwrap();
        let lengths: Vec<(u64, &Path)> = kept
            .lines()
            .map(|line| line.split_once('\t').unwrap())
            .map(|(len, log)| (len.parse().unwrap(), Path::new(log)))
            .collect();
        for log in self.task_logs() {
            let Some((len, _)) = lengths.iter().find(|(_, kept)| *kept == log) else {
                fs::remove_file(&log).unwrap();
                continue;
            };
            let file = fs::OpenOptions::new().write(true).open(&log).unwrap();
            file.set_len(*len).unwrap();
            file.sync_all().unwrap();
        }
    }

    /// Runs every event once with its output checked: exit 0, nothing on stderr, stdout
    /// empty or hook JSON, and the crash path really taken.
    pub fn check_events(&self, bench: &Bench) {
        for &e in EVENTS {
            self.reset(e);
            let out = self.run_checked(bench, e.hook_name(), &self.event_file(e));
            if !out.trim().is_empty() {
                let v: Value = serde_json::from_str(&out).expect("stdout is JSON");
                assert!(v.is_object());
            }
            match e {
                Event::SessionStartCrash => assert!(
                    out.contains("CRASH DETECTED"),
                    "{}: the crash was not reported: {out}",
                    self.name
                ),
                Event::SessionStart => assert!(
                    !out.contains("CRASH DETECTED") && out.contains("additionalContext"),
                    "{}: SessionStart: {out}",
                    self.name
                ),
                _ => {}
            }
        }
    }

    /// ERROR and WARN lines waymark logged in this project, except the crash warning the
    /// crash-recovery event is meant to produce.
    pub fn log_problems(&self) -> Vec<String> {
        fs::read_to_string(self.root.join(".orchestration/waymark.log"))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains(" ERROR ") || l.contains(" WARN "))
            .filter(|l| !l.contains("WARN [SessionStart] crash detected:"))
            .map(str::to_string)
            .collect()
    }

    /// An agent_trace.jsonl of `n` Agent Trace 0.1.0 records, shaped like those of
    /// docs/design.md.
    pub fn add_trace(&self, n: usize) {
        let path = self.root.join(".orchestration/agent_trace.jsonl");
        let mut w = BufWriter::with_capacity(1 << 20, fs::File::create(path).unwrap());
        let mut line = String::with_capacity(1024);
        for i in 0..n {
            line.clear();
            let (tool, class) = match i % 3 {
                0 => ("Edit", "AST_REFACTOR"),
                1 => ("Write", "INTENT_EVOLUTION"),
                _ => ("Bash", "NONE"),
            };
            write!(
                line,
                r#"{{"version":"0.1.0","id":"{i:08x}-7b2c-4e8a-9f10-{i:012x}","timestamp":"2026-01-{:02}T{:02}:{:02}:{:02}Z","vcs":{{"type":"git","revision":"{i:040x}"}},"tool":{{"name":"claude-code","version":"2.1.197"}},"files":[{{"path":"src/gen/module_{}.rs","conversations":[{{"contributor":{{"type":"ai","model_id":"claude-sonnet-4-5"}},"ranges":[{{"start_line":{},"end_line":{},"content_hash":"sha256:{i:016x}"}}]}}]}}],"metadata":{{"waymark":{{"event":"PostToolUse","session_id":"{PREV_SESSION}","tool_use_id":"toolu_{i:024x}","tool_name":"{tool}","intent_id":"INT-001","mutation_class":"{class}"}}}}}}"#,
                1 + i % 28,
                (i / 3600) % 24,
                (i / 60) % 60,
                i % 60,
                i % 97,
                1 + i % 200,
                10 + i % 200,
            )
            .unwrap();
            line.push('\n');
            w.write_all(line.as_bytes()).unwrap();
        }
        w.flush().unwrap();
    }

    /// Appends one record through waymark itself, so that the generated ledger has the
    /// head waymark keeps beside a ledger it wrote (the append counts the lines once, as
    /// the first append to a ledger without a head does).
    pub fn seal_trace(&self, bench: &Bench) {
        let project = waymark::store::project::Project::at(self.root.clone());
        let facts = waymark::trace::Waymark {
            kind: waymark::trace::kind::BASH.into(),
            event: "PostToolUse".into(),
            command: Some("true".into()),
            ..Default::default()
        };
        let record = waymark::trace::record(&project, chrono::Utc::now(), facts);
        waymark::trace::append(&project, &bench.config(), record).unwrap();
    }

    /// An AGENT.md with `n` lessons in the format of docs/design.md.
    pub fn add_lessons(&self, n: usize) {
        let mut w = BufWriter::new(fs::File::create(self.root.join("AGENT.md")).unwrap());
        writeln!(
            w,
            "# AGENT.md\n\nShared brain of this project.\n\n## Lessons Learned\n"
        )
        .unwrap();
        for i in 0..n {
            writeln!(
                w,
                "### 2026-01-{:02}: Scope violation on src/gen/module_{i}.rs\n\
                 **Issue**: INT-{:03} edited src/gen/module_{i}.rs outside its owned_scope\n\
                 **Solution**: claim the file in owned_scope or hand it to the owning intent\n\
                 **Related Intent**: INT-{:03}\n\
                 **Category**: governance\n",
                1 + i % 28,
                i % 50,
                i % 50
            )
            .unwrap();
        }
        w.flush().unwrap();
    }

    /// A task whose history holds `n` events more (steps resumed, a minute apart), saved
    /// by waymark's own store: what `waymark log` and `report` read.
    pub fn grow_history(&self, n: usize) {
        let project = waymark::store::project::Project::at(self.root.clone());
        let mut hook = waymark::task::store::load(&project)
            .unwrap()
            .0
            .expect("a task");
        let now = hook.updated_at;
        add_history(&mut hook, now, n);
        waymark::task::store::update(&project, now, |slot| *slot = Some(hook)).unwrap();
    }

    /// A task at its caps: 50 checkpoints (each with a capture of 8 files), 200 history
    /// events, 113 steps and 60 receipts, built with waymark's own types and saved by its
    /// own store, so the state (hook.json and the task's logs) is one waymark could have
    /// written. (Both snapshots are grown, so the logs hold the growth twice.)
    pub fn grow_hook(&self) {
        self.grown.set(true);
        for path in [&self.active, &self.idle] {
            self.restore(path);
            let project = waymark::store::project::Project::at(self.root.clone());
            let mut hook = waymark::task::store::load(&project)
                .unwrap()
                .0
                .expect("a task");
            let now = hook.updated_at;
            add_checkpoints(&mut hook, &project, now);
            add_history(&mut hook, now, 200);
            for j in 0..30 {
                hook.touch_file(&format!("src/gen/module_{j}.rs"), now);
            }
            // A plan of 113 steps (the largest a real session in the tests made), and 60
            // signed receipts spread over them.
            while hook.steps.len() < 113 {
                let n = hook.steps.len() + 1;
                let (id, name) = (format!("s{n}"), format!("Step {n}: implement part {n}"));
                hook.add_step(&id, &name, "generated", None, StepSource::Task, now);
            }
            add_receipts(&mut hook, now);
            assert!(hook.checkpoint_count >= 50 && hook.history_count >= 200);
            assert_eq!((hook.steps.len(), hook.receipt_count), (113, 60));
            // Saved by waymark's own store: hook.json, plan.json, and the lines the task's
            // logs get.
            let now = hook.updated_at;
            waymark::task::store::update(&project, now, |slot| *slot = Some(hook)).unwrap();
            self.snapshot(path);
        }
    }
}

/// 50 interval checkpoints in the hour before `now`, each with its capture of 8 files
/// saved in `project`.
fn add_checkpoints(
    hook: &mut Hook,
    project: &waymark::store::project::Project,
    now: chrono::DateTime<chrono::Utc>,
) {
    let snapshots: Vec<FileSnapshot> = (0..8)
        .map(|j| FileSnapshot {
            path: format!("src/gen/module_{j}.rs"),
            size: 1200 + j,
            mod_time: "2026-01-01T00:00:00Z".into(),
            sha256: format!("{j:016x}"),
            exists: true,
        })
        .collect();
    let head = Head {
        branch: "main".into(),
        commit: Some(format!("{:040x}", 0xabcdefu64)),
    };
    for i in 0..50 {
        let at = now - Duration::minutes(60 - i);
        let cp = waymark::task::checkpoint::build(
            hook,
            CheckpointTrigger::Interval,
            &format!("Interval checkpoint ({i} min into the step)"),
            None,
            head.clone(),
            at,
        );
        let capture = Capture {
            checkpoint_id: cp.checkpoint_id.clone(),
            captured_at: at,
            git_dirty: Some(true),
            files: snapshots.clone(),
            snapshot: None,
            withheld: Vec::new(),
        };
        waymark::task::capture::save(project, &hook.task_id, &capture).unwrap();
        hook.push_checkpoint(cp);
    }
}

/// `n` history events (steps resumed), a minute apart, ending five hours before `now`.
fn add_history(hook: &mut Hook, now: chrono::DateTime<chrono::Utc>, n: usize) {
    let template = HookEvent {
        timestamp: now,
        from_state: Some(waymark::task::HookState::StepRunning),
        to_state: waymark::task::HookState::StepRunning,
        trigger: "step_resume".into(),
        step_name: Some("Implement the parser".into()),
        details: Default::default(),
    };
    for i in 0..n {
        hook.history_count += 1;
        hook.journal.history.push(HookEvent {
            timestamp: now - Duration::minutes((n + 300 - i) as i64),
            ..template.clone()
        });
    }
}

/// 60 signed receipts of validations in the hour before `now`, one for each of the first
/// steps, every seventh failed and every other one observed.
fn add_receipts(hook: &mut Hook, now: chrono::DateTime<chrono::Utc>) {
    let signer = Ed25519Signer::new(
        MasterKey::from_bytes([7; 32]),
        waymark::config::Config::default().key_derivation,
    );
    for i in 0..60 {
        let run = Run {
            command: format!("cargo test -p part{i}"),
            exit_code: (i % 7 == 0) as i32,
            started_at: now - Duration::minutes(61 - i),
            completed_at: now - Duration::minutes(60 - i),
            duration: Some(std::time::Duration::from_millis(4_200)),
            stdout_hash: format!("{i:064x}"),
            stderr_hash: format!("{:064x}", i + 1),
            observed: i % 2 == 0,
            tree: String::new(),
        };
        let step = format!("Step {}: implement part {}", 1 + i, 1 + i);
        let mut receipt = ValidationReceipt::new(&step, run);
        signer.sign(&mut receipt, hook.task_index);
        hook.add_receipt(receipt);
    }
}

/// Points the fixture's recorded paths at the generated project and transcript.
fn relocate(v: &mut Value, root: &str, transcript: &str) {
    match v {
        Value::String(s) if s.starts_with("/home/dev/.claude/") => *s = transcript.to_string(),
        Value::String(s) if s.starts_with("/home/dev/project") => {
            *s = s.replacen("/home/dev/project", root, 1)
        }
        Value::Array(a) => a.iter_mut().for_each(|x| relocate(x, root, transcript)),
        Value::Object(o) => o.values_mut().for_each(|x| relocate(x, root, transcript)),
        _ => {}
    }
}

pub fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdout(Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}
