//! What a shell command is, for checkpoints and receipts: a git commit, a push, a pull
//! request, a validation. Pure text matching on the command and its output.

use std::sync::OnceLock;

use regex::{Regex, RegexSet};

use crate::config::DEFAULT_VALIDATION_COMMANDS;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kinds {
    pub git_commit: bool,
    pub git_push: bool,
    pub pr_create: bool,
    pub validation: bool,
}

/// `waymark validate …` (also by path, or with `--root DIR`): it makes its own signed
/// receipt, so the Bash call that ran it is not a second, observed validation.
fn is_waymark_validate(command: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    command.contains("validate")
        && RE
            .get_or_init(|| {
                Regex::new(r"(^|[;&|(\s/])waymark(\s+--root(\s+|=)\S+)?\s+validate(\s|$)").unwrap()
            })
            .is_match(command)
}

/// `git commit`, `git push` and `gh pr create`, with the words every match contains.
const VCS: [(&str, &[&str]); 3] = [
    // `git commit`, also `git -C dir commit`, not `git commit-tree` nor `--dry-run`.
    (
        r"(^|[;&|(\s])git(\s+-[cC]\s+\S+|\s+--\S+)*\s+commit(\s|$)",
        &["git", "commit"],
    ),
    (
        r"(^|[;&|(\s])git(\s+-[cC]\s+\S+|\s+--\S+)*\s+push(\s|$)",
        &["git", "push"],
    ),
    (
        r"(^|[;&|(\s])gh\s+pr\s+create(\s|$)",
        &["gh", "pr", "create"],
    ),
];

/// Whether `command` matches VCS pattern `i`. The pattern is compiled on first need, and
/// only for a command holding all its words: most commands never pay for it.
fn vcs_match(i: usize, command: &str) -> bool {
    static RE: [OnceLock<Regex>; 3] = [const { OnceLock::new() }; 3];
    let (pattern, words) = VCS[i];
    words.iter().all(|w| command.contains(w))
        && RE[i]
            .get_or_init(|| Regex::new(pattern).unwrap())
            .is_match(command)
}

fn classify_vcs(command: &str) -> Kinds {
    Kinds {
        git_commit: vcs_match(0, command) && !command.contains("--dry-run"),
        git_push: vcs_match(1, command) && !command.contains("--dry-run"),
        pr_create: vcs_match(2, command),
        validation: false,
    }
}

/// Classifies `command` against the configured validation patterns, compiling only those
/// that can match: a default pattern is skipped when the command lacks every word it needs.
/// Compiling the whole set costs more than all the rest of a Bash event, and most commands
/// match none.
pub fn classify(command: &str, patterns: &[String]) -> Kinds {
    let candidates: Vec<&String> = patterns
        .iter()
        .filter(|p| needed_words(p).is_none_or(|words| words.iter().any(|w| command.contains(w))))
        .collect();
    Kinds {
        validation: !candidates.is_empty()
            && RegexSet::new(&candidates).is_ok_and(|set| set.is_match(command))
            && !is_waymark_validate(command),
        ..classify_vcs(command)
    }
}

/// For a default validation pattern, words one of which every command it matches contains;
/// `None` for any other pattern (always compiled).
fn needed_words(pattern: &str) -> Option<&'static [&'static str]> {
    const NEEDS: [&[&str]; DEFAULT_VALIDATION_COMMANDS.len()] = [
        &["cargo"],
        &["npm", "yarn", "bun"],
        &["npx"],
        &["pytest", "py.test", "tox", "nox"],
        &["python"],
        &["go"],
        &["make"],
        &["mvn", "gradle"],
        &["rspec", "phpunit", "ctest", "dotnet", "mix", "swift"],
    ];
    DEFAULT_VALIDATION_COMMANDS
        .iter()
        .position(|d| *d == pattern)
        .map(|i| NEEDS[i])
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

    fn patterns() -> Vec<String> {
        Config::default().validation_commands
    }

    /// The reference: every pattern compiled, no prefilter.
    fn full(command: &str, patterns: &[String]) -> Kinds {
        Kinds {
            validation: RegexSet::new(patterns).unwrap().is_match(command)
                && !is_waymark_validate(command),
            ..classify_vcs(command)
        }
    }

    #[test]
    fn recognizes_vcs_commands() {
        let k = classify(
            r#"git add -A && git commit -qm "Add nil-safe parser" && git log -1 --format=%H"#,
            &patterns(),
        );
        assert!(k.git_commit && !k.git_push && !k.validation);
        assert!(classify("git -C sub push origin main", &patterns()).git_push);
        assert!(classify("gh pr create --fill", &patterns()).pr_create);
        assert!(!classify("git commit-tree abc", &patterns()).git_commit);
        assert!(!classify("git log --grep commit", &patterns()).git_commit);
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
            assert!(classify(c, &patterns()).validation, "{c}");
        }
        let patterns = Config::default().validation_commands;
        for c in [
            "cargo build",
            "ls",
            "echo test",
            "waymark validate -- cargo test",
            "./bin/waymark --root /p validate --step x -- pytest",
        ] {
            assert!(!classify(c, &patterns).validation, "{c}");
        }
    }

    #[test]
    fn the_prefilter_skips_only_patterns_that_cannot_match() {
        let mut patterns = Config::default().validation_commands;
        patterns.push(r"^just\s+ci$".into());
        for c in [
            "cargo test",
            "cargo +nightly clippy --all-targets",
            "cargo build",
            "pnpm run test",
            "yarn test",
            "bun test",
            "npx vitest run",
            "py.test -x",
            "tox -e py312",
            "python3 -m pytest",
            "go vet ./...",
            "make check",
            "./gradlew check",
            "mvn verify",
            "dotnet test",
            "mix test",
            "swift test",
            "ctest --output-on-failure",
            "just ci",
            "echo hi > b.txt && echo bash-ok",
            "git add -A && git commit -qm 'x' && git push",
            "gh pr create --fill",
        ] {
            assert_eq!(classify(c, &patterns), full(c, &patterns), "{c}");
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
