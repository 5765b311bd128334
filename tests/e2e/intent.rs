//! Scenario 5: an intent with `owned_scope` and acceptance criteria. An out-of-scope Write
//! is flagged in the next request; a failing validation leaves a lesson in AGENT.md; a
//! passing one meets the last criterion and completes the intent.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use serde_json::{Value, json};

use crate::fake_api::{FakeApi, Request, Turn};
use crate::harness::{Binary, Sandbox, Version, cli, git};
use crate::strs;

const INTENTS: &str = "\
# Intents for the e2e sprint (this comment must survive the status change)
active_intents:
  - id: INT-E2E
    name: Greeting feature
    status: IN_PROGRESS   # set by the team
    owned_scope:
      - src/greeting/**
    constraints:
      - Keep it short
    acceptance_criteria:
      - src/greeting/hello.txt
      - E2E-CHECKS-PASSED
  - id: INT-LATER
    name: Something else
    status: PENDING
    owned_scope:
      - docs/**
";

/// The project's validation: passes once hello.txt says "fixed". The success marker is
/// assembled at run time so that it never appears in the command itself.
const CHECK: &str = "#!/bin/sh\n\
if grep -q fixed src/greeting/hello.txt 2>/dev/null; then\n\
  echo \"E2E-CHECKS-$(echo PASSED)\"; exit 0\n\
fi\n\
echo 'E2E-CHECKS-FAILED: hello.txt is not fixed'; exit 1\n";

on_each_version!(intent_scope_warning_lesson_and_completion);

fn intent_scope_warning_lesson_and_completion(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = Sandbox::new("intent", Binary::Built, version);
    project_with_an_intent_and_checks(&sb);
    let api = FakeApi::start(script(&sb));
    sb.run_ok(&api, &["-p", "E2E-S5 build the greeting"], "E2E-S5-FINAL");
    let why = sb.diagnose(&api);

    // What Claude Code did: the failing check really failed, the second really passed.
    let main = api.main_requests();
    let failed = api
        .tool_result_text(answer_to(&main, 2, &why))
        .unwrap_or_default();
    assert!(failed.contains("E2E-CHECKS-FAILED"), "{failed}\n{why}");
    let passed = api
        .tool_result_text(answer_to(&main, 4, &why))
        .unwrap_or_default();
    assert!(passed.contains("E2E-CHECKS-PASSED"), "{passed}\n{why}");

    let hook = sb.hook_json();
    the_task_is_the_intents(&sb, &hook, &why);
    both_validations_are_observed(&hook, &why);
    the_out_of_scope_write_is_flagged(&sb, &main, &why);
    the_failed_check_is_a_lesson(&sb);
    the_met_criteria_complete_the_intent(&sb);
}

/// Sets up the project: INTENTS, `./check.sh` as its validation command, committed.
fn project_with_an_intent_and_checks(sb: &Sandbox) {
    let orch = sb.project.join(".orchestration");
    fs::create_dir_all(&orch).unwrap();
    fs::write(orch.join("active_intents.yaml"), INTENTS).unwrap();
    fs::write(
        orch.join("waymark.json"),
        json!({"validation_commands": [r"(^|[;&|\s])\./check\.sh\b"]}).to_string(),
    )
    .unwrap();
    let check = sb.project.join("check.sh");
    fs::write(&check, CHECK).unwrap();
    fs::set_permissions(&check, fs::Permissions::from_mode(0o755)).unwrap();
    git(&sb.project, &["add", "check.sh"]);
    git(&sb.project, &["commit", "-q", "-m", "the checks"]);
}

/// The session: a Write in scope, one out of it, a failing check, the fix, a passing check.
fn script(sb: &Sandbox) -> Vec<Turn> {
    let hello = sb.path("src/greeting/hello.txt");
    vec![
        // 0: inside the intent's scope.
        Turn::tool(
            "Write",
            json!({"file_path": hello, "content": "hello, broken\n"}),
        ),
        // 1: outside it.
        Turn::tool(
            "Write",
            json!({"file_path": sb.path("docs/notes.md"), "content": "E2E-S5 notes\n"}),
        ),
        // 2: the validation fails (PostToolUseFailure).
        Turn::tool(
            "Bash",
            json!({"command": "./check.sh", "description": "Run the checks"}),
        ),
        // 3: the fix.
        Turn::tool(
            "Edit",
            json!({"file_path": hello, "old_string": "broken", "new_string": "fixed"}),
        ),
        // 4: the validation passes.
        Turn::tool(
            "Bash",
            json!({"command": "./check.sh", "description": "Run the checks again"}),
        ),
        Turn::text("E2E-S5-FINAL"),
    ]
}

/// The request that answered the tool call of script turn `turn` (carries its result).
fn answer_to<'a>(main: &'a [Request], turn: usize, why: &str) -> &'a Request {
    let label = format!("turn {}", turn + 1);
    main.iter()
        .find(|r| r.answered == label)
        .unwrap_or_else(|| panic!("no request answered with {label}\n{why}"))
}

/// Checks that the task is bound to the in-progress intent and saw both files, and that
/// the out-of-scope file was written (scope_enforcement is "warn" by default: no deny).
fn the_task_is_the_intents(sb: &Sandbox, hook: &Value, why: &str) {
    assert_eq!(hook["task_id"], "INT-E2E", "{why}");
    assert_eq!(hook["intent_id"], "INT-E2E");
    let touched = hook["current_step"]["files_touched"].to_string() + &hook["steps"].to_string();
    assert!(
        touched.contains("src/greeting/hello.txt") && touched.contains("docs/notes.md"),
        "{why}"
    );
    assert_eq!(sb.read("docs/notes.md"), "E2E-S5 notes\n");
}

/// Checks that both validations were observed and the passing one made a validation
/// checkpoint.
fn both_validations_are_observed(hook: &Value, why: &str) {
    let receipts = hook["receipts"].as_array().unwrap();
    let codes: Vec<i64> = receipts
        .iter()
        .map(|r| r["exit_code"].as_i64().unwrap())
        .collect();
    assert_eq!(codes, [1, 0], "{why}");
    assert!(receipts.iter().all(|r| r["observed"] == true));
    assert!(
        crate::by_trigger(hook, "validation")
            .iter()
            .any(|c| strs(&c["description"]).contains("./check.sh")),
        "{why}"
    );
}

/// ScopeDrift: checks that the out-of-scope Write is flagged to the agent in the next
/// request, the in-scope one is not, and only the in-scope file joined the intent map.
fn the_out_of_scope_write_is_flagged(sb: &Sandbox, main: &[Request], why: &str) {
    let flagged = answer_to(main, 1, why)
        .find_text("PostToolUse:Write hook additional context")
        .unwrap_or_else(|| panic!("no scope warning after the out-of-scope Write\n{why}"));
    assert!(
        flagged.contains("out of scope") && flagged.contains("docs/notes.md"),
        "{flagged}"
    );
    assert!(
        !answer_to(main, 0, why).text().contains("out of scope"),
        "the in-scope Write was flagged\n{why}"
    );
    // The in-scope file joined the intent map (scope expansion).
    let map = sb.read(".orchestration/intent_map.md");
    assert!(
        map.contains("src/greeting/hello.txt"),
        "intent_map.md:\n{map}"
    );
    assert!(!map.contains("docs/notes.md"), "intent_map.md:\n{map}");
}

/// VerificationFailure: checks that the failing check is a lesson in AGENT.md.
fn the_failed_check_is_a_lesson(sb: &Sandbox) {
    let agent = sb.read("AGENT.md");
    assert!(agent.contains("## Lessons Learned"), "AGENT.md:\n{agent}");
    let lesson = &agent[agent.find("## Lessons Learned").unwrap()..];
    for needle in ["### ", "**Issue**", "**Solution**", "./check.sh", "INT-E2E"] {
        assert!(lesson.contains(needle), "lesson lacks {needle:?}:\n{agent}");
    }
}

/// IntentProgress: checks that every criterion met once the check passed made the intent
/// COMPLETED (only that line of the file changed), and that the trace has the transition
/// and the scope warning.
fn the_met_criteria_complete_the_intent(sb: &Sandbox) {
    let yaml = sb.read(".orchestration/active_intents.yaml");
    let expected = INTENTS.replacen("status: IN_PROGRESS", "status: COMPLETED", 1);
    assert_eq!(yaml, expected, "active_intents.yaml");
    let trace = sb.trace();
    assert!(
        trace.iter().any(|r| {
            r["metadata"]["waymark"]["intent_id"] == "INT-E2E"
                && r["metadata"]["waymark"]["transition"]
                    .to_string()
                    .contains("COMPLETED")
        }),
        "no intent transition in the trace: {trace:#?}"
    );
    let warned = trace.iter().any(|r| {
        r["metadata"]["waymark"]["warnings"]
            .to_string()
            .contains("out of scope")
    });
    assert!(warned, "no scope warning in the trace: {trace:#?}");
}
