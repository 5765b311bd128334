//! `waymark report --html`, loaded in a real browser (Debian's `chromium`, headless):
//! the page a user opens, drawn from a real recorded session replayed into a real git
//! repository. Without chromium they install Debian's (as the end-to-end suite installs
//! the CLI it drives) when they run as root with apt-get; elsewhere they fail, saying how
//! to install it.

mod util;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use waymark_core::timeline::html::unescape;

use serde_json::Value;
use util::Project;

/// The browser: `$WAYMARK_CHROMIUM`, else `chromium` (or `chromium-browser`) on PATH,
/// installed first when it is missing and it can be ([`install`]).
fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("WAYMARK_CHROMIUM") {
        return p.into();
    }
    static FOUND: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    let found = FOUND.get_or_init(|| on_path().or_else(|| install().then(on_path).flatten()));
    found.clone().unwrap_or_else(|| {
        panic!(
            "chromium is not installed: the report tests load the page in a real browser \
             (apt-get install -y chromium chromium-driver, or set WAYMARK_CHROMIUM)"
        )
    })
}

fn on_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|p| p.is_file())
}

/// Debian's chromium installed with apt-get, when these tests run as root (a fresh
/// machine of this project's kind); whether it ran.
fn install() -> bool {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
    let apt = |args: &[&str]| {
        Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !root {
        return false;
    }
    eprintln!("report tests: installing chromium (apt-get)");
    apt(&["update", "-qq"]) && apt(&["install", "-y", "-qq", "chromium", "chromium-driver"])
}

/// The page as the browser built it (`--dump-dom`), and the console messages it logged.
fn load(page: &Path) -> (String, Vec<String>) {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run chromium: {e}"));
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium did not finish loading the page in 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    let console = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    assert!(dom.contains("</svg>"), "chromium gave no page: {dom}");
    (dom, console)
}

/// Each point of the chart: its `data-event`, parsed, and its hover text (`<title>`).
fn points(dom: &str) -> Vec<(Value, String)> {
    dom.split("<g class=\"event\"")
        .skip(1)
        .map(|g| {
            let attr = g
                .split("data-event=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            let title = g
                .split("<title>")
                .nth(1)
                .unwrap()
                .split("</title>")
                .next()
                .unwrap();
            (
                serde_json::from_str(&unescape(attr)).unwrap(),
                unescape(title),
            )
        })
        .collect()
}

/// What hovering an event shows, from `waymark log --json`'s entry: its line, its time
/// to the second, its kind, then each detail.
fn hover_of(e: &Value) -> String {
    let time: chrono::DateTime<chrono::Utc> = e["time"].as_str().unwrap().parse().unwrap();
    let mut lines = vec![
        e["what"].as_str().unwrap().to_string(),
        time.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        format!("kind: {}", e["kind"].as_str().unwrap()),
    ];
    for (k, v) in e["details"].as_object().unwrap() {
        let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
        lines.push(format!("{k}: {v}"));
    }
    lines.join("\n")
}

fn report(p: &Project) -> (String, Vec<String>) {
    let page = p.config.path().join("report.html");
    let out = p.run(&["report", "--html", "-o", page.to_str().unwrap()], "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    load(&page)
}

fn log_json(p: &Project) -> Vec<Value> {
    let out = p.run(&["log", "--json"], "");
    assert!(out.status.success());
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// The row of the verification table for `check`.
fn check_row<'a>(dom: &'a str, check: &str) -> &'a str {
    let start = dom.find(&format!("data-check=\"{check}\"")).unwrap();
    &dom[start..start + dom[start..].find("</tr>").unwrap()]
}

#[test]
fn the_report_draws_the_recorded_session_in_a_real_browser() {
    let p = Project::new();
    p.replay_lines(&p.session_lines());
    p.run(&["validate", "--", "sh", "-c", "exit 1"], "");
    p.run(&["validate", "--", "true"], "");
    let (dom, console) = report(&p);
    assert!(console.is_empty(), "console messages: {console:?}");

    // Every point is an event of `waymark log --json`, in its order, and each shows on
    // hover what that entry says.
    let log = log_json(&p);
    let points = points(&dom);
    let events: Vec<&Value> = points.iter().map(|(e, _)| e).collect();
    assert_eq!(events, log.iter().collect::<Vec<_>>());
    for (event, title) in &points {
        assert_eq!(*title, hover_of(event));
    }

    // Every step of the plan has its lane and its row, with the files it changed.
    let hook = p.hook_json();
    for step in hook["steps"].as_array().unwrap() {
        let name = step["name"].as_str().unwrap();
        assert!(
            dom.contains(&format!("data-step=\"{name}\"")),
            "step {name}"
        );
        assert!(dom.contains(&format!(">{name}</text>")), "lane of {name}");
    }
    let row = &dom[dom.find("data-step=\"Implement fix\"").unwrap()..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(
        row.contains("src/parser.rs") && row.contains("src/main.rs"),
        "{row}"
    );
    assert!(row.contains("<td>2</td>"), "two attempts: {row}");

    // Every checkpoint is a point, with its trigger.
    for c in hook["checkpoints"].as_array().unwrap() {
        let point = events
            .iter()
            .find(|e| e["details"]["checkpoint_id"] == c["checkpoint_id"]);
        let point = point.unwrap_or_else(|| panic!("checkpoint {c} is not drawn"));
        assert!(["checkpoint", "compaction"].contains(&point["kind"].as_str().unwrap()));
        assert_eq!(point["details"]["trigger"], c["trigger"]);
    }
    let receipts = events.iter().filter(|e| e["kind"] == "receipt");
    let passed: Vec<&Value> = receipts.map(|e| &e["details"]["passed"]).collect();
    assert_eq!(passed, [&Value::Bool(false), &Value::Bool(true)]);

    // Both verifications hold, as the commands say.
    for check in ["receipts --verify", "trace --verify"] {
        assert!(check_row(&dom, check).contains("holds"), "{check}");
    }
    assert!(check_row(&dom, "receipts --verify").contains("2 receipts: 2 valid"));
}

#[test]
fn a_crash_is_marked_and_a_tampered_receipt_fails_its_verification() {
    let p = Project::new();
    // The recorded session killed after its failed test run (no Stop, no SessionEnd),
    // then a new session: crash detection finds it.
    let lines = p.session_lines();
    p.replay_lines(&lines[..28]);
    let mut start: Value = serde_json::from_str(&lines[0]).unwrap();
    start["session_id"] = "feedbeef-0000-4000-8000-000000000001".into();
    start["source"] = "startup".into();
    p.hook("SessionStart", &start.to_string());
    p.run(&["validate", "--", "true"], "");
    p.edit_receipts(|r| r[0]["exit_code"] = 1.into());
    assert_eq!(p.run(&["receipts", "--verify"], "").status.code(), Some(1));

    let (dom, console) = report(&p);
    assert!(console.is_empty(), "console messages: {console:?}");
    let points = points(&dom);
    let crash = points
        .iter()
        .find(|(e, _)| e["kind"] == "crash")
        .expect("the crash is drawn");
    assert!(
        crash.1.starts_with("session dc5c038f crashed (signal)"),
        "whose crash, and how: {}",
        crash.1
    );
    let starts = points
        .iter()
        .filter(|(e, _)| e["kind"] == "session_started")
        .count();
    assert_eq!(starts, 2, "both sessions");
    assert!(
        dom.contains("stroke=\"#c62828\" stroke-width=\"2\""),
        "a rule across the lanes at the crash"
    );
    let row = check_row(&dom, "receipts --verify");
    assert!(row.contains("FAILED") && row.contains("1 INVALID"), "{row}");
    assert!(check_row(&dom, "trace --verify").contains("holds"));
}

/// Without `-o` the page goes to stdout, the same page; without `--html` the command
/// says which format to ask for (exit 2), and with no task it says so.
#[test]
fn the_page_goes_to_stdout_without_o_and_the_format_must_be_named() {
    let p = Project::new();
    let none = p.run(&["report", "--html"], "");
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("no task"));
    p.replay_lines(&p.session_lines());
    let page = p.config.path().join("r.html");
    assert!(
        p.run(&["report", "--html", "-o", page.to_str().unwrap()], "")
            .status
            .success()
    );
    let out = p.run(&["report", "--html"], "");
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        std::fs::read_to_string(&page).unwrap()
    );
    let bare = p.run(&["report"], "");
    assert_eq!(bare.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bare.stderr).contains("--html"));
}
