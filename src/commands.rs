//! What a shell command is, for checkpoints and receipts: a git commit, a push, a pull
//! request, a validation. Pure text matching on the command and its output.

use std::sync::OnceLock;

use regex::{Regex, RegexSet};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kinds {
    pub git_commit: bool,
    pub git_push: bool,
    pub pr_create: bool,
    pub validation: bool,
}

/// `waymark validate …` (also by path, or with `--root DIR`): it makes its own signed
/// receipt, so the Bash call that ran it is not a second, observed validation.
fn waymark_validate() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(^|[;&|(\s/])waymark(\s+--root(\s+|=)\S+)?\s+validate(\s|$)").unwrap()
    })
}

fn vcs() -> &'static [Regex; 3] {
    static RE: OnceLock<[Regex; 3]> = OnceLock::new();
    RE.get_or_init(|| {
        [
            // `git commit`, also `git -C dir commit`, not `git commit-tree` nor `--dry-run`.
            Regex::new(r"(^|[;&|(\s])git(\s+-[cC]\s+\S+|\s+--\S+)*\s+commit(\s|$)").unwrap(),
            Regex::new(r"(^|[;&|(\s])git(\s+-[cC]\s+\S+|\s+--\S+)*\s+push(\s|$)").unwrap(),
            Regex::new(r"(^|[;&|(\s])gh\s+pr\s+create(\s|$)").unwrap(),
        ]
    })
}

/// Classifies `command`. `validation` is a compiled set of the configured patterns.
pub fn classify(command: &str, validation: &RegexSet) -> Kinds {
    let [commit, push, pr] = vcs();
    Kinds {
        git_commit: commit.is_match(command) && !command.contains("--dry-run"),
        git_push: push.is_match(command) && !command.contains("--dry-run"),
        pr_create: pr.is_match(command),
        validation: validation.is_match(command) && !waymark_validate().is_match(command),
    }
}

/// Compiles the validation patterns; bad ones were rejected by the config already.
pub fn validation_set(patterns: &[String]) -> RegexSet {
    RegexSet::new(patterns).unwrap_or_else(|_| RegexSet::empty())
}

/// The commit hash a `git commit` printed (`[main 1a2b3c4] msg`) or a bare hash line.
pub fn commit_hash(output: &str) -> Option<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"(?m)^\[[^\]\s]+(?: \([^)]*\))? ([0-9a-f]{7,40})\]|(?m)^([0-9a-f]{40})$")
            .unwrap()
    });
    let c = re.captures(output)?;
    c.get(1)
        .or_else(|| c.get(2))
        .map(|m| m.as_str().to_string())
}

/// The commit message of `git commit -m "…"`, when given inline.
pub fn commit_message(command: &str) -> Option<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r#"-[a-zA-Z]*m\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+))"#).unwrap()
    });
    let c = re.captures(command)?;
    c.get(1)
        .or_else(|| c.get(2))
        .or_else(|| c.get(3))
        .map(|m| m.as_str().to_string())
}

/// The pull-request URL `gh pr create` printed.
pub fn pr_url(output: &str) -> Option<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"https?://\S+/pull/\d+").unwrap());
    re.find(output).map(|m| m.as_str().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn set() -> RegexSet {
        validation_set(&Config::default().validation_commands)
    }

    #[test]
    fn recognizes_vcs_commands() {
        let k = classify(
            r#"git add -A && git commit -qm "Add nil-safe parser" && git log -1 --format=%H"#,
            &set(),
        );
        assert!(k.git_commit && !k.git_push && !k.validation);
        assert!(classify("git -C sub push origin main", &set()).git_push);
        assert!(classify("gh pr create --fill", &set()).pr_create);
        assert!(!classify("git commit-tree abc", &set()).git_commit);
        assert!(!classify("git log --grep commit", &set()).git_commit);
    }

    #[test]
    fn recognizes_validations() {
        for c in [
            "cargo test",
            "cargo nextest run",
            "npm test",
            "pnpm run test",
            "pytest -q",
            "go test ./...",
            "make check",
        ] {
            assert!(classify(c, &set()).validation, "{c}");
        }
        for c in [
            "cargo build",
            "ls",
            "echo test",
            "waymark validate -- cargo test",
            "./bin/waymark --root /p validate --step x -- pytest",
        ] {
            assert!(!classify(c, &set()).validation, "{c}");
        }
    }

    #[test]
    fn extracts_hash_message_and_url() {
        assert_eq!(
            commit_hash("67f3bab02076607f95987e07638b7343fa2445b3")
                .unwrap()
                .len(),
            40
        );
        assert_eq!(
            commit_hash("[main 1a2b3c4] fix\n 1 file changed").as_deref(),
            Some("1a2b3c4")
        );
        assert_eq!(
            commit_hash("[main (root-commit) 1a2b3c4] first").as_deref(),
            Some("1a2b3c4")
        );
        assert_eq!(
            commit_message(r#"git commit -qm "Add nil-safe parser""#).as_deref(),
            Some("Add nil-safe parser")
        );
        assert_eq!(
            pr_url("Creating pull request\nhttps://github.com/o/r/pull/12\n").as_deref(),
            Some("https://github.com/o/r/pull/12")
        );
    }
}
