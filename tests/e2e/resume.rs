//! The resume brief in the situations a real user meets, with the real CLI (issue 14): a
//! crash after a validation that failed then passed, after one that is still failing, crashes
//! past `max_attempts`, an intent-bound task, two live sessions in one project, a
//! subagent's writes, a push repeated after a crash, and what a crash interrupts (issue
//! 31): a validation run from Bash, a push in flight.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use crate::fake_api::{FakeApi, Turn};
use crate::harness::{Binary, Sandbox, Version, bash, cli, crash, git, sleeping, wait_for};
use crate::strs;

/// The project's validation: passes once `src/fixed.txt` exists.
const CHECK: &str = "#!/bin/sh\n\
if [ -f src/fixed.txt ]; then echo 'test lib::nil_input ... ok'; exit 0; fi\n\
echo 'running 1 test'\n\
echo 'test lib::nil_input ... FAILED'\n\
echo 'assertion failed: parse(None) returned Err(E2E-WHY)'\n\
exit 1\n";

/// A sandbox whose project validates with `./check.sh`, with `config` merged into
/// waymark's project configuration.
pub(crate) fn sandbox(name: &str, config: Value, version: Version) -> Sandbox {
    let sb = Sandbox::new(name, Binary::Built, version);
    let orch = sb.project.join(".orchestration");
    fs::create_dir_all(&orch).unwrap();
    let mut c = json!({"validation_commands": [r"(^|[;&|\s])\./check\.sh\b"]});
    c.as_object_mut()
        .unwrap()
        .extend(config.as_object().unwrap().clone());
    fs::write(orch.join("waymark.json"), c.to_string()).unwrap();
    let check = sb.project.join("check.sh");
    fs::write(&check, CHECK).unwrap();
    fs::set_permissions(&check, fs::Permissions::from_mode(0o755)).unwrap();
    git(&sb.project, &["add", "check.sh"]);
    git(&sb.project, &["commit", "-q", "-m", "the checks"]);
    sb
}

/// The turns that plan one step and start it.
pub(crate) fn step(sb: &Sandbox, subject: &str) -> Vec<Turn> {
    let mut turns = sb.plan(&[subject]);
    turns.push(sb.start_step(1));
    turns
}

pub(crate) fn write(sb: &Sandbox, rel: &str, content: &str) -> Turn {
    Turn::tool(
        "Write",
        json!({"file_path": sb.path(rel), "content": content}),
    )
}

/// Starts Claude Code on `turns` followed by a sleeping Bash call, and returns once it
/// sleeps: the session is live, mid-turn. The caller ends it with [`crash`].
pub(crate) fn start_then_sleep(
    sb: &Sandbox,
    tag: &str,
    mut turns: Vec<Turn>,
) -> (std::process::Child, PathBuf, FakeApi) {
    let pid = sb.root.join(format!("{tag}.pid"));
    turns.push(sleeping(&pid));
    turns.push(Turn::text(&format!("{tag} never reached")));
    let api = FakeApi::start(turns);
    let child = sb.spawn(&api, &["-p", &format!("{tag} go")]);
    let asleep = wait_for(Duration::from_secs(45), || pid.exists());
    assert!(
        asleep,
        "{tag}: the sleeping Bash call never started\n{}",
        sb.diagnose(&api)
    );
    (child, pid, api)
}

/// A new session (not `--continue`) that says `marker` and ends; the resume brief its first
/// request carried.
pub(crate) fn next_brief(sb: &Sandbox, marker: &str) -> String {
    let api = FakeApi::start(vec![Turn::text(marker)]);
    sb.run_ok(&api, &["-p", &format!("{marker} carry on")], marker);
    let text = api.main_requests()[0]
        .find_text("SessionStart hook additional context")
        .unwrap_or_else(|| panic!("no SessionStart context\n{}", sb.diagnose(&api)));
    waymark_part(&text)
}

/// waymark's brief in a system text that holds other context too: from `[waymark]` to
/// the HOOK.md line.
pub(crate) fn waymark_part(text: &str) -> String {
    let start = text.find("[waymark]").expect("waymark's brief");
    let rest = &text[start..];
    let end = rest
        .find("Full recovery file: ")
        .map(|i| i + rest[i..].find('\n').unwrap_or(rest.len() - i))
        .expect("the HOOK.md line");
    rest[..end].to_string()
}

pub(crate) fn has(brief: &str, needles: &[&str]) {
    for n in needles {
        assert!(brief.contains(n), "the brief lacks {n:?}:\n{brief}");
    }
}

pub(crate) fn lacks(brief: &str, needles: &[&str]) {
    for n in needles {
        assert!(
            !brief.contains(n),
            "the brief should not say {n:?}:\n{brief}"
        );
    }
}

on_each_version!(
    a_crash_with_no_plan_at_all_names_what_the_user_asked,
    a_crash_after_a_validation_that_failed_then_passed,
    a_crash_after_a_validation_that_is_still_failing,
    repeated_crashes_past_max_attempts_hand_over_to_a_human,
    an_intent_bound_task_brief_carries_the_intent,
    two_live_sessions_in_one_project_are_not_a_crash,
    a_subagents_writes_are_attributed_to_the_step,
    a_push_repeated_after_a_crash_is_asked_about,
    a_crash_during_a_validation_run_from_bash_runs_it_again,
    a_push_in_flight_at_the_crash_is_checked_before_it_runs_again,
    a_wrapped_hook_command_still_tells_a_live_session,
);

/// The agent recorded no plan (2.1.332's default model has no task list, and it did not
/// use `waymark plan`): the brief still says what the user asked, the files already
/// changed, and how to keep a plan from here on.
fn a_crash_with_no_plan_at_all_names_what_the_user_asked(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("no-plan", json!({}), version);
    let turns = vec![write(&sb, "src/parser.txt", "half a parser\n")];
    let (child, pid, api) = start_then_sleep(&sb, "E2E-NP", turns);
    let first = api.main_requests()[0].text();
    assert!(
        first.contains("waymark plan"),
        "the first session was not told how to keep a plan"
    );
    crash(child, &pid);
    let brief = next_brief(&sb, "E2E-NP-RESUMED");
    has(
        &brief,
        &[
            "CRASH DETECTED",
            "No plan was kept: the work is the user's request, not split into steps.",
            "The task: E2E-NP go",
            "Go on with the user's request (quoted above): no plan was kept",
            "src/parser.txt",
            "`waymark plan \"first step\" \"second step\" …`",
        ],
    );
    // The catch-all is not a step: no attempts to count.
    lacks(&brief, &["Session work", "attempt"]);
}

fn a_crash_after_a_validation_that_failed_then_passed(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("failed-then-passed", json!({}), version);
    let mut turns = step(&sb, "Fix the parser");
    turns.extend([
        bash("./check.sh"),
        write(&sb, "src/fixed.txt", "fixed\n"),
        bash("./check.sh"),
    ]);
    let (child, pid, _api) = start_then_sleep(&sb, "E2E-FP", turns);
    crash(child, &pid);
    let brief = next_brief(&sb, "E2E-FP-RESUMED");
    has(
        &brief,
        &[
            "CRASH DETECTED",
            "Last failed validation (step \"Fix the parser\"): `./check.sh` exited 1",
            "a later run passed (rcpt-",
            "the failure is fixed",
        ],
    );
    lacks(&brief, &["has not passed since", "E2E-WHY"]);
    let md = sb.read(".orchestration/HOOK.md");
    assert!(md.contains("a later run passed"), "{md}");
    assert!(
        brief.chars().count() <= 4000,
        "{} chars: {brief}",
        brief.chars().count()
    );
    // New files count with their lines; waymark's own files (AGENT.md's lesson) do not.
    has(
        &brief,
        &[
            "Changed since the last checkpoint's commit: 1 file, +1/−0 lines (1 new): src/fixed.txt.",
        ],
    );
}

fn a_crash_after_a_validation_that_is_still_failing(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("still-failing", json!({}), version);
    let mut turns = step(&sb, "Fix the parser");
    turns.push(bash("./check.sh"));
    let (child, pid, _api) = start_then_sleep(&sb, "E2E-SF", turns);
    crash(child, &pid);
    let brief = next_brief(&sb, "E2E-SF-RESUMED");
    has(
        &brief,
        &[
            "CRASH DETECTED",
            "`./check.sh` exited 1",
            "it has not passed since",
            "| test lib::nil_input ... FAILED",
            "| assertion failed: parse(None) returned Err(E2E-WHY)",
        ],
    );
    let md = sb.read(".orchestration/HOOK.md");
    assert!(
        md.contains("> assertion failed: parse(None) returned Err(E2E-WHY)"),
        "{md}"
    );
}

fn repeated_crashes_past_max_attempts_hand_over_to_a_human(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("max-attempts", json!({"max_attempts": 2}), version);
    let mut turns = step(&sb, "Migrate the schema");
    turns.push(write(&sb, "src/a.txt", "first try\n"));
    let (child, pid, _api) = start_then_sleep(&sb, "E2E-MA1", turns);
    crash(child, &pid);
    // The second session resumes the step (attempt 2 of 2) and crashes too.
    let (child, pid, api) = start_then_sleep(
        &sb,
        "E2E-MA2",
        vec![write(&sb, "src/b.txt", "second try\n")],
    );
    let second = waymark_part(
        &api.main_requests()[0]
            .find_text("SessionStart hook additional context")
            .unwrap(),
    );
    has(
        &second,
        &["CRASH DETECTED", "resuming makes it attempt 2 of 2"],
    );
    crash(child, &pid);
    let brief = next_brief(&sb, "E2E-MA3");
    has(
        &brief,
        &[
            "CRASH DETECTED",
            "HUMAN NEEDED: step 1 \"Migrate the schema\" has used 2 of its 2 attempts",
            "A human is needed",
        ],
    );
    lacks(&brief, &["attempt 3 of 2", "Resume step"]);
}

const INTENTS: &str = "\
active_intents:
  - id: INT-R
    name: Greeting
    status: IN_PROGRESS
    owned_scope:
      - src/greeting/**
    constraints:
      - Keep it short
    acceptance_criteria:
      - src/greeting/hello.txt
      - E2E-DONE-MARKER
";

fn an_intent_bound_task_brief_carries_the_intent(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("intent-brief", json!({}), version);
    fs::write(
        sb.project.join(".orchestration/active_intents.yaml"),
        INTENTS,
    )
    .unwrap();
    let mut turns = step(&sb, "Write the greeting");
    turns.push(write(&sb, "src/greeting/hello.txt", "hello\n"));
    turns.push(Turn::text("E2E-IB-1 done"));
    let api = FakeApi::start(turns);
    sb.run_ok(&api, &["-p", "E2E-IB-1 go"], "E2E-IB-1 done");
    assert_eq!(
        sb.hook_json()["intent_id"],
        "INT-R",
        "{}",
        sb.diagnose_files()
    );
    let brief = next_brief(&sb, "E2E-IB-2");
    has(
        &brief,
        &[
            "intent INT-R",
            "Intent INT-R \"Greeting\" (IN_PROGRESS): owned scope src/greeting/**; constraints: Keep it short; acceptance criteria not met yet (1 of 2): E2E-DONE-MARKER.",
        ],
    );
    let md = sb.read(".orchestration/HOOK.md");
    assert!(
        md.contains("acceptance criteria not met yet (1 of 2): E2E-DONE-MARKER"),
        "{md}"
    );
}

fn two_live_sessions_in_one_project_are_not_a_crash(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("parallel", json!({}), version);
    let hook = a_second_session_finds_the_first_at_work(&sb, "E2E-PA");
    // Both sessions are in the table, the first with the process that ran it.
    let sessions = hook["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "{hook}");
    assert!(
        sessions
            .iter()
            .all(|s| s["owner"]["pid"].as_u64().is_some()),
        "{hook}"
    );
    // Once the first is gone for good, a third session finds the crash.
    let third = next_brief(&sb, "E2E-PC");
    has(&third, &["CRASH DETECTED"]);
}

/// A session mid-step (step "Build the API", src/api.txt written) and, while it works, a
/// second one in another terminal: the second is told the first is at work, with no crash
/// and no recovery. The first is then killed. Returns hook.json as the second left it.
fn a_second_session_finds_the_first_at_work(sb: &Sandbox, tag: &str) -> Value {
    let mut turns = step(sb, "Build the API");
    turns.push(write(sb, "src/api.txt", "working\n"));
    let (first, pid, _api) = start_then_sleep(sb, tag, turns);
    let brief = next_brief(sb, &format!("{tag}-second"));
    let hook = sb.hook_json();
    crash(first, &pid);
    lacks(&brief, &["CRASH DETECTED"]);
    has(
        &brief,
        &[
            "ANOTHER SESSION IS WORKING NOW: Claude Code session ",
            "is on step \"Build the API\", files src/api.txt",
        ],
    );
    assert_ne!(hook["state"], "recovering", "{hook}");
    assert!(hook["recovery"].is_null(), "{hook}");
    // The second session's prompt is its own question, not the task's request (issue 49).
    assert_eq!(hook["goal"], format!("{tag} go"), "{hook}");
    assert_eq!(hook["last_prompt"], format!("{tag} go"), "{hook}");
    hook
}

/// A bare repository at `remote.git` beside the project, its `origin`.
pub(crate) fn origin(sb: &Sandbox) -> PathBuf {
    let remote = sb.root.join("remote.git");
    git(
        &sb.root,
        &["init", "-q", "--bare", remote.to_str().unwrap()],
    );
    git(
        &sb.project,
        &["remote", "add", "origin", remote.to_str().unwrap()],
    );
    remote
}

/// An Agent call for a subagent that writes docs/sub.txt, run in the foreground (2.1.332
/// runs agents in the background unless told otherwise; 2.1.197 knows no such field).
fn subagent(version: Version) -> Value {
    let mut input = json!({"description": "Write the docs", "prompt": "Write docs/sub.txt", "subagent_type": "general-purpose"});
    if version == Version::CURRENT {
        input["run_in_background"] = json!(false);
    }
    input
}

fn a_subagents_writes_are_attributed_to_the_step(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("subagent", json!({}), version);
    let mut turns = step(&sb, "Delegate the docs");
    // Turns 3 and 4 are the subagent's own requests; the main loop goes on at 5.
    turns.push(Turn::ToolThen {
        name: "Agent".into(),
        input: subagent(version),
        then: 5,
    });
    turns.push(write(&sb, "docs/sub.txt", "from the subagent\n"));
    turns.push(Turn::text("E2E-SUB sub done"));
    turns.push(Turn::text("E2E-SUB main done"));
    let api = FakeApi::start(turns);
    sb.run_ok(&api, &["-p", "E2E-SUB go"], "E2E-SUB main done");
    let why = sb.diagnose(&api);
    let record = sb
        .trace()
        .into_iter()
        .find(|r| {
            r["files"]
                .as_array()
                .is_some_and(|f| f.iter().any(|f| strs(&f["path"]) == "docs/sub.txt"))
        })
        .unwrap_or_else(|| panic!("no trace record of docs/sub.txt\n{why}"));
    let wm = &record["metadata"]["waymark"];
    assert!(!strs(&wm["agent_id"]).is_empty(), "{record}");
    let hook = sb.hook_json();
    let step = &hook["current_step"];
    let files: Vec<&str> = step["files_touched"]
        .as_array()
        .map(|f| f.iter().map(strs).collect())
        .unwrap_or_default();
    assert!(
        files.contains(&"docs/sub.txt") && strs(&step["step_name"]) == "Delegate the docs",
        "{hook}\n{why}"
    );
}

fn a_push_repeated_after_a_crash_is_asked_about(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("repeat-push", json!({}), version);
    let remote = origin(&sb);
    git(&sb.project, &["push", "-q", "origin", "main"]);
    let push = "git add -A && git commit -qm 'Add the feature' && git push -q origin main";
    let mut turns = step(&sb, "Ship the feature");
    turns.push(write(&sb, "src/feature.txt", "feature\n"));
    turns.push(bash(push));
    let (child, pid, _api) = start_then_sleep(&sb, "E2E-RP", turns);
    crash(child, &pid);
    let pushed = git(&remote, &["log", "--oneline", "main"]);

    // The resumed session tries the same push again.
    let api = FakeApi::start(vec![bash(push), Turn::text("E2E-RP-2 done")]);
    let run = sb.run(&api, &["-p", "E2E-RP-2 carry on"]);
    let why = format!("{}\n{}", run.stdout, sb.diagnose(&api));
    let brief = api.main_requests()[0]
        .find_text("SessionStart hook additional context")
        .unwrap();
    has(&brief, &["Side effects this step already had", "(done,"]);
    // The hook answered `ask`: Claude Code did not run the push unasked (a session run
    // with -p cannot ask, so the call is refused), and the model was told why.
    the_model_was_told(
        &api,
        &["waymark repeat guard: step \"Ship the feature\" already ran"],
        &why,
    );
    assert_eq!(
        git(&remote, &["log", "--oneline", "main"]),
        pushed,
        "pushed again"
    );
}

/// Issue 31, item 3: the session crashes while the agent's own validation runs from the
/// Bash tool (`./check.sh`, not `waymark validate`). The next brief says to run it again,
/// and the decision is `retry_step`.
fn a_crash_during_a_validation_run_from_bash_runs_it_again(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("bash-validation-crash", json!({}), version);
    let pid = sb.root.join("E2E-BV.pid");
    let command = format!(
        "echo $$ > {0}.tmp && mv {0}.tmp {0} && sleep 30 && ./check.sh",
        pid.display()
    );
    let mut turns = step(&sb, "Fix the parser");
    turns.push(write(&sb, "src/parser.txt", "v1\n"));
    turns.push(Turn::tool(
        "Bash",
        json!({"command": command, "description": "The tests", "timeout": 120000}),
    ));
    turns.push(Turn::text("E2E-BV never reached"));
    let api = FakeApi::start(turns);
    let child = sb.spawn(&api, &["-p", "E2E-BV go"]);
    let running = wait_for(Duration::from_secs(45), || pid.exists());
    assert!(
        running,
        "the validation never started\n{}",
        sb.diagnose(&api)
    );
    crash(child, &pid);

    let brief = next_brief(&sb, "E2E-BV-2");
    has(
        &brief,
        &[
            "CRASH DETECTED",
            "Recommended action: retry_step",
            &format!("Re-run the interrupted validation: `{command}`."),
        ],
    );
}

/// Issue 31, item 4: the session crashes while `git push` runs (the remote's pre-receive
/// hook is slow). The push's outcome is unknown: the next brief says so and how to check,
/// and the same push in the resumed step is asked about, not run unasked.
fn a_push_in_flight_at_the_crash_is_checked_before_it_runs_again(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("push-in-flight", json!({}), version);
    let hook = origin(&sb).join("hooks/pre-receive");
    fs::write(&hook, "#!/bin/sh\nsleep 30\n").unwrap();
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
    let pid = sb.root.join("E2E-PF.pid");
    let push = format!(
        "echo $$ > {0}.tmp && mv {0}.tmp {0} && git push -q origin main",
        pid.display()
    );
    let mut turns = step(&sb, "Ship the feature");
    turns.push(bash(&push));
    turns.push(Turn::text("E2E-PF never reached"));
    let api = FakeApi::start(turns);
    let child = sb.spawn(&api, &["-p", "E2E-PF go"]);
    let running = wait_for(Duration::from_secs(45), || pid.exists());
    assert!(running, "the push never started\n{}", sb.diagnose(&api));
    crash(child, &pid);

    let api = FakeApi::start(vec![bash(&push), Turn::text("E2E-PF-2 done")]);
    let run = sb.run(&api, &["-p", "E2E-PF-2 carry on"]);
    let why = format!("{}\n{}", run.stdout, sb.diagnose(&api));
    let brief = waymark_part(
        &api.main_requests()[0]
            .find_text("SessionStart hook additional context")
            .unwrap_or_else(|| panic!("no brief\n{why}")),
    );
    has(
        &brief,
        &[
            "was running when the session ended: whether it took effect is unknown",
            "Check first: `git fetch` then `git status -sb`",
            "(outcome unknown: it was running when the session ended",
        ],
    );
    the_model_was_told(
        &api,
        &["waymark repeat guard", "whether it took effect is unknown"],
        &why,
    );
}

/// Checks that the result of the repeated call, as the model got it, holds each of
/// `needles`: the repeat guard's reason reached it.
pub(crate) fn the_model_was_told(api: &FakeApi, needles: &[&str], why: &str) {
    let after = api
        .main_requests()
        .iter()
        .find_map(|r| api.tool_result_text(r))
        .unwrap_or_else(|| panic!("no tool result for the repeated push\n{why}"));
    for n in needles {
        assert!(
            after.contains(n),
            "the model was not told {n:?}: {after}\n{why}"
        );
    }
}

/// Issue 31, item 6: the user wraps the hook commands (`timeout 60 nice …`, as Claude Code
/// runs them: `sh -c`). waymark still records Claude Code's own process, not the wrapper
/// that exits with each hook: a second session started while the first works finds it
/// live, not crashed.
fn a_wrapped_hook_command_still_tells_a_live_session(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = sandbox("wrapped-hooks", json!({}), version);
    let hooks = sb.plugin.join("hooks/hooks.json");
    let mut registered: Value = serde_json::from_str(&fs::read_to_string(&hooks).unwrap()).unwrap();
    for event in registered["hooks"].as_object_mut().unwrap().values_mut() {
        for group in event.as_array_mut().unwrap() {
            for hook in group["hooks"].as_array_mut().unwrap() {
                let command = hook["command"].as_str().unwrap().to_string();
                hook["command"] = format!("timeout 60 nice {command}").into();
            }
        }
    }
    fs::write(&hooks, registered.to_string()).unwrap();
    a_second_session_finds_the_first_at_work(&sb, "E2E-WA");
}
