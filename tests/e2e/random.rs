//! Random sequences on the real CLIs (issue 49): what the model (`recovery/sequences.rs`)
//! and the binary sequences (`tests/sequences.rs`) check, run with the clients themselves.
//! A sequence is a few sessions in one project, each Claude Code 2.1.197, 2.1.332 (with
//! its defaults: no task tools) or Codex CLI 0.169.0, each with a prompt (a request, or
//! "continue"), some work (the plan kept with `waymark plan` / `waymark step` from the
//! shell, files written with the client's own tool or from the shell, validations that
//! pass or fail) and an end (a clean stop, or killed mid-turn); between sessions a person
//! may run `waymark step done|retry|checked` or `waymark task done`. Every session's brief
//! is read as the next agent reads it, against the task on disk:
//!
//! - a crash is announced exactly by the session after the kill, and by no later one;
//! - every crash is declared once in the task's history;
//! - the goal, the first request of the task that was not a go-on prompt, is named;
//! - no line beside HUMAN NEEDED says to go on; "Session work" is never shown;
//! - a finished task is told in one line.
//!
//! `cargo test` runs [`CASES`] sequences; `WAYMARK_E2E_SEQUENCES=N` runs N (CI: docs/tests.md).

use std::collections::HashMap;
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Value, json};

use crate::codex::{self, add_file, codex, register};
use crate::codex_api::{CTurn, CodexApi};
use crate::fake_api::{FakeApi, Turn};
use crate::harness::{Sandbox, Version, bash, cli, crash, kill_group, sleeping, wait_for};
use crate::resume::sandbox;
use crate::strs;

const CASES: u32 = 2;
const STEPS: [&str; 3] = ["Read the grammar", "Write the parser", "Ship it"];
const PROMPTS: [&str; 4] = [
    "E2E-RQ build a nil-safe parser",
    "continue",
    "carry on",
    "E2E-RQ also handle leap years",
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Client {
    Claude(Version),
    Codex,
}

#[derive(Debug, Clone)]
enum Work {
    Plan,
    StepStart(usize),
    StepDone(usize),
    /// A file written with the client's own tool (Write, apply_patch).
    Write(usize),
    /// A file written from the shell (`printf … > src/fN.txt`).
    ShellWrite(usize),
    Validate(bool),
}

#[derive(Debug, Clone)]
enum Hand {
    Done(usize),
    Retry(usize),
    Checked,
    TaskDone,
}

#[derive(Debug, Clone)]
struct Session {
    client: Client,
    prompt: usize,
    work: Vec<Work>,
    killed: bool,
    /// What a person types after the session.
    hand: Option<Hand>,
}

fn work() -> impl Strategy<Value = Work> {
    prop_oneof![
        1 => Just(Work::Plan),
        2 => (0..STEPS.len()).prop_map(Work::StepStart),
        1 => (0..STEPS.len()).prop_map(Work::StepDone),
        2 => (0..3usize).prop_map(Work::Write),
        1 => (0..3usize).prop_map(Work::ShellWrite),
        1 => any::<bool>().prop_map(Work::Validate),
    ]
}

fn hand() -> impl Strategy<Value = Option<Hand>> {
    prop_oneof![
        6 => Just(None),
        1 => (0..STEPS.len()).prop_map(|n| Some(Hand::Done(n))),
        1 => (0..STEPS.len()).prop_map(|n| Some(Hand::Retry(n))),
        1 => Just(Some(Hand::Checked)),
        1 => Just(Some(Hand::TaskDone)),
    ]
}

fn session() -> impl Strategy<Value = Session> {
    let client = prop_oneof![
        Just(Client::Claude(Version::OLDEST)),
        Just(Client::Claude(Version::CURRENT)),
        Just(Client::Codex),
    ];
    (
        client,
        0..PROMPTS.len(),
        proptest::collection::vec(work(), 0..4),
        any::<bool>(),
        hand(),
    )
        .prop_map(|(client, prompt, work, killed, hand)| Session {
            client,
            prompt,
            work,
            killed,
            hand,
        })
}

/// What the model expects of the next brief.
#[derive(Default)]
struct World {
    /// The last session was killed mid-turn: the next start declares and tells it.
    crash_pending: bool,
    /// Crashes declared per task.
    crashes: HashMap<String, usize>,
    /// The prompts typed in each task, in order.
    prompts: HashMap<String, Vec<String>>,
    n: usize,
}

fn run(sessions: &[Session]) {
    let mut sb = sandbox("random", json!({"max_attempts": 2}), Version::CURRENT);
    register(&sb);
    let mut w = World::default();
    for s in sessions {
        w.n += 1;
        let before = sb.hook_json_if_any();
        let brief = match s.client {
            Client::Claude(v) => {
                sb.version = v;
                claude_session(&sb, s, w.n)
            }
            Client::Codex => codex_session(&sb, s, w.n),
        };
        w.read(&sb, before.as_ref(), &brief, s);
        if let Some(h) = &s.hand {
            person(&sb, h);
        }
    }
}

impl World {
    /// The brief session `s` got, against the task as it stood before it started.
    fn read(&mut self, sb: &Sandbox, before: Option<&Value>, brief: &str, s: &Session) {
        let why = || format!("{brief}\n--- before:\n{before:#?}\n{}", sb.diagnose_files());
        let live = before.is_some_and(|h| !terminal(h));
        assert!(brief.chars().count() <= 4000, "{}", why());
        assert!(!brief.contains("Session work"), "{}", why());
        if let Some(h) = before.filter(|h| terminal(h)) {
            let line = format!(
                "Task {} is {}: nothing to resume.",
                strs(&h["task_id"]),
                strs(&h["state"])
            );
            assert!(brief.contains(&line), "{}", why());
        }
        assert_eq!(
            brief.contains("CRASH DETECTED"),
            live && self.crash_pending,
            "a crash is told by the session after it, once:\n{}",
            why()
        );
        if live && self.crash_pending {
            let task = strs(&before.unwrap()["task_id"]).to_string();
            *self.crashes.entry(task).or_default() += 1;
        }
        if let Some(h) = before.filter(|_| live) {
            let task = strs(&h["task_id"]);
            let goal = self.prompts.get(task).and_then(|p| {
                p.iter()
                    .find(|p| !p.starts_with("continue") && !p.starts_with("carry on"))
            });
            if let Some(g) = goal {
                assert!(
                    brief.contains(&format!("The task: {g}")),
                    "the goal {g:?}:\n{}",
                    why()
                );
            }
        }
        if brief.contains("HUMAN NEEDED") {
            for go_on in ["Resume step", "Start step", "Recovery:", "and go on"] {
                assert!(!brief.contains(go_on), "{go_on}:\n{}", why());
            }
        }
        self.crash_pending = s.killed;
        // The prompt landed in the task current after the session's start.
        if let Some(after) = sb.hook_json_if_any() {
            let task = strs(&after["task_id"]).to_string();
            let declared = crashes_in(&after);
            assert_eq!(
                declared,
                self.crashes.get(&task).copied().unwrap_or(0),
                "every crash declared once:\n{}",
                why()
            );
            self.prompts
                .entry(task)
                .or_default()
                .push(PROMPTS[s.prompt].to_string());
        }
    }
}

fn terminal(h: &Value) -> bool {
    matches!(strs(&h["state"]), "completed" | "failed" | "abandoned")
}

fn crashes_in(h: &Value) -> usize {
    crate::goal::crashes_declared(h)
}

/// The shell command of a piece of work, as every client's agent runs it.
fn shell_of(w: &Work) -> Option<String> {
    Some(match w {
        Work::Plan => format!("waymark plan '{}'", STEPS.join("' '")),
        Work::StepStart(n) => format!("waymark step start {}", n + 1),
        Work::StepDone(n) => format!("waymark step done {}", n + 1),
        Work::ShellWrite(f) => format!("mkdir -p src && printf 'shell {f}\\n' > src/s{f}.txt"),
        Work::Validate(true) => "mkdir -p src && touch src/fixed.txt && ./check.sh".into(),
        Work::Validate(false) => "rm -f src/fixed.txt; ./check.sh".into(),
        Work::Write(_) => return None,
    })
}

/// One Claude Code session; the brief its first request carried.
fn claude_session(sb: &Sandbox, s: &Session, n: usize) -> String {
    let mut turns: Vec<Turn> = s
        .work
        .iter()
        .map(|w| match (w, shell_of(w)) {
            (_, Some(cmd)) => bash(&cmd),
            (Work::Write(f), None) => Turn::tool(
                "Write",
                json!({"file_path": sb.path(&format!("src/w{f}.txt")), "content": format!("write {n}\n")}),
            ),
            _ => unreachable!(),
        })
        .collect();
    let prompt = PROMPTS[s.prompt];
    let api = if s.killed {
        let pid = sb.root.join(format!("random-{n}.pid"));
        turns.push(bash(&format!(
            "mkdir -p src && echo {n} > src/crash{n}.txt"
        )));
        turns.push(sleeping(&pid));
        turns.push(Turn::text("never reached"));
        let api = FakeApi::start(turns);
        let child = sb.spawn(&api, &["-p", prompt]);
        let asleep = wait_for(Duration::from_secs(45), || pid.exists());
        assert!(asleep, "session {n} never slept\n{}", sb.diagnose(&api));
        crash(child, &pid);
        api
    } else {
        let marker = format!("E2E-RANDOM-{n} done");
        turns.push(Turn::text(&marker));
        let api = FakeApi::start(turns);
        sb.run_ok(&api, &["-p", prompt], &marker);
        api
    };
    let first = &api.main_requests()[0];
    let text = first
        .find_text("[waymark] Resume brief")
        .or_else(|| first.find_text("[waymark] Task"))
        .or_else(|| first.find_text("[waymark]"))
        .unwrap_or_else(|| panic!("session {n}: no waymark context\n{}", sb.diagnose(&api)));
    ours(&text)
}

/// One Codex CLI session; the brief its first request carried.
fn codex_session(sb: &Sandbox, s: &Session, n: usize) -> String {
    let mut turns: Vec<CTurn> = s
        .work
        .iter()
        .map(|w| match (w, shell_of(w)) {
            (_, Some(cmd)) => CTurn::Shell(cmd),
            (Work::Write(f), None) => CTurn::Patch(add_file(
                &format!("src/p{n}-{f}.txt"),
                &[&format!("patch {n}")],
            )),
            _ => unreachable!(),
        })
        .collect();
    let prompt = PROMPTS[s.prompt];
    let api = if s.killed {
        let started = sb.root.join(format!("random-codex-{n}.pid"));
        turns.push(CTurn::Shell(format!(
            "mkdir -p src && echo {n} > src/crash{n}.txt"
        )));
        turns.push(CTurn::Shell(codex::sleeping(&started)));
        turns.push(CTurn::Text("never reached".into()));
        let api = CodexApi::start(turns);
        let mut child = codex::spawn(sb, &api, &[prompt]);
        let asleep = wait_for(Duration::from_secs(45), || started.exists());
        kill_group(child.id());
        let _ = child.wait();
        assert!(
            asleep,
            "codex session {n} never slept\n{}",
            codex::diagnose(sb, &api)
        );
        if let Ok(pid) = std::fs::read_to_string(&started) {
            kill_group(pid.trim().parse().unwrap_or(0));
        }
        let _ = std::fs::remove_file(&started);
        api
    } else {
        let marker = format!("E2E-RANDOM-{n} done");
        turns.push(CTurn::Text(marker.clone()));
        let api = CodexApi::start(turns);
        codex::run_ok(sb, &api, &[prompt], &marker);
        api
    };
    let text = api.turns()[0].developer_text();
    if !text.contains("[waymark]") {
        panic!(
            "codex session {n}: no waymark context\n{}",
            codex::diagnose(sb, &api)
        );
    }
    ours(&text)
}

/// waymark's part of a context: from its first `[waymark]` to the HOOK.md line, or to the
/// paragraph's end when there is none (no task yet: only the note on keeping a plan).
fn ours(text: &str) -> String {
    let rest = &text[text.find("[waymark]").expect("waymark's context")..];
    let end = match rest.find("Full recovery file: ") {
        Some(i) => i + rest[i..].find('\n').unwrap_or(rest.len() - i),
        None => rest.find("\n\n").unwrap_or(rest.len()),
    };
    rest[..end].to_string()
}

/// A person at a terminal.
fn person(sb: &Sandbox, h: &Hand) {
    let args: Vec<String> = match h {
        Hand::Done(n) => vec!["step".into(), "done".into(), (n + 1).to_string()],
        Hand::Retry(n) => vec!["step".into(), "retry".into(), (n + 1).to_string()],
        Hand::Checked => vec!["step".into(), "checked".into()],
        Hand::TaskDone => vec!["task".into(), "done".into()],
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = sb.waymark(&args);
    // Refused (no such step, a finished task) is a person's mistake, said plainly.
    assert!(
        matches!(out.status.code(), Some(0 | 2)),
        "waymark {args:?}: {out:?}"
    );
}

trait AnyHook {
    fn hook_json_if_any(&self) -> Option<Value>;
}

impl AnyHook for Sandbox {
    fn hook_json_if_any(&self) -> Option<Value> {
        self.project
            .join(".orchestration/hook.json")
            .exists()
            .then(|| self.hook_json())
    }
}

fn cases() -> u32 {
    std::env::var("WAYMARK_E2E_SEQUENCES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(CASES)
}

/// The runner: seeded by `WAYMARK_E2E_SEED` when it is set, and under CI by a fixed seed
/// (a CI run is a gate: the same sequences each time, which a developer's run widens with
/// a seed of its own); otherwise from the clock. The seed is printed, so that a failing
/// run can be run again as it was.
fn runner(config: Config) -> TestRunner {
    use proptest::test_runner::{RngAlgorithm, TestRng};
    let seed: u64 = match std::env::var("WAYMARK_E2E_SEED") {
        Ok(s) => s.parse().expect("WAYMARK_E2E_SEED is a number"),
        Err(_) if std::env::var_os("CI").is_some() => 49,
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(49, |d| d.as_secs()),
    };
    eprintln!("random sequences: WAYMARK_E2E_SEED={seed}");
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}

#[test]
fn random_sequences_on_both_clients_keep_the_brief_true() {
    if cli(Version::OLDEST).is_none() || cli(Version::CURRENT).is_none() || codex().is_none() {
        return;
    }
    let config = Config {
        cases: cases(),
        failure_persistence: None,
        // Each case is a few real sessions: a failure is printed as it was, not shrunk.
        max_shrink_iters: 0,
        ..Config::default()
    };
    let sequence = proptest::collection::vec(session(), 2..6);
    runner(config)
        .run(&sequence, |sessions| {
            run(&sessions);
            Ok(())
        })
        .unwrap();
}
