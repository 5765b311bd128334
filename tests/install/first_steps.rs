//! A new user's first commands, as the README's first steps run them: `replay` shows what
//! the agent is told and where to look next, `init` in a directory that is no project
//! writes nothing there, and a mistyped checkpoint is called that.

use crate::outside;
use crate::util::{self, Project};

#[test]
fn replay_prints_the_briefs_as_the_agent_reads_them_and_ends_with_what_to_open() {
    let p = Project::new();
    let out = p.replay_lines(&p.session_lines());
    assert!(!out.contains("hookSpecificOutput"), "no JSON: {out}");
    // The resume brief, line by line, under the event that gave it.
    let resume = out.split("SessionStart (resume): the agent reads\n").nth(1);
    let brief: Vec<&str> = resume
        .unwrap_or_default()
        .lines()
        .take_while(|l| l.starts_with("     │ "))
        .collect();
    assert!(
        brief[0].contains("Resume brief for task") && brief.len() > 5,
        "{out}"
    );
    assert!(
        brief
            .iter()
            .any(|l| l.contains("DO NOT REPEAT (completed):")),
        "{brief:#?}"
    );
    let hook_md = p.path(".orchestration/HOOK.md");
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with(&format!("Open {}: ", hook_md.display())),
        "{last}"
    );
    assert!(hook_md.is_file());
    assert_eq!(util::replayed_events(&out).len(), 35);
}

#[test]
fn init_outside_a_project_refuses_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let out = outside(dir.path(), home.path())
        .arg("init")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not in a project")
            && err.contains("nothing was written")
            && err.contains("--root DIR"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    // --user registers the hooks for every project, and makes no project of this one.
    let out = outside(dir.path(), home.path())
        .args(["init", "--user"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(home.path().join(".claude/settings.json").is_file());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    // Named with --root, the directory is the project asked for.
    let out = outside(dir.path(), home.path())
        .args(["init", "--root", "."])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(dir.path().join(".orchestration").is_dir());
    assert!(dir.path().join(".claude/settings.json").is_file());
}

#[test]
fn a_checkpoint_that_does_not_exist_is_called_that() {
    let p = Project::new();
    p.run(&["task", "start", "--id", "T"], "");
    for command in ["diff", "rewind"] {
        let out = p.run(&[command, "ckpt-nope"], "");
        assert_eq!(out.status.code(), Some(2), "{command}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("there is no checkpoint ckpt-nope")
                && err.contains("`waymark checkpoints` lists them"),
            "{command}: {err}"
        );
    }

    // One that exists but has no snapshot (taken where there is no git) is told apart.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".orchestration")).unwrap();
    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        outside(dir.path(), home.path())
            .args(args)
            .output()
            .unwrap()
    };
    run(&["task", "start", "--id", "T"]);
    let made = run(&["checkpoint", "no git here"]);
    let said = String::from_utf8_lossy(&made.stdout);
    let id = said.split_whitespace().nth(2).unwrap();
    assert!(id.starts_with("ckpt-"), "{said}");
    let out = run(&["diff", id]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("no snapshot of checkpoint {id}")),
        "{err}"
    );
}
