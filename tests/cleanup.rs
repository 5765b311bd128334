//! `waymark cleanup [--dry-run] [--json]` (docs/design.md, Retention) over task directories
//! made by the real binary (`task start` / `task done|fail|abandon`), then aged.

use std::fs;
use std::path::PathBuf;

use assert_cmd::Command;
use chrono::{Duration, Utc};
use predicates::str::contains;
use serde_json::Value;
use tempfile::TempDir;

struct Project {
    dir: TempDir,
}

impl Project {
    fn new() -> Project {
        let p = Project {
            dir: tempfile::tempdir().unwrap(),
        };
        fs::create_dir_all(p.root()).unwrap();
        fs::create_dir_all(p.dir.path().join("xdg")).unwrap();
        p
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    fn tasks(&self) -> PathBuf {
        self.root().join(".orchestration/tasks")
    }

    fn waymark(&self) -> Command {
        let mut c = Command::cargo_bin("waymark").unwrap();
        c.current_dir(self.root())
            .env("CLAUDE_PROJECT_DIR", self.root())
            .env("XDG_CONFIG_HOME", self.dir.path().join("xdg"));
        for (k, _) in std::env::vars() {
            if k.starts_with("WAYMARK_") {
                c.env_remove(k);
            }
        }
        c
    }

    /// A task run to `end` (done / fail / abandon), as waymark archives it.
    fn finished(&self, id: &str, end: &str) {
        self.waymark()
            .args(["task", "start", "--id", id])
            .assert()
            .success();
        self.waymark().args(["task", end]).assert().success();
        assert!(self.tasks().join(id).join("hook.json").exists());
    }

    /// Sets the archived hook.json's `updated_at` to `days` ago (`None` removes it).
    fn age(&self, id: &str, days: Option<i64>) {
        let path = self.tasks().join(id).join("hook.json");
        let mut v: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        match days {
            Some(d) => {
                v["updated_at"] = Value::from((Utc::now() - Duration::days(d)).to_rfc3339());
            }
            None => {
                v.as_object_mut().unwrap().remove("updated_at");
            }
        }
        fs::write(&path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    }

    fn exists(&self, id: &str) -> bool {
        self.tasks().join(id).exists()
    }

    fn cleanup(&self, args: &[&str]) -> (String, String) {
        let out = self.waymark().arg("cleanup").args(args).assert().success();
        let o = out.get_output();
        (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }
}

fn line_for<'a>(out: &'a str, dir: &str) -> &'a str {
    let needle = format!("tasks/{dir}:");
    out.lines()
        .find(|l| l.contains(&needle))
        .unwrap_or_else(|| panic!("no line for {dir} in:\n{out}"))
}

/// The mix of the retention scenarios (docs/design.md, Retention) plus everything that
/// must survive.
fn populated() -> (Project, TempDir) {
    let p = Project::new();
    p.finished("done-31d", "done");
    p.age("done-31d", Some(31));
    p.finished("done-29d", "done");
    p.age("done-29d", Some(29));
    p.finished("abandoned-8d", "abandon");
    p.age("abandoned-8d", Some(8));
    p.finished("abandoned-6d", "abandon");
    p.age("abandoned-6d", Some(6));
    p.finished("failed-8d", "fail");
    p.age("failed-8d", Some(8));
    // A task finished long ago whose id is reused by the task running now (intent ids
    // repeat): its directory is the current task's and must stay.
    p.finished("INT-1", "done");
    p.age("INT-1", Some(400));
    p.waymark()
        .args(["task", "start", "--id", "INT-1", "--step", "a"])
        .assert()
        .success();
    // A corrupt one, and a symlink to a finished task outside the project.
    fs::create_dir_all(p.tasks().join("corrupt")).unwrap();
    fs::write(p.tasks().join("corrupt/hook.json"), "{ torn").unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(
        outside.path().join("hook.json"),
        format!(
            r#"{{"task_id":"elsewhere","state":"completed","updated_at":"{}","schema_version":"1.0"}}"#,
            (Utc::now() - Duration::days(400)).to_rfc3339()
        ),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path(), p.tasks().join("linked")).unwrap();
    (p, outside)
}

#[test]
fn dry_run_lists_without_removing_then_cleanup_removes_only_expired_finished_tasks() {
    let (p, outside) = populated();

    let (out, err) = p.cleanup(&["--dry-run"]);
    for gone in ["done-31d", "abandoned-8d", "failed-8d"] {
        assert!(
            line_for(&out, gone).starts_with("would remove"),
            "{gone}: {out}"
        );
        assert!(p.exists(gone), "dry run removed {gone}");
    }
    assert!(line_for(&out, "done-31d").contains("past its retention of 720h"));
    assert!(out.contains("Dry run: 3 would be removed, 5 kept; nothing was removed."));
    assert!(err.contains("tasks/linked: a symlink"), "{err}");

    let (out, _) = p.cleanup(&[]);
    for gone in ["done-31d", "abandoned-8d", "failed-8d"] {
        assert!(line_for(&out, gone).starts_with("removed"), "{out}");
        assert!(!p.exists(gone), "{gone} should be gone");
    }
    for kept in ["done-29d", "abandoned-6d", "INT-1", "corrupt", "linked"] {
        assert!(line_for(&out, kept).starts_with("kept"), "{out}");
        assert!(p.exists(kept), "{kept} should stay");
    }
    assert!(line_for(&out, "done-29d").contains("within its retention of 720h"));
    assert!(line_for(&out, "abandoned-6d").contains("within its retention of 168h"));
    assert!(line_for(&out, "INT-1").contains("the current task"));
    assert!(line_for(&out, "corrupt").contains("unreadable hook.json"));
    assert!(line_for(&out, "linked").contains("symlink"));
    assert!(out.contains("3 removed, 5 kept."));
    // What the symlink pointed at is untouched, and the running task is intact.
    assert!(outside.path().join("hook.json").exists());
    assert!(p.tasks().join("INT-1/hook.json").exists());
    p.waymark()
        .arg("status")
        .assert()
        .success()
        .stdout(contains("INT-1"));

    let (out, _) = p.cleanup(&[]);
    assert!(out.contains("0 removed, 5 kept."), "{out}");
}

#[test]
fn json_reports_each_decision() {
    let (p, _outside) = populated();
    let (out, _) = p.cleanup(&["--dry-run", "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["dry_run"], true);
    assert_eq!(v["would_remove"], 3);
    assert_eq!(v["removed"], 0);
    assert_eq!(v["kept"], 5);
    assert_eq!(v["retention"]["abandoned"], "168h");
    let tasks = v["tasks"].as_array().unwrap();
    let t = |d: &str| tasks.iter().find(|t| t["dir"] == d).unwrap().clone();
    let old = t("abandoned-8d");
    assert_eq!(old["action"], "remove");
    assert_eq!(old["state"], "abandoned");
    assert_eq!(old["age_from"], "updated_at");
    assert_eq!(old["retention_seconds"], 168 * 3600);
    assert!(old["age_seconds"].as_u64().unwrap() >= 8 * 86_400);
    assert_eq!(t("INT-1")["action"], "keep");
    assert!(p.exists("abandoned-8d"));
}

#[test]
fn without_updated_at_the_directory_mtime_decides() {
    let p = Project::new();
    p.finished("old", "abandon");
    p.age("old", None);
    p.finished("new", "abandon");
    p.age("new", None);
    let dir = p.tasks().join("old");
    let ok = std::process::Command::new("touch")
        .args(["-d", "10 days ago"])
        .arg(&dir)
        .status()
        .unwrap();
    assert!(ok.success());
    let (out, _) = p.cleanup(&["--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let old = &v["tasks"][1];
    assert_eq!(old["dir"], "old");
    assert_eq!(old["age_from"], "dir_mtime");
    assert!(!p.exists("old"));
    assert!(p.exists("new"));
}

#[test]
fn configured_retention_is_used_and_a_bad_one_removes_nothing() {
    let p = Project::new();
    p.finished("two-hours", "done");
    let path = p.tasks().join("two-hours/hook.json");
    let mut v: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    v["updated_at"] = Value::from((Utc::now() - Duration::hours(2)).to_rfc3339());
    fs::write(&path, v.to_string()).unwrap();

    p.waymark()
        .arg("cleanup")
        .env("WAYMARK_RETENTION_COMPLETED", "soon")
        .assert()
        .code(2)
        .stderr(contains("retention.completed"));
    assert!(p.exists("two-hours"));

    let (out, _) = p.cleanup(&[]);
    assert!(out.contains("0 removed, 1 kept."), "{out}");

    fs::write(
        p.root().join(".orchestration/waymark.json"),
        r#"{"retention": {"completed": "1h"}}"#,
    )
    .unwrap();
    let (out, _) = p.cleanup(&[]);
    assert!(line_for(&out, "two-hours").contains("past its retention of 1h"));
    assert!(!p.exists("two-hours"));
}

#[test]
fn nothing_to_do_and_an_unknown_current_task() {
    let p = Project::new();
    let (out, _) = p.cleanup(&[]);
    assert!(out.contains("0 removed, 0 kept."), "{out}");

    p.finished("done-31d", "done");
    p.age("done-31d", Some(31));
    // hook.json and its .bak both unreadable: which task is current cannot be told.
    let orch = p.root().join(".orchestration");
    fs::write(orch.join("hook.json"), "{ torn").unwrap();
    fs::write(orch.join("hook.json.bak"), "also torn").unwrap();
    p.waymark()
        .arg("cleanup")
        .assert()
        .code(1)
        .stderr(contains("cannot tell which task is current"));
    assert!(p.exists("done-31d"));
}

#[test]
fn a_symlinked_tasks_dir_is_not_followed() {
    let p = Project::new();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("old");
    fs::create_dir_all(&victim).unwrap();
    fs::write(
        victim.join("hook.json"),
        r#"{"task_id":"old","state":"completed","updated_at":"2000-01-01T00:00:00Z"}"#,
    )
    .unwrap();
    fs::create_dir_all(p.root().join(".orchestration")).unwrap();
    std::os::unix::fs::symlink(outside.path(), p.tasks()).unwrap();
    p.waymark()
        .arg("cleanup")
        .assert()
        .code(1)
        .stderr(contains("is a symlink"));
    assert!(victim.join("hook.json").exists());
}
