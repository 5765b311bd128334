//! How much the work tree changed since a commit, for the brief.

use std::path::Path;

use crate::store::project::{CLAUDE_LOCAL_SETTINGS, CLAUDE_SETTINGS, CODEX_HOOKS, GIT_ATTRIBUTES};

/// What changed in the work tree against a commit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiffStat {
    /// Files changed, new ones included.
    pub files: usize,
    pub added: u64,
    pub deleted: u64,
    /// New files (untracked), whose lines are counted as added.
    pub new: usize,
    /// The files changed, root-relative, the changed ones first.
    pub names: Vec<String>,
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
        let files = waymark_core::text::count(self.files as u64, "file");
        let (added, deleted) = (self.added, self.deleted);
        format!("{files}, +{added}/−{deleted} lines{new}")
    }
}

/// The set-up files `waymark init` writes and Claude Code keeps its grants in: the agent's
/// configuration, not its work, so the count of what changed leaves them out (a rewind
/// still restores them: only the count skips them).
const SETUP_FILES: [&str; 4] = [
    CLAUDE_SETTINGS,
    CLAUDE_LOCAL_SETTINGS,
    CODEX_HOOKS,
    GIT_ATTRIBUTES,
];

/// A new file larger than this is counted as changed, its lines not read.
const MAX_NEW_FILE: u64 = 1 << 20;

/// Lines added and deleted in the work tree against `since` (a commit; HEAD when none),
/// and files changed, waymark's own files (the state directory, the lessons file
/// `lessons`) left out. New (untracked) files count with all their lines: git's diff
/// leaves them out, and a new file is most of what a step writes.
pub fn diff_stat(root: &Path, since: Option<&str>, lessons: &str) -> Option<DiffStat> {
    let c = changes(root, since, lessons)?;
    let mut d = DiffStat::default();
    for (lines, name) in c.tracked {
        let (added, deleted) = lines.unwrap_or((0, 0));
        d.added += added;
        d.deleted += deleted;
        d.files += 1;
        d.names.push(name);
    }
    for rel in c.untracked {
        d.files += 1;
        d.new += 1;
        d.added += lines_of(&root.join(&rel));
        d.names.push(rel);
    }
    Some(d)
}

/// The files the work tree changed against `since` (a commit; HEAD when none), new ones
/// included, root-relative, waymark's own and the set-up files left out: what an agent
/// changed with no hook telling (Codex CLI's Stop reads it). `None` outside git.
pub fn changed_files(root: &Path, since: Option<&str>, lessons: &str) -> Option<Vec<String>> {
    let c = changes(root, since, lessons)?;
    let tracked = c.tracked.into_iter().map(|(_, name)| name);
    Some(tracked.chain(c.untracked).collect())
}

/// Of `files` (changed against the checkpoint's commit), those whose content differs
/// from the checkpoint's snapshot `snapshot` (a commit of the work tree as it was): what
/// the steps before the checkpoint left uncommitted is not this step's. All of `files`
/// when the snapshot cannot be read.
pub fn changed_since_snapshot(root: &Path, snapshot: &str, files: Vec<String>) -> Vec<String> {
    if files.is_empty() {
        return files;
    }
    // ls-tree takes its paths literally (no pathspec magic).
    let args = ["ls-tree", "-r", "-z", snapshot, "--"].map(String::from);
    let listed = finished(started(root, args.into_iter().chain(files.iter().cloned())));
    let Some(listed) = listed else {
        return files;
    };
    // `<mode> blob <id>\t<path>`
    let then: std::collections::HashMap<&str, &str> = entries(&listed)
        .filter_map(|e| {
            let (meta, path) = e.split_once('\t')?;
            Some((path, meta.rsplit(' ').next()?))
        })
        .collect();
    let present: Vec<&String> = files.iter().filter(|f| root.join(f).is_file()).collect();
    let Some(ids) = hashes(root, &present) else {
        return files;
    };
    let now: std::collections::HashMap<&str, &str> = present
        .iter()
        .map(|f| f.as_str())
        .zip(ids.lines())
        .collect();
    let changed = |f: &&String| then.get(f.as_str()) != now.get(f.as_str());
    files.iter().filter(changed).cloned().collect()
}

/// The blob ids `git add` would give `files`, one a line, in order.
fn hashes(root: &Path, files: &[&String]) -> Option<String> {
    let list: String = files.iter().map(|f| format!("{f}\n")).collect();
    super::with_input(root, &["hash-object", "--stdin-paths"], list.into_bytes())
}

/// What the work tree changed against a commit, the walk both answers read.
struct Changes {
    /// Tracked files whose content or mode differs, with their lines added and deleted
    /// (`None` for a binary file).
    tracked: Vec<(Option<(u64, u64)>, String)>,
    /// New (untracked, not ignored) files.
    untracked: Vec<String>,
}

/// The two walks of the work tree, at once (a crash's SessionStart waits for both):
/// `diff-index --numstat`, which reads each changed file against the commit and so
/// leaves out a file only touched, and `ls-files --others`. Not the porcelain `git diff`:
/// it costs more at once, and walks the tree a second time whenever a file's stat
/// differs from the index but its content does not (one rewritten with the same bytes,
/// one written in the second its index was): 10,000 files, 16.5 ms against 19.8, and
/// 25.6 without git's preload threads, which help on 2 cores too (BENCHMARKS.md, run 43).
/// `-z`: names as they are, not C-quoted. No rename detection: a file renamed counts as
/// one deleted and one added, as a file moved without git (`mv`) does.
fn changes(root: &Path, since: Option<&str>, lessons: &str) -> Option<Changes> {
    let base = since.unwrap_or("HEAD");
    // `args` then the pathspec of the work: the project's files less waymark's own and the
    // set-up files.
    let with_files = |args: &[&str]| -> Vec<String> {
        let setup = SETUP_FILES.iter().map(|f| format!(":(exclude){f}"));
        let args = args.iter().map(|a| a.to_string());
        args.chain(super::project_files(lessons))
            .chain(setup)
            .collect()
    };
    let numstat = ["diff-index", "--numstat", "-z", base, "--"];
    let diff = started(root, with_files(&numstat));
    let others = ["ls-files", "--others", "--exclude-standard", "-z", "--"];
    let untracked = started(root, with_files(&others));
    let diff = finished(diff)?;
    let untracked = finished(untracked).unwrap_or_default();
    let tracked = entries(&diff)
        .filter_map(|entry| {
            let mut parts = entry.splitn(3, '\t');
            let (added, deleted) = (parts.next()?, parts.next()?);
            let lines = added.parse().ok().zip(deleted.parse().ok());
            Some((lines, parts.next()?.to_string()))
        })
        .collect();
    let untracked = entries(&untracked).map(str::to_string).collect();
    Some(Changes { tracked, untracked })
}

/// The names of a `-z` listing.
fn entries(out: &str) -> impl Iterator<Item = &str> {
    out.split('\0').filter(|e| !e.is_empty())
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
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The lines of a new text file (0 for a binary or very large one, or one not readable).
fn lines_of(path: &Path) -> u64 {
    let small = |m: std::fs::Metadata| m.is_file() && m.len() <= MAX_NEW_FILE;
    let bytes = match std::fs::symlink_metadata(path).is_ok_and(small) {
        true => std::fs::read(path).unwrap_or_default(),
        false => return 0,
    };
    let newlines = waymark_core::text::newlines(&bytes).count() as u64;
    newlines + u64::from(!bytes.is_empty() && !bytes.ends_with(b"\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::test_git as git;

    /// A repository whose one commit holds `files` (name, content).
    fn committed(files: &[(&str, &[u8])]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main"]);
        git(d, &["config", "user.email", "t@example.com"]);
        git(d, &["config", "user.name", "t"]);
        for (name, content) in files {
            std::fs::write(d.join(name), content).unwrap();
        }
        git(d, &["add", "."]);
        git(d, &["commit", "-qm", "one"]);
        dir
    }

    #[test]
    fn lines_changed_in_a_real_repo() {
        let dir = committed(&[("a.txt", b"a\n")]);
        let d = dir.path();
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
            names: vec!["a.txt".into()],
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

    /// Against a checkpoint's snapshot (the work tree as a commit): what was already so
    /// at the snapshot, committed or not, is not counted; a file changed, made or deleted
    /// since is; a snapshot that cannot be read leaves the list as it is.
    #[test]
    fn against_a_snapshot_only_what_changed_since_it_counts() {
        let dir = committed(&[("a.txt", b"a\n"), ("gone.txt", b"g\n")]);
        let d = dir.path();
        std::fs::write(d.join("earlier.txt"), "an earlier step's\n").unwrap();
        std::fs::write(d.join("a.txt"), "a\nearlier\n").unwrap();
        // The work tree whole as a commit, as a checkpoint's snapshot is.
        git(d, &["add", "-A"]);
        let tree = git(d, &["write-tree"]);
        git(d, &["reset", "-q"]);
        let snapshot = git(d, &["commit-tree", &tree, "-m", "snapshot"]);
        std::fs::write(d.join("new.txt"), "this step's\n").unwrap();
        std::fs::remove_file(d.join("gone.txt")).unwrap();
        let all = changed_files(d, None, "AGENT.md").unwrap();
        assert_eq!(all, ["a.txt", "gone.txt", "earlier.txt", "new.txt"]);
        let since = changed_since_snapshot(d, &snapshot, all.clone());
        assert_eq!(since, ["gone.txt", "new.txt"]);
        std::fs::write(d.join("earlier.txt"), "changed again\n").unwrap();
        let since = changed_since_snapshot(d, &snapshot, all.clone());
        assert_eq!(since, ["gone.txt", "earlier.txt", "new.txt"]);
        assert_eq!(changed_since_snapshot(d, "refs/none", all.clone()), all);
    }

    /// Against a checkpoint's commit: what the step changed before it is not counted
    /// again, though the index still differs; a file only touched is no change; a binary
    /// file is one file with no lines.
    #[test]
    fn against_a_checkpoint_only_what_changed_since_counts() {
        let dir = committed(&[("a.txt", b"a\n"), ("b.txt", b"b\n"), ("blob.bin", b"\0one")]);
        let d = dir.path();
        // The step's work, then the checkpoint: the work tree as a commit.
        std::fs::write(d.join("a.txt"), "a\nstep\n").unwrap();
        let checkpoint = git(d, &["stash", "create"]);
        let since = Some(checkpoint.as_str());
        assert_eq!(
            diff_stat(d, since, "AGENT.md").unwrap().describe(),
            "nothing"
        );
        // Touched, its bytes the same: still nothing.
        let b = std::fs::File::options()
            .append(true)
            .open(d.join("b.txt"))
            .unwrap();
        b.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
            .unwrap();
        assert_eq!(
            changed_files(d, since, "AGENT.md").unwrap(),
            [] as [&str; 0]
        );
        // A line changed since the checkpoint, and a binary file changed.
        std::fs::write(d.join("a.txt"), "a\nmore\n").unwrap();
        std::fs::write(d.join("blob.bin"), b"\0two").unwrap();
        let two = DiffStat {
            files: 2,
            added: 1,
            deleted: 1,
            new: 0,
            names: vec!["a.txt".into(), "blob.bin".into()],
        };
        assert_eq!(diff_stat(d, since, "AGENT.md"), Some(two));
        assert_eq!(
            changed_files(d, since, "AGENT.md").unwrap(),
            ["a.txt", "blob.bin"]
        );
    }
}
