//! Scenario 3: manual `/compact` and automatic compaction (the API answers "prompt is too
//! long") both checkpoint before compacting and give the resume brief after.

use serde_json::json;

use crate::fake_api::{FakeApi, Request, SUMMARY_MARKER, Turn};
use crate::harness::{Binary, Sandbox, Version, cli};
use crate::{by_trigger, strs};

/// A session that plans two steps, starts the first and writes a file.
fn working_session(sb: &Sandbox, tag: &str) -> Vec<Turn> {
    let mut turns = sb.plan(&["Refactor the module", "Document the module"]);
    turns.extend([
        sb.start_step(1),
        Turn::tool(
            "Write",
            json!({"file_path": sb.path("module.txt"), "content": format!("{tag} module\n")}),
        ),
    ]);
    turns
}

/// The brief SessionStart(compact) gave, as it reached the model in `request`.
fn compact_brief(request: &Request, why: &str) -> String {
    let brief = request
        .find_text("— session compact")
        .unwrap_or_else(|| panic!("no post-compaction brief in the request\n{why}"));
    assert!(
        brief.contains("SessionStart hook additional context"),
        "{brief}"
    );
    brief
}

on_each_version!(
    manual_compact_checkpoints_and_gives_the_brief,
    automatic_compaction_checkpoints_and_gives_the_brief,
);

fn manual_compact_checkpoints_and_gives_the_brief(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = Sandbox::new("compact", Binary::Built, version);
    let mut script = working_session(&sb, "E2E-S3M");
    script.push(Turn::text("E2E-S3M-FIRST"));
    let api = FakeApi::start(script);
    sb.run_ok(&api, &["-p", "E2E-S3M refactor"], "E2E-S3M-FIRST");
    assert!(by_trigger(&sb.hook_json(), "pre_compact").is_empty());

    // `/compact` in -p mode: SessionStart(resume) → PreCompact(manual) →
    // SessionStart(compact) → PostCompact → SessionEnd; the only API call is the summary.
    let api = FakeApi::start(vec![]);
    let run = sb.run(&api, &["-p", "/compact", "--continue"]);
    let why = sb.diagnose(&api);
    assert!(run.status.success(), "{run:?}\n{why}");
    assert!(
        api.requests().iter().any(|r| r.answered == "compaction"),
        "no summary was asked for\n{why}"
    );
    let hook = sb.hook_json();
    let pre = by_trigger(&hook, "pre_compact");
    assert_eq!(pre.len(), 1, "{why}");
    assert_eq!(pre[0]["description"], "Before manual compaction");
    assert_eq!(pre[0]["step_name"], "Refactor the module");
    assert_eq!(hook["state"], "step_running", "compaction is no crash");
    // PostCompact kept Claude Code's summary for the recovery file.
    assert!(
        strs(&hook["compact_summary"]).contains(SUMMARY_MARKER),
        "{why}"
    );

    // The next turn of the compacted conversation carries the post-compaction brief.
    let api = FakeApi::start(vec![Turn::text("E2E-S3M-AFTER")]);
    sb.run_ok(
        &api,
        &["-p", "E2E-S3M go on", "--continue"],
        "E2E-S3M-AFTER",
    );
    let why = sb.diagnose(&api);
    let first = &api.main_requests()[0];
    assert!(first.text().contains(SUMMARY_MARKER), "{why}");
    let brief = compact_brief(first, &why);
    for needle in [
        "Resume brief",
        "Resumed from checkpoint: Before manual compaction (pre_compact",
        "\"Refactor the module\", attempt 1",
        "module.txt",
        "Then: \"Document the module\"",
    ] {
        assert!(brief.contains(needle), "brief lacks {needle:?}:\n{brief}");
    }
}

fn automatic_compaction_checkpoints_and_gives_the_brief(version: Version) {
    if cli(version).is_none() {
        return;
    }
    let sb = Sandbox::new("autocompact", Binary::Built, version);
    let mut script = working_session(&sb, "E2E-S3A");
    let too_long = format!("turn {}", script.len());
    let retry = format!("turn {}", script.len() + 1);
    // The request after the Write is refused as too long: Claude Code compacts (PreCompact
    // auto, a summary request, SessionStart compact) and retries.
    script.push(Turn::TooLong);
    script.push(Turn::text("E2E-S3A-DONE"));
    let api = FakeApi::start(script);
    sb.run_ok(&api, &["-p", "E2E-S3A refactor"], "E2E-S3A-DONE");
    let why = sb.diagnose(&api);

    let answered: Vec<String> = api.requests().into_iter().map(|r| r.answered).collect();
    let too_long = answered.iter().position(|a| *a == too_long).unwrap();
    let summary = answered.iter().position(|a| a == "compaction");
    assert!(
        summary.is_some_and(|s| s > too_long),
        "no compaction after the 400: {answered:?}"
    );
    let hook = sb.hook_json();
    let pre = by_trigger(&hook, "pre_compact");
    assert_eq!(pre.len(), 1, "{why}");
    assert_eq!(pre[0]["description"], "Before auto compaction");
    assert_eq!(
        sb.capture(&hook, pre[0])["files"][0]["path"],
        "module.txt",
        "{why}"
    );
    assert!(strs(&hook["compact_summary"]).contains(SUMMARY_MARKER));

    // The retried request is the compacted conversation, with the brief.
    let retried = api
        .requests()
        .into_iter()
        .find(|r| r.answered == retry)
        .expect("the retried request");
    assert!(retried.text().contains(SUMMARY_MARKER), "{why}");
    let brief = compact_brief(&retried, &why);
    for needle in [
        "Resumed from checkpoint: Before auto compaction (pre_compact",
        "\"Refactor the module\", attempt 1",
        "module.txt",
    ] {
        assert!(brief.contains(needle), "brief lacks {needle:?}:\n{brief}");
    }
}
