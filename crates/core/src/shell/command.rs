//! What a simple command runs, the same for classifying it and for knowing what it writes:
//! the shells that run a script they are handed, and how deep such scripts are followed.

use super::lex::Word;

/// The shells whose `-c` script (or here-document) is read as the commands it holds.
pub(super) const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh"];

/// How deep scripts run by scripts (`bash -c`, `$(…)`, `xargs sh -c`) are followed: the
/// text bounds them, but a crafted one could make reading it cost a lot.
pub(super) const DEPTH: usize = 8;

/// The scripts a shell is given by its arguments `args` (after its name): the `-c` script
/// (`bash -lc`, `sh -o pipefail -c`), else its here-documents. A script file (`bash
/// build.sh`) is a program of its own, not read.
pub(super) fn shell_scripts(args: &[Word], heredocs: &[String]) -> Vec<String> {
    let mut it = args.iter();
    let mut command = false;
    while let Some(w) = it.next() {
        match w.text.strip_prefix('-') {
            Some("o" | "O") => _ = it.next(),
            Some(o) if !o.starts_with('-') && o.contains('c') => command = true,
            Some(_) => {}
            None if command => return vec![w.text.clone()],
            None => return Vec::new(),
        }
    }
    heredocs.to_vec()
}
