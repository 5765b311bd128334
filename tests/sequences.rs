//! The model-based test of recovery run through the binary (issues 42 and 49): random
//! sequences of sessions, each a real process, sending Claude Code's recorded hook inputs
//! (both releases' fixtures, rewritten) to the real `waymark`, with the agent's own
//! `waymark plan` and `waymark step` from its "Bash", files written from Bash, forks, and
//! a person's `waymark step done|retry|checked` and `task done` at a terminal. The core's generator (`recovery/sequences.rs`)
//! checks the rules over thousands of sequences; this one puts the I/O edge in the loop:
//! the process liveness read from /proc, hook.json and the history log on disk, the brief
//! as Claude Code receives it.
//!
//! A window is a small long-lived process (`perl`, the "Claude Code" the hooks find as
//! their owner) that runs each hook command through `sh -c`, as Claude Code does; killing
//! it is a crash. `cargo test` runs [`CASES`] sequences; `WAYMARK_SEQUENCES_BIN=N` runs N.

mod util;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use proptest::prelude::*;
use serde_json::{Value, json};
use util::{Project, RELEASES, context_of};

const CASES: u32 = 24;
const LENGTH: usize = 24;
const SLOTS: usize = 2;
const STEPS: [&str; 3] = ["Read the grammar", "Write the parser", "Ship it"];
const PROMPTS: [&str; 2] = ["add a nil-safe parser", "also handle leap years"];

#[derive(Debug, Clone)]
enum Op {
    Start(usize, u8),
    Prompt(usize, usize),
    Plan(usize, Vec<usize>),
    StepStart(usize, usize),
    StepDone(usize, usize),
    Write(usize, usize),
    /// `printf … > src/fN.rs` from the agent's Bash.
    BashWrite(usize, usize),
    Validate(usize, bool),
    Deploy(usize, bool),
    Kill(usize),
    Stop(usize),
    /// A person at a terminal (no session): `step done|retry N`, `step checked`, `task done`.
    Hand(u8, usize),
}

fn op() -> impl Strategy<Value = Op> {
    let w = 0..SLOTS;
    prop_oneof![
        3 => (w.clone(), 0..5u8).prop_map(|(w, s)| Op::Start(w, s)),
        1 => (0..4u8, 0..STEPS.len()).prop_map(|(k, n)| Op::Hand(k, n)),
        1 => (w.clone(), 0..3usize).prop_map(|(w, f)| Op::BashWrite(w, f)),
        2 => (w.clone(), 0..PROMPTS.len()).prop_map(|(w, p)| Op::Prompt(w, p)),
        1 => (w.clone(), proptest::collection::vec(0..STEPS.len(), 1..3)).prop_map(|(w, n)| Op::Plan(w, n)),
        2 => (w.clone(), 0..STEPS.len()).prop_map(|(w, n)| Op::StepStart(w, n)),
        1 => (w.clone(), 0..STEPS.len()).prop_map(|(w, n)| Op::StepDone(w, n)),
        3 => (w.clone(), 0..3usize).prop_map(|(w, f)| Op::Write(w, f)),
        1 => (w.clone(), any::<bool>()).prop_map(|(w, p)| Op::Validate(w, p)),
        1 => (w.clone(), any::<bool>()).prop_map(|(w, k)| Op::Deploy(w, k)),
        2 => w.clone().prop_map(Op::Kill),
        2 => w.prop_map(Op::Stop),
    ]
}

/// A Claude Code window: its process, and the session it runs.
struct Window {
    process: Option<(Child, ChildStdin, BufReader<ChildStdout>)>,
    session: String,
    generation: u32,
    mid_turn: bool,
    crashed: bool,
}

struct World {
    p: Project,
    release: &'static str,
    windows: Vec<Window>,
    /// Crashes declared, per task.
    crashes: std::collections::HashMap<String, usize>,
    events: u32,
}

impl Drop for World {
    fn drop(&mut self) {
        for w in &mut self.windows {
            if let Some((mut child, ..)) = w.process.take() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

impl World {
    fn new(release: &'static str) -> World {
        let p = Project::new();
        p.write(".orchestration/waymark.json", r#"{"side_effect_commands": ["^\\./deploy\\.sh"], "validation_commands": ["^make test"]}"#);
        let windows = (0..SLOTS)
            .map(|i| Window {
                process: None,
                session: format!("s{i}-0"),
                generation: 0,
                mid_turn: false,
                crashed: false,
            })
            .collect();
        World {
            p,
            release,
            windows,
            crashes: Default::default(),
            events: 0,
        }
    }

    /// A new "Claude Code" process for window `w`.
    fn spawn(&mut self, w: usize) {
        let script = "$| = 1; while (my $l = <STDIN>) { chomp $l; my $rc = system('/bin/sh', '-c', $l); print 'rc ', $rc >> 8, \"\\n\"; }";
        let mut c = Command::new("perl");
        c.args(["-e", script])
            .current_dir(self.p.root())
            .env("CLAUDE_PROJECT_DIR", self.p.root())
            .env("XDG_CONFIG_HOME", self.p.config.path())
            .env("HOME", self.p.config.path())
            .env_remove("WAYMARK_AUTO_RESUME_ON_START")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        let mut child = c.spawn().expect("perl");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        self.windows[w].process = Some((child, stdin, stdout));
    }

    /// Runs `line` in window `w`'s process; its exit code.
    fn sh(&mut self, w: usize, line: &str) -> i32 {
        let (_, stdin, stdout) = self.windows[w].process.as_mut().expect("a live window");
        writeln!(stdin, "{line}").unwrap();
        let mut said = String::new();
        stdout.read_line(&mut said).unwrap();
        said.trim().strip_prefix("rc ").unwrap().parse().unwrap()
    }

    /// Sends hook `event` (a fixture of this release, with `patch` merged in) from window
    /// `w`; the hook's stdout.
    fn hook(&mut self, w: usize, fixture: &str, patch: Value) -> String {
        // A release that has no capture of this variant: its event's general capture.
        let have = util::fixtures_of(self.release).join(fixture).exists();
        let file = if have {
            fixture.to_string()
        } else {
            format!("{}.json", fixture.split(['-', '.']).next().unwrap())
        };
        let mut e: Value = serde_json::from_str(&self.p.fixture_of(self.release, &file)).unwrap();
        e["session_id"] = self.windows[w].session.clone().into();
        e["transcript_path"] = Value::Null;
        for (k, v) in patch.as_object().unwrap() {
            e[k] = v.clone();
        }
        // Claude Code never sends one input twice (each tool call, prompt and turn has its
        // own ids and words): nor does the generator, so that `handlers::once` does not
        // take a repeated fixture for a second registration's copy.
        e["tool_use_id"] = format!("toolu_seq_{}", self.events).into();
        if e.get("last_assistant_message").is_some() {
            e["last_assistant_message"] = format!("turn {} done", self.events).into();
        }
        e["prompt_id"] = format!("prompt-{}", self.events).into();
        let name = e["hook_event_name"].as_str().unwrap().to_string();
        self.events += 1;
        let dir = self.p.config.path();
        let (input, output) = (
            dir.join(format!("in-{}", self.events)),
            dir.join(format!("out-{}", self.events)),
        );
        std::fs::write(&input, e.to_string()).unwrap();
        let bin = assert_cmd::cargo::cargo_bin("waymark");
        let rc = self.sh(
            w,
            &format!(
                "'{}' hook {name} < '{}' > '{}'",
                bin.display(),
                input.display(),
                output.display()
            ),
        );
        assert_eq!(rc, 0, "hook {name} must exit 0");
        std::fs::read_to_string(output).unwrap()
    }

    fn bash(&mut self, w: usize, command: &str, exit: i32) {
        self.hook(
            w,
            "PreToolUse-Bash.json",
            json!({"tool_name": "Bash", "tool_input": {"command": command}}),
        );
        if exit == 0 {
            self.hook(w, "PostToolUse-Bash.json", json!({"tool_input": {"command": command}, "tool_response": {"stdout": "ok", "stderr": "", "interrupted": false, "isImage": false}}));
        } else {
            self.hook(w, "PostToolUseFailure-Bash.json", json!({"tool_input": {"command": command}, "error": format!("Exit code {exit}\nFAILED")}));
        }
        self.windows[w].mid_turn = true;
    }

    /// The agent's own `waymark …` from its Bash tool.
    fn agent_waymark(&mut self, w: usize, args: &[&str]) {
        let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
        let command = format!("waymark {}", quoted.join(" "));
        self.hook(
            w,
            "PreToolUse-Bash.json",
            json!({"tool_name": "Bash", "tool_input": {"command": command}}),
        );
        let bin = assert_cmd::cargo::cargo_bin("waymark");
        let session = self.windows[w].session.clone();
        self.sh(
            w,
            &format!(
                "CLAUDE_CODE_SESSION_ID={session} '{}' {} > /dev/null 2>&1",
                bin.display(),
                quoted.join(" ")
            ),
        );
        self.hook(w, "PostToolUse-Bash.json", json!({"tool_input": {"command": command}, "tool_response": {"stdout": "", "stderr": "", "interrupted": false, "isImage": false}}));
        self.windows[w].mid_turn = true;
    }

    fn kill(&mut self, w: usize) {
        let win = &mut self.windows[w];
        if let Some((mut child, ..)) = win.process.take() {
            child.kill().unwrap();
            child.wait().unwrap();
            win.crashed |= win.mid_turn;
        }
    }

    fn apply(&mut self, op: &Op) {
        if let Op::Start(w, source) = *op {
            return self.start(w, source);
        }
        if let Op::Hand(kind, n) = *op {
            return self.hand(kind, n);
        }
        if let Op::Kill(w) = *op {
            return self.kill(w);
        }
        let w = match *op {
            Op::Prompt(w, _)
            | Op::Plan(w, _)
            | Op::StepStart(w, _)
            | Op::StepDone(w, _)
            | Op::Write(w, _)
            | Op::BashWrite(w, _)
            | Op::Validate(w, _)
            | Op::Deploy(w, _)
            | Op::Stop(w) => w,
            _ => unreachable!(),
        };
        if self.windows[w].process.is_some() {
            self.work(w, op);
        }
    }

    /// An event of a live window's session.
    fn work(&mut self, w: usize, op: &Op) {
        match op {
            Op::Prompt(_, n) => {
                self.hook(w, "UserPromptSubmit.json", json!({"prompt": PROMPTS[*n]}));
                self.windows[w].mid_turn = true;
            }
            Op::Plan(_, names) => {
                let mut args = vec!["plan"];
                args.extend(names.iter().map(|n| STEPS[*n]));
                self.agent_waymark(w, &args);
            }
            Op::StepStart(_, n) => self.agent_waymark(w, &["step", "start", STEPS[*n]]),
            Op::StepDone(_, n) => self.agent_waymark(w, &["step", "done", STEPS[*n]]),
            Op::Write(_, f) => self.write(w, *f),
            Op::BashWrite(_, f) => {
                let cmd = format!(
                    "mkdir -p src && printf 'from bash {}\\n' > src/f{f}.rs",
                    self.events
                );
                self.sh(w, &cmd);
                self.bash(w, &cmd, 0);
            }
            Op::Validate(_, pass) => self.bash(w, "make test", if *pass { 0 } else { 2 }),
            Op::Deploy(_, killed) => {
                if *killed {
                    self.hook(
                        w,
                        "PreToolUse-Bash.json",
                        json!({"tool_name": "Bash", "tool_input": {"command": "./deploy.sh"}}),
                    );
                    self.windows[w].mid_turn = true;
                    self.kill(w);
                } else {
                    self.bash(w, "./deploy.sh", 0);
                }
            }
            Op::Stop(_) => {
                self.hook(w, "Stop.json", json!({}));
                self.windows[w].mid_turn = false;
            }
            _ => unreachable!(),
        }
    }

    /// The agent's Write of `src/f<f>.rs`: the file written, its PostToolUse sent.
    fn write(&mut self, w: usize, f: usize) {
        let event = self
            .p
            .write_event(&format!("src/f{f}.rs"), &format!("// {}\n", self.events));
        let mut e: Value = serde_json::from_str(&event).unwrap();
        e.as_object_mut()
            .unwrap()
            .retain(|k, _| k.starts_with("tool_"));
        self.hook(w, "PostToolUse-Write.json", e);
        self.windows[w].mid_turn = true;
    }

    /// A person's command at a terminal: the binary run with no session of an agent's.
    fn hand(&mut self, kind: u8, n: usize) {
        let number = (n + 1).to_string();
        let args: &[&str] = match kind {
            0 => &["step", "done", &number],
            1 => &["step", "retry", &number],
            2 => &["step", "checked"],
            _ => &["task", "done"],
        };
        let out = self
            .p
            .waymark()
            .args(args)
            .env("XDG_CONFIG_HOME", self.p.config.path())
            .env("HOME", self.p.config.path())
            .env_remove("CLAUDE_CODE_SESSION_ID")
            .output()
            .unwrap();
        assert!(
            matches!(out.status.code(), Some(0 | 2)),
            "waymark {args:?}: {out:?}"
        );
    }

    fn start(&mut self, w: usize, source: u8) {
        let source = ["startup", "resume", "clear", "compact", "fork"][usize::from(source)];
        let fresh = matches!(source, "startup" | "resume" | "fork");
        if fresh {
            self.kill(w);
            let win = &mut self.windows[w];
            win.generation += 1;
            if source != "resume" {
                win.session = format!("s{w}-{}", win.generation);
            }
            win.mid_turn = false;
            self.spawn(w);
        } else if self.windows[w].process.is_none() {
            return;
        } else if source == "clear" {
            // /clear ends the session and starts a new one in the same process.
            self.hook(w, "SessionEnd-clear.json", json!({"reason": "clear"}));
            let win = &mut self.windows[w];
            win.generation += 1;
            win.session = format!("s{w}-{}", win.generation);
            win.mid_turn = false;
        }
        let before = self.p.hook_json_if_any();
        if fresh {
            self.expect_crash(w, before.as_ref());
        }
        let out = self.hook(
            w,
            &format!("SessionStart-{source}.json"),
            json!({"source": source}),
        );
        let session = self.windows[w].session.clone();
        self.read_brief(context_of(&out), &session);
    }

    /// What detection must find at window `w`'s fresh start, by the model.
    fn expect_crash(&mut self, w: usize, before: Option<&Value>) {
        let Some(h) = before else {
            for win in &mut self.windows {
                win.crashed = false;
            }
            return;
        };
        let known = |id: &str| {
            h["sessions"].as_array().is_some_and(|s| {
                s.iter()
                    .any(|s| s["session_id"] == id && s["status"] == "active")
            })
        };
        let others_live = (0..SLOTS).any(|o| {
            o != w
                && self.windows[o].process.is_some()
                && self.windows[o].mid_turn
                && known(&self.windows[o].session)
        });
        let terminal = matches!(
            h["state"].as_str(),
            Some("completed" | "failed" | "abandoned")
        );
        let recovering = h["state"] == "recovering";
        let gone: Vec<usize> = (0..SLOTS).filter(|&o| self.windows[o].crashed).collect();
        if terminal || gone.is_empty() {
            return;
        }
        if !recovering {
            if others_live {
                if self.windows[w].crashed
                    && h["sessions"].as_array().is_some_and(|s| {
                        s.iter()
                            .any(|s| s["session_id"] == self.windows[w].session.as_str())
                    })
                {
                    self.windows[w].crashed = false;
                }
                return;
            }
            let task = h["task_id"].as_str().unwrap().to_string();
            *self.crashes.entry(task).or_default() += 1;
        }
        for o in gone {
            self.windows[o].crashed = false;
            self.windows[o].mid_turn = false;
        }
    }

    /// The brief as the next agent reads it, against the task on disk.
    fn read_brief(&self, brief: Option<String>, session: &str) {
        let Some(h) = self.p.hook_json_if_any() else {
            return;
        };
        let task = h["task_id"].as_str().unwrap();
        let history = std::fs::read_to_string(
            self.p
                .path(&format!(".orchestration/tasks/{task}/history.jsonl")),
        )
        .unwrap_or_default();
        let declared = history
            .lines()
            .filter(|l| l.contains("\"crash_detected\""))
            .count();
        let expected = self.crashes.get(task).copied().unwrap_or(0);
        if declared != expected {
            panic!("{declared} crashes declared, {expected} expected:\n{h:#}\n{history}");
        }
        if let Some(b) = brief {
            read_against(&b, &h, session);
        }
    }
}

/// The brief `b` against the task `h` it was given for.
fn read_against(b: &str, h: &Value, session: &str) {
    assert!(b.chars().count() <= 4000, "{b}");
    // The catch-all for work with no plan is never shown as a step.
    assert!(!b.contains("Session work"), "{b}");
    if matches!(
        h["state"].as_str(),
        Some("completed" | "failed" | "abandoned")
    ) {
        // A finished task is told in one line.
        let line = format!(
            "Task {} is {}: nothing to resume.",
            h["task_id"].as_str().unwrap(),
            h["state"].as_str().unwrap()
        );
        assert!(b.starts_with(&format!("[waymark] {line}")), "{b}");
        return;
    }
    assert_eq!(
        b.contains("CRASH DETECTED"),
        h["recovery"].is_object(),
        "{b}\n{h:#}"
    );
    // Told once: only to the session it was told to.
    if b.contains("CRASH DETECTED") {
        assert_eq!(h["recovery"]["told"], session, "{b}\n{h:#}");
    }
    // The goal survives: the task is named by the request that began it.
    if let Some(g) = h["goal"].as_str() {
        assert!(
            b.contains(&format!("The task: {g}")),
            "the goal {g:?}:\n{b}"
        );
    }
    let planned = h["steps"].as_array().is_some_and(|s| {
        s.iter()
            .any(|s| s["source"] != "implicit" && s["status"] != "deleted")
    });
    if !planned {
        assert!(
            !b.contains("attempt") && !b.contains("Session work"),
            "no plan is no step:\n{b}"
        );
    }
    let done: Vec<&str> = h["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["status"] == "completed")
        .filter_map(|s| s["name"].as_str())
        .collect();
    let listed: Vec<&str> = b
        .split("DO NOT REPEAT (completed):\n")
        .nth(1)
        .map(|r| {
            r.lines()
                .take_while(|l| l.starts_with("- "))
                .filter_map(|l| l.split('"').nth(1))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(listed, done, "{b}");
}

trait AnyHook {
    fn hook_json_if_any(&self) -> Option<Value>;
}

impl AnyHook for Project {
    fn hook_json_if_any(&self) -> Option<Value> {
        let text = std::fs::read_to_string(self.path(".orchestration/hook.json")).ok()?;
        let mut h: Value = serde_json::from_str(&text).expect("hook.json parses");
        if let Ok(plan) = std::fs::read_to_string(self.path(".orchestration/plan.json")) {
            let plan: Value = serde_json::from_str(&plan).expect("plan.json parses");
            h["steps"] = plan["steps"].clone();
        }
        Some(h)
    }
}

fn cases() -> u32 {
    std::env::var("WAYMARK_SEQUENCES_BIN")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(CASES)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn sequences_of_real_sessions_keep_the_brief_true(ops in proptest::collection::vec(op(), 1..LENGTH), release in 0..RELEASES.len()) {
        let mut world = World::new(RELEASES[release]);
        for op in &ops {
            world.apply(op);
        }
    }
}

fn replay(release: &'static str, ops: &[Op]) {
    let mut world = World::new(release);
    for op in ops {
        world.apply(op);
    }
}

/// Shrunk failures, kept as the sequences that found them.
#[test]
fn a_clean_stop_after_work_is_no_crash_for_the_next_window() {
    use Op::*;
    replay(
        RELEASES[0],
        &[Start(1, 0), Stop(1), Write(1, 0), Stop(1), Start(0, 0)],
    );
}

/// A session first seen at a deploy's PreToolUse, killed while it runs: its crash is
/// declared and names the deploy in flight.
#[test]
fn a_session_killed_during_its_first_command_is_a_crash() {
    use Op::*;
    replay(RELEASES[0], &[Start(0, 0), Deploy(0, true), Start(0, 0)]);
}

/// A validation failed with no plan: the brief names no step for it.
#[test]
fn a_failed_validation_with_no_plan_names_no_step() {
    use Op::*;
    replay(RELEASES[0], &[Start(1, 0), Validate(1, false), Start(0, 0)]);
}
