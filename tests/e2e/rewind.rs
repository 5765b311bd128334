//! Rewind after a real session (issue 16): a step's work checkpointed when its task
//! completes, a second session that rewrites a file with Write, edits another with a Bash
//! `sed -i` and adds a third; `waymark rewind` puts the project back as the checkpoint had
//! it, and the next session's brief says so.

use std::fs;

use serde_json::json;

use crate::by_trigger;
use crate::fake_api::{FakeApi, Turn};
use crate::harness::{Binary, Sandbox, Version, cli};

on_each_version!(rewind_after_a_real_session_restores_the_files_and_the_next_brief_says_so);

fn rewind_after_a_real_session_restores_the_files_and_the_next_brief_says_so(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = Sandbox::new("rewind", Binary::Built, version);
    let mut script = sb.plan(&["Write the greeting"]);
    script.extend([
        sb.start_step(1),
        Turn::tool(
            "Write",
            json!({"file_path": sb.path("src/greet.txt"), "content": "hello\n"}),
        ),
        Turn::tool(
            "Write",
            json!({"file_path": sb.path("src/names.txt"), "content": "ada\ngrace\n"}),
        ),
        sb.finish_step(1),
        Turn::text("E2E-RW1 done"),
    ]);
    let api = FakeApi::start(script);
    sb.run_ok(&api, &["-p", "E2E-RW1 write the greeting"], "E2E-RW1 done");
    let hook = sb.hook_json();
    let done = by_trigger(&hook, "step_complete");
    let last = done
        .last()
        .unwrap_or_else(|| panic!("{}", sb.diagnose(&api)));
    let capture = sb.capture(&hook, last);
    assert!(capture["snapshot"].is_string(), "{capture}");
    let checkpoint = last["checkpoint_id"].as_str().unwrap().to_string();

    let api = FakeApi::start(vec![
        Turn::tool(
            "Write",
            json!({"file_path": sb.path("src/greet.txt"), "content": "hello, wandering\n"}),
        ),
        Turn::tool(
            "Bash",
            json!({"command": "sed -i s/grace/linus/ src/names.txt && echo stray > src/stray.txt", "description": "e2e"}),
        ),
        Turn::text("E2E-RW2 done"),
    ]);
    sb.run_ok(
        &api,
        &["-p", "E2E-RW2 wander", "--continue"],
        "E2E-RW2 done",
    );
    assert_eq!(
        sb.read("src/names.txt"),
        "ada\nlinus\n",
        "the Bash tool ran"
    );

    let out = sb.waymark(&["rewind", &checkpoint]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(sb.read("src/greet.txt"), "hello\n");
    assert_eq!(sb.read("src/names.txt"), "ada\ngrace\n");
    assert!(!sb.project.join("src/stray.txt").exists(), "{said}");

    let api = FakeApi::start(vec![Turn::text("E2E-RW3 done")]);
    sb.run_ok(&api, &["-p", "E2E-RW3 go on"], "E2E-RW3 done");
    let request = &api.main_requests()[0];
    let brief = request
        .find_text("Resume brief")
        .unwrap_or_else(|| panic!("no brief\n{}", sb.diagnose(&api)));
    assert!(
        brief.contains("FILES REWOUND") && brief.contains(&checkpoint),
        "{brief}"
    );
    assert!(
        fs::read_to_string(sb.project.join(".orchestration/HOOK.md"))
            .unwrap()
            .contains("FILES REWOUND")
    );
}
