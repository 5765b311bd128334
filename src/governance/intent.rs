//! The intents file, `.orchestration/active_intents.yaml`, and the intent chosen with
//! `waymark intent use`: read, and an intent's `status:` line rewritten under the file's
//! lock. What the file says and how a status line is edited are
//! `waymark_core::governance::intent` (re-exported here).

use std::fs;
use std::io;
use std::path::PathBuf;

use crate::store::project::Project;

pub use waymark_core::governance::intent::*;

pub const INTENTS_FILE: &str = "active_intents.yaml";

#[derive(Debug, thiserror::Error)]
pub enum IntentError {
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("{path} is not valid: {message}")]
    Malformed { path: PathBuf, message: String },
}

/// `waymark intent use ID` writes the chosen intent's id here (one line).
pub const CHOSEN_FILE: &str = "active_intent";

/// The intent chosen with `waymark intent use`, if any.
pub fn chosen(project: &Project) -> Option<String> {
    let text = fs::read_to_string(project.state_file(CHOSEN_FILE)).ok()?;
    let id = text.trim();
    (!id.is_empty()).then(|| id.to_string())
}

pub fn intents_path(project: &Project) -> PathBuf {
    project.state_file(INTENTS_FILE)
}

/// Loads the intents. `Ok(None)` when the project has no intents file.
pub fn load(project: &Project) -> Result<Option<IntentFile>, IntentError> {
    let path = intents_path(project);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(IntentError::Io { path, source }),
    };
    parse(&text)
        .map(Some)
        .map_err(|Malformed(message)| IntentError::Malformed { path, message })
}

/// Why an intent's status could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error(transparent)]
    Intent(#[from] IntentError),
    #[error("cannot lock {path}: {message}")]
    Lock { path: PathBuf, message: String },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error(transparent)]
    Edit(#[from] EditError),
}

/// Completes intent `id` if it is in progress: its status becomes the file's completed
/// word ([`IntentFile::completed_word`]). `None` when it is not in progress (or is gone).
pub fn complete(project: &Project, id: &str) -> Result<Option<Change>, StatusError> {
    set_status(project, id, |file, intent| {
        intent
            .is_in_progress()
            .then(|| file.completed_word(&intent.status))
    })
}

/// Sets intent `id`'s status ([`edit_status`]) under the file's lock, so two hooks that see
/// the criteria met at once make one transition. `None` when `to` left it, or the intent is
/// gone.
pub fn set_status(
    project: &Project,
    id: &str,
    to: impl FnOnce(&IntentFile, &Intent) -> Option<String>,
) -> Result<Option<Change>, StatusError> {
    let path = intents_path(project);
    let _lock = crate::store::FileLock::acquire(&path).map_err(|e| StatusError::Lock {
        path: path.clone(),
        message: e.to_string(),
    })?;
    let text = fs::read_to_string(&path).map_err(|source| IntentError::Io {
        path: path.clone(),
        source,
    })?;
    let edited = edit_status(&text, id, to).map_err(|e| match e {
        EditError::Malformed(Malformed(message)) => StatusError::Intent(IntentError::Malformed {
            path: path.clone(),
            message,
        }),
        e => StatusError::Edit(e),
    })?;
    let Some((new_text, change)) = edited else {
        return Ok(None);
    };
    crate::store::write_verbatim(&path, new_text.as_bytes())
        .map_err(|source| StatusError::Write { path, source })?;
    Ok(Some(change))
}

#[cfg(test)]
mod tests {
    use super::*;
    use waymark_core::governance::testing::SAMPLE_INTENTS as SAMPLE;

    fn project_with(text: &str) -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::at(dir.path().to_path_buf());
        let path = intents_path(&project);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        (dir, project)
    }

    #[test]
    fn complete_under_lock_once() {
        let (_dir, project) = project_with(SAMPLE);
        let change = complete(&project, "INT-001").unwrap().unwrap();
        assert_eq!(
            change,
            Change {
                from: "IN_PROGRESS".into(),
                to: "COMPLETED".into()
            }
        );
        assert_eq!(
            fs::read_to_string(intents_path(&project)).unwrap(),
            SAMPLE.replace("\"IN_PROGRESS\"", "\"COMPLETED\"")
        );
        assert_eq!(complete(&project, "INT-001").unwrap(), None);
        assert_eq!(complete(&project, "INT-002").unwrap(), None);
        assert_eq!(complete(&project, "nope").unwrap(), None);
    }

    #[test]
    fn a_rewrite_that_would_change_more_is_refused() {
        // B's status is an alias of A's: rewriting A's line would change B's too (or break
        // it); the re-parse catches it and the file stays as it was.
        let text = "- id: A\n  status: &s in_progress\n- id: B\n  status: *s\n";
        let (_dir, project) = project_with(text);
        assert!(matches!(
            complete(&project, "A"),
            Err(StatusError::Edit(EditError::Unsafe(_)))
        ));
        assert_eq!(fs::read_to_string(intents_path(&project)).unwrap(), text);
    }

    /// The intent fixtures: (file, the intent in progress, its name, intents in the file,
    /// completed word in the file's spelling).
    const SHAPES: [(&str, &str, &str, usize, &str); 10] = [
        (
            "01-forks-quoted.yaml",
            "INT-001",
            "JWT Authentication Migration",
            2,
            "COMPLETED",
        ),
        (
            "02-top-level-list.yaml",
            "AUTH-2",
            "Session expiry",
            2,
            "DONE",
        ),
        (
            "03-lowercase.yaml",
            "feat-search",
            "Full-text search",
            3,
            "completed",
        ),
        (
            "04-title.yaml",
            "I-10",
            "Migrate the CLI to clap 4",
            2,
            "completed",
        ),
        (
            "05-status-history.yaml",
            "INT-7",
            "Nil-safe parser",
            2,
            "COMPLETED",
        ),
        (
            "06-comments-flow.yaml",
            "ST-1",
            "Write-ahead log",
            2,
            "COMPLETED",
        ),
        ("07-numeric-ids.yaml", "2", "Billing page", 3, "Done"),
        (
            "08-single-string.yaml",
            "PARSE-2",
            "Streaming parser",
            2,
            "completed",
        ),
        (
            "09-mixed-case.yaml",
            "UX-4",
            "Keyboard shortcuts",
            2,
            "Completed",
        ),
        (
            "10-extra-top-level.yaml",
            "LS-3",
            "Idempotent payments API",
            2,
            "COMPLETED",
        ),
    ];

    /// Ten shapes of intent file as projects write them: each parses, its one intent in
    /// progress is found, and completing it changes only that intent's status line, in the
    /// file's own spelling.
    #[test]
    fn real_world_shapes_parse_and_complete_in_their_own_convention() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/intents");
        let mut seen = 0;
        for (name, id, title, count, word) in SHAPES {
            let text = fs::read_to_string(format!("{dir}/{name}")).unwrap();
            let status = shape_parses(name, &text, id, title, count);
            shape_completes(name, &text, id, &status, word);
            seen += 1;
        }
        assert_eq!(
            seen,
            fs::read_dir(dir).unwrap().count(),
            "every fixture is tested"
        );
    }

    /// Checks that fixture `name` parses with `count` intents, one running, `id` (named
    /// `title`, with a scope) the active one; returns that intent's status as written.
    fn shape_parses(name: &str, text: &str, id: &str, title: &str, count: usize) -> String {
        let file = parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(file.active_intents.len(), count, "{name}");
        assert_eq!(file.running().count(), 1, "{name}");
        let active = file.active(None, None).unwrap();
        assert_eq!(
            (active.id.as_str(), active.name.as_str()),
            (id, title),
            "{name}"
        );
        assert!(!active.owned_scope.is_empty(), "{name}");
        active.status.clone()
    }

    /// Checks that completing `id` in fixture `name` rewrites only its status line, from
    /// `status` to `word`, and that the result parses as completed and completes no more.
    fn shape_completes(name: &str, text: &str, id: &str, status: &str, word: &str) {
        let (_tmp, project) = project_with(text);
        let change = complete(&project, id)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .unwrap_or_else(|| panic!("{name}: not completed"));
        assert_eq!(change.from, status, "{name}");
        assert_eq!(change.to, word, "{name}");
        let after = fs::read_to_string(intents_path(&project)).unwrap();
        let (old, new): (Vec<_>, Vec<_>) = (
            text.split_inclusive('\n').collect(),
            after.split_inclusive('\n').collect(),
        );
        assert_eq!(old.len(), new.len(), "{name}");
        let changed: Vec<_> = (0..old.len()).filter(|&n| old[n] != new[n]).collect();
        assert_eq!(changed.len(), 1, "{name}: {after}");
        let n = changed[0];
        assert!(
            old[n].trim_start().starts_with("status:"),
            "{name}: {}",
            old[n]
        );
        assert_eq!(new[n], old[n].replacen(&change.from, word, 1), "{name}");
        let reparsed = parse(&after).unwrap();
        assert_eq!(
            reparsed.get(id).unwrap().state(),
            Status::Completed,
            "{name}"
        );
        assert_eq!(complete(&project, id).unwrap(), None, "{name}");
    }

    #[test]
    fn shapes_in_detail() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/intents");
        let read =
            |name: &str| parse(&fs::read_to_string(format!("{dir}/{name}")).unwrap()).unwrap();
        // A single string is a one-element list.
        let f = read("08-single-string.yaml");
        let i = f.get("PARSE-2").unwrap();
        assert_eq!(i.owned_scope, ["src/parser/**"]);
        assert_eq!(i.constraints, ["no new dependencies"]);
        assert_eq!(i.acceptance_criteria, ["test result: ok"]);
        assert_eq!(i.steps, ["write the tokenizer"]);
        assert_eq!(
            f.get("PARSE-3").unwrap().owned_scope,
            ["src/parser/recover.rs"]
        );
        // status_history is kept, as written.
        let f = read("05-status-history.yaml");
        let h = &f.get("INT-7").unwrap().extra["status_history"];
        assert_eq!(h[1]["status"], "IN_PROGRESS");
        assert_eq!(
            f.get("INT-8").unwrap().extra["status_history"][0],
            "PENDING 2026-01-02"
        );
        // Flow lists and comments.
        let f = read("06-comments-flow.yaml");
        let i = f.get("ST-1").unwrap();
        assert_eq!(i.owned_scope, ["src/wal/**", "src/storage/mod.rs"]);
        assert_eq!(i.constraints, ["no unsafe", "keep the on-disk format"]);
        assert_eq!(i.acceptance_criteria[1], r"re:\d+ passed");
        // `title:` names the intent and is kept.
        let f = read("04-title.yaml");
        assert_eq!(f.get("I-11").unwrap().name, "Man page");
        assert_eq!(f.get("I-11").unwrap().extra["title"], "Man page");
        // Numeric ids are text.
        assert_eq!(read("07-numeric-ids.yaml").active_intents[0].id, "1");
    }
}
