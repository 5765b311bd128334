//! How much the work tree changed since a commit, for the brief.

use std::path::Path;

/// What changed in the work tree against a commit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiffStat {
    /// Files changed, new ones included.
    pub files: usize,
    pub added: u64,
    pub deleted: u64,
    /// New files (untracked), whose lines are counted as added.
    pub new: usize,
}

impl DiffStat {
    /// `nothing`, or `2 files, +12/−3 lines (1 new)`.
    pub fn describe(&self) -> String {
        if self.files == 0 {
            return waymark_core::task::NOTHING_CHANGED.into();
        }
        let new = match self.new {
            0 => String::new(),
            n => format!(" ({n} new)"),
        };
        format!(
            "{}, +{}/−{} lines{new}",
            waymark_core::text::count(self.files as u64, "file"),
            self.added,
            self.deleted
        )
    }
}

/// The set-up files `waymark init` writes and Claude Code keeps its grants in: the agent's
/// configuration, not its work, so the count of what changed leaves them out (a rewind
/// still restores them: only the count skips them).
const SETUP_FILES: [&str; 4] = {
    use crate::store::project::{
        CLAUDE_LOCAL_SETTINGS, CLAUDE_SETTINGS, CODEX_HOOKS, GIT_ATTRIBUTES,
    };
    [
        CLAUDE_SETTINGS,
        CLAUDE_LOCAL_SETTINGS,
        CODEX_HOOKS,
        GIT_ATTRIBUTES,
    ]
};

/// A new file larger than this is counted as changed, its lines not read.
const MAX_NEW_FILE: u64 = 1 << 20;

/// Lines added and deleted in the work tree against `since` (a commit; HEAD when none),
/// and files changed, waymark's own files (the state directory, the lessons file
/// `lessons`) left out. New (untracked) files count with all their lines: git's diff
/// leaves them out, and a new file is most of what a step writes.
pub fn diff_stat(root: &Path, since: Option<&str>, lessons: &str) -> Option<DiffStat> {
    let base = since.unwrap_or("HEAD");
    let with_files = |args: &[&str]| work_files(args, lessons);
    // The two walks of the work tree run at once (a crash's SessionStart waits for both).
    // On two cores or fewer the diff's preload threads only take the other walk's core
    // (10,000 files: 13.5 ms for both against 9.1 ms without them, BENCHMARKS.md).
    let preload = if few_cores() {
        "core.preloadIndex=false"
    } else {
        "core.preloadIndex=true"
    };
    let diff = started(
        root,
        with_files(&["-c", preload, "diff", "--numstat", base, "--"]),
    );
    let others = ["ls-files", "--others", "--exclude-standard", "--"];
    let untracked = started(root, with_files(&others));
    let out = finished(diff)?;
    let untracked = finished(untracked).unwrap_or_default();
    let mut d = DiffStat::default();
    for line in out.lines() {
        let mut parts = line.split('\t');
        let mut num = || {
            parts
                .next()
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or(0)
        };
        d.added += num();
        d.deleted += num();
        d.files += 1;
    }
    for rel in untracked.lines() {
        d.files += 1;
        d.new += 1;
        d.added += lines_of(&root.join(rel));
    }
    Some(d)
}

/// The files the work tree changed against `since` (a commit; HEAD when none), new ones
/// included, root-relative, waymark's own and the set-up files left out: what an agent
/// changed with no hook telling (Codex CLI's Stop reads it). `None` outside git.
pub fn changed_files(root: &Path, since: Option<&str>, lessons: &str) -> Option<Vec<String>> {
    let base = since.unwrap_or("HEAD");
    let with_files = |args: &[&str]| work_files(args, lessons);
    // `-z`: names as they are, not C-quoted (`"\303\251.rs"` for `é.rs`).
    let diff = started(root, with_files(&["diff", "--name-only", "-z", base, "--"]));
    let others = ["ls-files", "--others", "--exclude-standard", "-z", "--"];
    let untracked = started(root, with_files(&others));
    let names = |out: String| -> Vec<String> {
        out.split('\0')
            .filter(|f| !f.is_empty())
            .map(str::to_string)
            .collect()
    };
    let mut files = names(finished(diff)?);
    files.extend(names(finished(untracked).unwrap_or_default()));
    Some(files)
}

/// `args` then the pathspec of the work: the project's files less waymark's own and the
/// set-up files.
fn work_files(args: &[&str], lessons: &str) -> Vec<String> {
    let setup = SETUP_FILES.iter().map(|f| format!(":(exclude){f}"));
    args.iter()
        .map(|a| a.to_string())
        .chain(super::project_files(lessons))
        .chain(setup)
        .collect()
}

/// Whether this machine has two cores or fewer for this process.
fn few_cores() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() <= 2)
}

/// `git -C root args…` started, its output piped.
fn started(root: &Path, args: impl IntoIterator<Item = String>) -> Option<std::process::Child> {
    let mut c = super::command(root);
    c.args(args).stdout(std::process::Stdio::piped());
    c.spawn().ok()
}

/// The output of a git [`started`], when it succeeded.
fn finished(child: Option<std::process::Child>) -> Option<String> {
    let out = child?.wait_with_output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim_end().to_string())
}

/// The lines of a new text file (0 for a binary or very large one, or one not readable).
fn lines_of(path: &Path) -> u64 {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() && m.len() <= MAX_NEW_FILE => {}
        _ => return 0,
    }
    let Ok(bytes) = std::fs::read(path) else {
        return 0;
    };
    if bytes.contains(&0) {
        return 0;
    }
    let newlines = waymark_core::text::newlines(&bytes).count() as u64;
    newlines + u64::from(!bytes.is_empty() && !bytes.ends_with(b"\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::test_git as git;

    #[test]
    fn lines_changed_in_a_real_repo() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main"]);
        git(d, &["config", "user.email", "t@example.com"]);
        git(d, &["config", "user.name", "t"]);
        std::fs::write(d.join("a.txt"), "a\n").unwrap();
        git(d, &["add", "a.txt"]);
        git(d, &["commit", "-qm", "one"]);
        // waymark's own state does not count, nor the set-up `waymark init` writes.
        std::fs::create_dir_all(d.join(".orchestration")).unwrap();
        std::fs::write(d.join(".orchestration/hook.json"), "{}").unwrap();
        std::fs::create_dir_all(d.join(".claude")).unwrap();
        std::fs::create_dir_all(d.join(".codex")).unwrap();
        for f in SETUP_FILES {
            std::fs::write(d.join(f), "{\"hooks\": {}}\n").unwrap();
        }
        assert_eq!(
            diff_stat(d, None, "AGENT.md").unwrap().describe(),
            "nothing"
        );
        std::fs::write(d.join("a.txt"), "a\nb\n").unwrap();
        let one = DiffStat {
            files: 1,
            added: 1,
            deleted: 0,
            new: 0,
        };
        assert_eq!(diff_stat(d, None, "AGENT.md"), Some(one));
        // A new file counts with its lines (git's diff leaves it out): 4 lines, the last
        // without its newline.
        std::fs::write(d.join("new.rs"), "fn a() {}\nfn b() {}\n\nfn c() {}").unwrap();
        let d2 = diff_stat(d, None, "AGENT.md").unwrap();
        assert_eq!((d2.files, d2.added, d2.new), (2, 5, 1));
        assert_eq!(d2.describe(), "2 files, +5/−0 lines (1 new)");
        // The same files by name, for Codex CLI's Stop.
        let names = changed_files(d, None, "AGENT.md").unwrap();
        assert_eq!(names, ["a.txt", "new.rs"]);
        // As they are, not C-quoted.
        std::fs::write(d.join("é.rs"), "x\n").unwrap();
        let names = changed_files(d, None, "AGENT.md").unwrap();
        assert_eq!(names, ["a.txt", "new.rs", "é.rs"]);
    }
}
