//! Crashes mid-write: processes SIGKILLed at precise points of their writes (fault points
//! in debug builds) and at random instants, many times. hook.json always parses and holds
//! the old state or the new; the trace has at most a torn last line, which the next write
//! repairs; nothing a finished event wrote is lost; temp files of killed writers go away.

use std::os::unix::process::ExitStatusExt;
use std::process::Output;
use std::time::Duration;

use serde_json::Value;

use crate::common::*;
use crate::util::Project;

/// Runs a hook with `WAYMARK_TEST_FAULT` set; returns its output.
fn hook_with_fault(p: &Project, event: &str, input: &Value, fault: &str) -> Output {
    let mut cmd = hook_command(p, event);
    cmd.env("WAYMARK_TEST_FAULT", fault);
    spawn_hook(cmd, input.to_string().as_bytes())
        .wait_with_output()
        .unwrap()
}

fn killed(out: &Output) -> bool {
    out.status.signal() == Some(9)
}

fn ok(p: &Project, event: &str, input: &Value) {
    let out = run_hook(p, event, input);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A project with a task, one step running and one file touched.
fn started(p: &Project) -> Vec<(&'static str, Value)> {
    let events = cycle(p.root(), "s1", "a", "a1");
    for (e, v) in &events[..4] {
        ok(p, e, v);
    }
    events
}

fn read_bytes(p: &Project, rel: &str) -> Vec<u8> {
    std::fs::read(p.path(rel)).unwrap()
}

/// A save writes the new state into the .bak's file (synced), then exchanges the names
/// through a third (`store::replace_keeping_previous`). Killed before the exchange or
/// with the third name made, hook.json is the old state byte for byte; the next writer
/// goes on and nothing is left behind.
#[test]
fn killed_before_the_rename_hook_json_keeps_the_old_state_and_the_temp_is_cleaned() {
    for point in [
        "store.locked",
        "atomic.write",
        "atomic.rename",
        "atomic.swap",
    ] {
        let p = Project::new();
        let events = started(&p);
        let before = read_bytes(&p, ".orchestration/hook.json");
        // The step's completion: a write of hook.json (and a checkpoint).
        let (e, done) = &events[8];
        let out = hook_with_fault(&p, e, done, &format!("{point}:kill"));
        assert!(killed(&out), "{point}: {:?}", out.status);
        // The old state, byte for byte, and still valid.
        assert_eq!(
            read_bytes(&p, ".orchestration/hook.json"),
            before,
            "{point}"
        );
        p.hook_json();
        // The next writer removes what the killed one left and goes on.
        ok(&p, e, done);
        assert_eq!(
            tmp_leftovers(&p),
            Vec::<std::path::PathBuf>::new(),
            "{point}"
        );
        let hook = p.hook_json();
        assert!(files_touched(&hook).contains(&"src/a/a1.txt".to_string()));
        assert_eq!(hook["steps"][0]["status"], "completed", "{point}");
    }
}

#[test]
fn killed_after_the_rename_hook_json_has_the_new_state_and_hook_md_catches_up() {
    let p = Project::new();
    let events = started(&p);
    let md_before = p.read(".orchestration/HOOK.md");
    let (e, done) = &events[8];
    let out = hook_with_fault(&p, e, done, "store.saved:kill");
    assert!(killed(&out), "{:?}", out.status);
    // The new state is in: the step is completed.
    let hook = p.hook_json();
    let step = hook["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "a1")
        .unwrap();
    assert_eq!(step["status"], "completed");
    // HOOK.md is the old one (it is regenerable, rule 6) until the next write.
    assert_eq!(p.read(".orchestration/HOOK.md"), md_before);
    p.waymark().arg("regenerate").assert().success();
    let md = p.read(".orchestration/HOOK.md");
    assert!(md.contains("## Completed Steps"), "{md}");
    assert!(md.contains("Step a1"), "{md}");
}

/// Depends on the trace writer (issue 6): a record torn in half by a kill is cut off by
/// the next append, and every record before it survives.
#[test]
fn a_trace_record_torn_by_a_kill_is_repaired_by_the_next_write() {
    let p = Project::new();
    let events = started(&p);
    let before = trace_records(&p).len();
    assert!(before >= 1, "the Write of the setup is traced");
    let (e, bash) = &events[4];
    let out = hook_with_fault(&p, e, bash, "append.torn:kill");
    assert!(killed(&out), "{:?}", out.status);
    let text = p.read(".orchestration/agent_trace.jsonl");
    assert!(!text.ends_with('\n'), "the kill left half a record");
    // Readers skip the torn line: status still works.
    p.waymark().arg("status").assert().success();
    let (e, edit) = &events[6];
    ok(&p, e, edit);
    let records = trace_records(&p);
    assert_eq!(
        records.len(),
        before + 1,
        "old records kept, the torn one cut"
    );
    assert_eq!(trace_count(&records, "toolu_a1_edit"), 1);
    assert_eq!(trace_count(&records, "toolu_a1_write"), 1);
}

/// Many agents' events, each process killed at a random instant (or let finish); after
/// every kill hook.json parses; at the end every event that finished is still there.
fn random_kills(rounds: usize) {
    let (mut rng, seed) = Rng::from_env_or_time("WAYMARK_CRASH_SEED");
    eprintln!("random kills: seed {seed} (WAYMARK_CRASH_SEED={seed} repeats it)");
    let p = Project::new();
    let mut finished: Vec<(String, usize)> = Vec::new();
    let mut kills = 0;
    let typical = typical_hook_micros(&p);
    for round in 0..rounds {
        let tag = format!("r{round:03}");
        let events = cycle(p.root(), &format!("s{}", round % 3), "r", &tag);
        for (i, (event, input)) in events.iter().enumerate() {
            let child = spawn_hook(hook_command(&p, event), input.to_string().as_bytes());
            // Kill within the typical hook time, or let one in four finish.
            let kill_after = (rng.below(4) != 0).then(|| Duration::from_micros(rng.below(typical)));
            let out = match kill_after {
                Some(after) => {
                    std::thread::sleep(after);
                    let mut child = child;
                    let _ = child.kill();
                    child.wait_with_output().unwrap()
                }
                None => child.wait_with_output().unwrap(),
            };
            if killed(&out) {
                kills += 1;
            } else {
                assert_eq!(out.status.code(), Some(0), "{tag} {event}");
                finished.push((tag.clone(), i));
            }
            nothing_is_torn(&p, seed, &tag, event);
        }
    }
    eprintln!("random kills: {kills} killed, {} finished", finished.len());
    assert!(
        kills > rounds,
        "seed {seed}: too few kills to prove anything"
    );
    // One clean event removes stale temps.
    ok(
        &p,
        "UserPromptSubmit",
        &serde_json::json!({"session_id": "s0", "prompt": "after"}),
    );
    assert!(tmp_leftovers(&p).is_empty(), "{:?}", tmp_leftovers(&p));
    every_finished_event_is_kept(&p, seed, &finished);
}

/// The time a hook takes on this machine now, in microseconds (at least 1 ms), measured
/// on a warm-up cycle that is left to finish, so that kills within it land inside the
/// writes however fast or loaded the machine is.
fn typical_hook_micros(p: &Project) -> u64 {
    let warmup = cycle(p.root(), "s0", "r", "warmup");
    let started = std::time::Instant::now();
    for (event, input) in &warmup {
        let out = spawn_hook(hook_command(p, event), input.to_string().as_bytes())
            .wait_with_output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "warm-up {event}");
    }
    (started.elapsed().as_micros() as u64 / warmup.len() as u64).max(1_000)
}

/// Checks, after `event` of cycle `tag` was run (and maybe killed), that hook.json holds
/// the old state or the new, never a torn one, and the trace whole lines but for at most
/// one torn line at the end.
fn nothing_is_torn(p: &Project, seed: u64, tag: &str, event: &str) {
    if let Ok(text) = std::fs::read_to_string(p.path(".orchestration/hook.json")) {
        serde_json::from_str::<Value>(&text)
            .unwrap_or_else(|e| panic!("seed {seed}: hook.json torn after {tag} {event}: {e}"));
    }
    let trace =
        std::fs::read_to_string(p.path(".orchestration/agent_trace.jsonl")).unwrap_or_default();
    let whole = trace.rsplit_once('\n').map(|(w, _)| w).unwrap_or("");
    for line in whole.lines() {
        serde_json::from_str::<Value>(line)
            .unwrap_or_else(|e| panic!("seed {seed}: trace line torn mid-file: {e}"));
    }
}

/// Checks that what each `finished` event (cycle tag, index in the cycle) left is in
/// hook.json: its step, its file, its later step.
fn every_finished_event_is_kept(p: &Project, seed: u64, finished: &[(String, usize)]) {
    let hook = p.hook_json();
    let files = files_touched(&hook);
    let steps: Vec<&str> = hook["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    for (tag, i) in finished {
        match i {
            1 => assert!(
                steps.contains(&tag.as_str()),
                "seed {seed}: step {tag} lost"
            ),
            3 | 6 => assert!(
                files.contains(&format!("src/r/{tag}.txt")),
                "seed {seed}: file of {tag} lost"
            ),
            9 => assert!(
                steps.contains(&format!("{tag}-later").as_str()),
                "seed {seed}: step {tag}-later lost"
            ),
            _ => {}
        }
    }
}

#[test]
fn random_sigkills_never_tear_hook_json_nor_lose_a_finished_event() {
    random_kills(12);
}

/// Depends on the trace writer (issue 6) for the trace part: after random kills the trace
/// holds every record of every event that finished.
#[test]
fn random_sigkills_lose_no_finished_trace_record() {
    let (mut rng, seed) = Rng::from_env_or_time("WAYMARK_CRASH_SEED");
    let p = Project::new();
    let mut finished = Vec::new();
    for round in 0..6 {
        let tag = format!("t{round:03}");
        let events = cycle(p.root(), "s", "t", &tag);
        for (i, (event, input)) in events.iter().enumerate() {
            let mut child = spawn_hook(hook_command(&p, event), input.to_string().as_bytes());
            if rng.below(2) == 0 {
                std::thread::sleep(Duration::from_micros(rng.below(30_000)));
                let _ = child.kill();
            }
            let out = child.wait_with_output().unwrap();
            if !killed(&out) && matches!(i, 3 | 4 | 6 | 7) {
                finished.push(
                    traced_ids(&tag)[[3, 4, 6, 7].iter().position(|&x| x == i).unwrap()].clone(),
                );
            }
        }
    }
    // One clean traced event repairs a torn tail.
    let last = cycle(p.root(), "s", "t", "last");
    ok(&p, last[4].0, &last[4].1);
    let records = trace_records(&p);
    assert_eq!(trace_count(&records, "toolu_last_bash"), 1);
    for id in &finished {
        assert_eq!(trace_count(&records, id), 1, "seed {seed}: {id}");
    }
}
