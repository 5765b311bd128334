//! Everything waymark asks of git.
//!
//! - [`head`]: the commit HEAD points at, read from `.git` itself (no process);
//! - [`status`]: lines changed since a commit;
//! - [`hooks`]: the post-commit and pre-push wrappers `waymark git-hooks` installs;
//! - [`project_tree`]: the project's files as a tree id, for receipts and `waymark verify`;
//! - [`trailers`]: the proof a commit made during a task carries (`commit_trailers`);
//! - [`snapshot`]: the work tree saved as a commit per checkpoint, diffed and rewound;
//! - [`rewind`]: putting files back as a snapshot had them, by a journaled plan;
//! - [`tree_path`]: a path from a snapshot's tree, as bytes, checked safe to write;
//! - [`in_the_way`]: what a rewind's plan meets in the work tree, looked at before it starts.
//!
//! The rule of this room: [`command`] is the one place a `git` process is made (git found on
//! `PATH` once, `crate::runtime::program::git`), and only checkpoint captures and commands call it,
//! so an ordinary event never pays for one.

pub mod head;
pub mod hooks;
pub mod in_the_way;
pub mod project_tree;
pub mod rewind;
pub mod snapshot;
pub mod status;
mod temp_index;
pub mod trailers;
pub mod tree_path;

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};

pub use head::head_revision;
pub use status::diff_stat;

/// `git -C root`, taking no optional lock (a `git status` of ours must not make the
/// user's own git command fail on `index.lock`), stdin and stderr closed.
pub fn command(root: &Path) -> Command {
    let mut c = Command::new(crate::runtime::program::git());
    c.arg("-C")
        .arg(root)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    c
}

/// The pathspec of the project's files: the root's subtree minus waymark's own (the state
/// directory and the lessons file), which no diff counts and no rewind touches.
pub fn project_files(lessons: &str) -> Vec<String> {
    vec![
        ".".into(),
        format!(":(exclude){}", crate::store::project::STATE_DIR),
        format!(":(exclude){lessons}"),
    ]
}

/// Runs `git -C root args…` and returns trimmed stdout when it succeeds.
pub fn run<S: AsRef<OsStr>>(root: &Path, args: impl IntoIterator<Item = S>) -> Option<String> {
    let out = command(root).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim_end().to_string())
}

/// Runs `git -C root args…` with `input` on its stdin (written from a thread, so that a
/// large input and output cannot block each other) and returns its stdout when it
/// succeeds.
pub fn with_input(root: &Path, args: &[&str], input: Vec<u8>) -> Option<String> {
    let out = fed(command(root).args(args), input)?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs `git` as `c` says with `input` on its stdin, written from a thread so that a large
/// input and git's output cannot block each other; its output, whatever its exit.
pub fn fed(c: &mut std::process::Command, input: Vec<u8>) -> Option<std::process::Output> {
    use std::io::Write;
    let c = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().ok()?;
    let mut stdin = child.stdin.take()?;
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().ok();
    let _ = writer.join();
    out
}

#[cfg(test)]
pub(crate) use tests::test_git;

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// `git -C dir args…` for the tests of this room, through [`run`](super::run),
    /// asserting it succeeds: its stdout, trimmed.
    pub(crate) fn test_git(dir: &Path, args: &[&str]) -> String {
        super::run(dir, args).unwrap_or_else(|| panic!("git {args:?}"))
    }
}
