//! The files a patch in Codex CLI's format names (`*** Begin Patch` …), read as Codex's
//! own parser reads them (codex-rs/apply-patch, `parser.rs`, read for issue 50): a file
//! header (`*** Add File: `, `*** Update File: `, `*** Delete File: `) is matched on the
//! line trimmed at both ends, its path is what follows the marker as it is; `*** Move to: `
//! is matched at the line's start only. One reader for the `apply_patch` tool's input and
//! for `apply_patch <<'EOF' … EOF` run from the shell, whose files deny mode judges.
//!
//! Codex reads headers only where a hunk may start; every line is read here, so a header
//! quoted in a context line is judged too: deny mode errs towards asking.

/// What a patch does to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchOp {
    Add,
    Update,
    Delete,
    /// The new path of an updated file (`*** Move to:` under its `*** Update File:`).
    MoveTo,
}

/// The files a patch's headers name, in order, as written (relative to where it is
/// applied).
pub fn files(patch: &str) -> Vec<(String, PatchOp)> {
    const HEADERS: [(&str, PatchOp); 3] = [
        ("*** Add File: ", PatchOp::Add),
        ("*** Update File: ", PatchOp::Update),
        ("*** Delete File: ", PatchOp::Delete),
    ];
    const MOVE_TO: &str = "*** Move to: ";
    patch
        .lines()
        .filter_map(|line| {
            let header = HEADERS
                .iter()
                .find_map(|(prefix, op)| Some((line.trim().strip_prefix(prefix)?, *op)));
            let moved = || Some((line.strip_prefix(MOVE_TO)?, PatchOp::MoveTo));
            header.or_else(moved)
        })
        .filter(|(path, _)| !path.trim().is_empty())
        .map(|(path, op)| (path.to_string(), op))
        .collect()
}

/// The patch `apply_patch` is handed on the command line, as Codex takes it from a shell
/// script (`apply_patch <<'EOF' … EOF`, `cd dir && apply_patch <<EOF …`): the program
/// `apply_patch` (or `applypatch`) with its here-document, or its one argument.
pub fn of_command(words: &[String], heredocs: &[String]) -> Option<String> {
    let name = words.first()?.rsplit('/').next()?;
    if !matches!(name, "apply_patch" | "applypatch") {
        return None;
    }
    heredocs.first().cloned().or_else(|| words.get(1).cloned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_read_as_codex_reads_them() {
        let patch = "*** Begin Patch\n   *** Add File: docs/x.md  \n+hi\n*** Update File: src/a.rs\n*** Move to: src/b.rs\n@@\n-x\n+y\n\t*** Delete File: gone.txt\n *** Move to: not/a/move\n*** Add File:  spaced\n*** End Patch\n";
        assert_eq!(
            files(patch),
            [
                ("docs/x.md".to_string(), PatchOp::Add),
                ("src/a.rs".into(), PatchOp::Update),
                ("src/b.rs".into(), PatchOp::MoveTo),
                ("gone.txt".into(), PatchOp::Delete),
                (" spaced".into(), PatchOp::Add),
            ]
        );
    }

    #[test]
    fn apply_patch_is_read_from_its_here_document_or_argument() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let doc = vec!["*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n".to_string()];
        assert_eq!(
            of_command(&words(&["apply_patch"]), &doc),
            Some(doc[0].clone())
        );
        assert_eq!(
            of_command(&words(&["/usr/bin/applypatch", "PATCH"]), &[]),
            Some("PATCH".into())
        );
        assert_eq!(of_command(&words(&["cat"]), &doc), None);
    }
}
