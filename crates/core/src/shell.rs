//! What a shell command is, for checkpoints and receipts: a git commit, a push, a pull
//! request, a validation; and what its output says (the commit's hash, the PR's URL).
//!
//! Pure text work, and no regex compiled for it: compiling the patterns cost a Bash event
//! more than everything else it does. A command is read by [`lex`], the one reading of the
//! shell's language here, as simple commands of words, and each rule is a sequence of
//! words. Only the patterns a user configured
//! (`validation_commands` beyond the defaults, `side_effect_commands`) are regexes, and
//! they are compiled only for Bash events.

use regex::RegexSet;

mod args;
mod command;
mod editors;
mod lex;
pub mod patch;
mod writers;
pub mod writes;

use crate::config::DEFAULT_VALIDATION_COMMANDS;
use command::command_word;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kinds {
    pub git_commit: bool,
    pub git_push: bool,
    pub pr_create: bool,
    pub validation: bool,
    /// Effects outside the work tree that must not be done twice: a push, a pull request
    /// or a release, a publish, and what `side_effect_commands` names (a deploy).
    pub side_effect: bool,
    /// Why the command was not read whole (too long, or nested too deep): what it runs
    /// past that point is not classified. The caller logs it.
    pub unread: Option<String>,
    /// It runs waymark and nothing else (`waymark step done 3`, after a `cd`): the agent
    /// keeping its plan, which is no work of the step's.
    pub waymark: bool,
}

/// `s` as one shell word: single-quoted, a `'` inside written `'\''`.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The first word of a command line as written (quotes kept, for a shell to read again):
/// up to the first white space outside quotes.
pub fn first_word(command: &str) -> &str {
    let c = command.trim_start();
    let mut quote = None;
    let mut escaped = false;
    for (i, ch) in c.char_indices() {
        match (quote, ch) {
            _ if escaped => escaped = false,
            (None | Some('"'), '\\') => escaped = true,
            (None, '\'' | '"') => quote = Some(ch),
            (Some(q), _) if ch == q => quote = None,
            (None, _) if ch.is_whitespace() => return &c[..i],
            _ => {}
        }
    }
    c
}

/// The simple commands of a command line, each as its words (quotes removed, redirections
/// left out), as [`lex::read`] reads them. A script handed to a shell (`bash -c "git
/// commit -m x"`) and those in `$(…)` and backquotes are read as the commands they hold.
pub fn simple_commands(command: &str) -> Vec<Vec<String>> {
    read_commands(command).0
}

/// [`simple_commands`], and why some of the line was not read, if it was not read whole:
/// it is too long, or nests too deep ([`lex::NESTING`], [`command::DEPTH`]).
pub fn read_commands(command: &str) -> (Vec<Vec<String>>, Option<String>) {
    let mut out = Vec::new();
    let mut unread = None;
    gather(command, command::DEPTH, &mut out, &mut unread);
    (out, unread)
}

fn gather(command: &str, depth: usize, out: &mut Vec<Vec<String>>, unread: &mut Option<String>) {
    let Some(depth) = depth.checked_sub(1) else {
        unread.get_or_insert_with(|| {
            format!(
                "its scripts run scripts deeper than {} levels",
                command::DEPTH
            )
        });
        return;
    };
    let line = lex::read(command);
    if let Some(why) = &line.unread {
        unread.get_or_insert_with(|| why.to_string());
    }
    for item in line.items {
        let lex::Item::Command(simple) = item else {
            continue;
        };
        let words: Vec<String> = simple.words.iter().map(|w| w.text.clone()).collect();
        if words.is_empty() {
            continue;
        }
        let read = command::read(&words);
        let at = read.at;
        let scripts = if let Some((script, _)) = read.script {
            vec![script]
        } else if command::SHELLS.iter().any(|s| is(&words[at], s)) {
            command::shell_scripts(&simple.words[at + 1..], &simple.heredocs)
        } else {
            Vec::new()
        };
        if scripts.is_empty() {
            out.push(words);
        }
        for script in scripts {
            gather(&script, depth, out, unread);
        }
    }
    // A line not read whole is not read again inside: what is there is unread already,
    // and each reading would cost the whole nesting again.
    if line.unread.is_none() {
        for script in line.inner {
            gather(&script, depth, out, unread);
        }
    }
}

/// True when `word` is `name`, or a path to it (`/usr/bin/git`, `./gradlew`).
fn is(word: &str, name: &str) -> bool {
    word == name || word.strip_suffix(name).is_some_and(|p| p.ends_with('/'))
}

/// What a simple command that runs `gh pr` does with pull requests (`create`, `list`, …).
fn gh_pr_subcommand(words: &[String]) -> Option<&str> {
    let t = &words[command_word(words)..];
    (t.len() >= 3 && is(&t[0], "gh") && t[1] == "pr").then(|| t[2].as_str())
}

/// The git subcommand of a simple command that runs git (`git -C dir --no-pager commit`
/// → `commit`): the first word after `git` and its global options.
fn git_subcommand(words: &[String]) -> Option<&str> {
    let start = command_word(words);
    if !is(words.get(start)?, "git") {
        return None;
    }
    let mut rest = words[start + 1..].iter();
    while let Some(w) = rest.next() {
        match w.as_str() {
            "-c" | "-C" => {
                rest.next();
            }
            w if w.starts_with("--") => {}
            w => return Some(w),
        }
    }
    None
}

/// `waymark validate …` (also by path, or with `--root DIR`): it makes its own signed
/// receipt, so the Bash call that ran it is not a second, observed validation.
fn runs_waymark_validate(words: &[String]) -> bool {
    let start = command_word(words);
    if !words.get(start).is_some_and(|w| is(w, "waymark")) {
        return false;
    }
    let mut rest = words[start + 1..].iter().map(String::as_str);
    loop {
        match rest.next() {
            Some("--root") => {
                rest.next();
            }
            Some(w) if w.starts_with("--root=") => {}
            Some(w) => return w == "validate",
            None => return false,
        }
    }
}

/// Classifies `command`: the version-control commands that make checkpoints, and whether it
/// is a validation (`patterns`: the configured `validation_commands`).
pub fn classify(command: &str, patterns: &[String], side_effects: &[String]) -> Kinds {
    let (commands, unread) = read_commands(command);
    let dry_run = command.contains("--dry-run");
    let sub = |name: &str| commands.iter().any(|w| git_subcommand(w) == Some(name));
    let gh_pr_create = commands
        .iter()
        .any(|w| gh_pr_subcommand(w) == Some("create"));
    let by_waymark = commands.iter().any(|w| runs_waymark_validate(w));
    let git_push = sub("push") && !dry_run;
    let publish = !dry_run && commands.iter().any(|w| is_publish(&w[command_word(w)..]));
    Kinds {
        git_commit: sub("commit") && !dry_run,
        git_push,
        pr_create: gh_pr_create,
        validation: !by_waymark && is_validation(command, &commands, patterns),
        side_effect: git_push
            || gh_pr_create
            || publish
            || (!side_effects.is_empty()
                && RegexSet::new(side_effects).is_ok_and(|set| set.is_match(command))),
        waymark: unread.is_none() && only_waymark(&commands),
        unread,
    }
}

/// Whether `commands` run waymark and nothing else but a `cd`.
fn only_waymark(commands: &[Vec<String>]) -> bool {
    let runs = |w: &Vec<String>, name| w.get(command_word(w)).is_some_and(|p| is(p, name));
    commands.iter().any(|w| runs(w, "waymark"))
        && commands.iter().all(|w| runs(w, "waymark") || runs(w, "cd"))
}

/// What a command checks of what a crash left unknown (`recovery::repeat::settle`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RemoteCheck {
    /// It asks the remote what it holds: `git fetch`, `git ls-remote`, `git remote show`,
    /// `git pull`.
    pub push: bool,
    /// It lists or shows pull requests: `gh pr list|view|status`.
    pub pull_request: bool,
}

/// What `command` checks of a push or a pull request left unknown by a crash.
pub fn remote_check(command: &str) -> RemoteCheck {
    let commands = simple_commands(command);
    let asks_remote = ["fetch", "ls-remote", "pull"];
    RemoteCheck {
        push: commands.iter().any(|w| {
            let sub = git_subcommand(w);
            sub.is_some_and(|s| asks_remote.contains(&s))
                || (sub == Some("remote") && w.iter().any(|x| x == "show"))
        }),
        pull_request: commands
            .iter()
            .any(|w| gh_pr_subcommand(w).is_some_and(|s| ["list", "view", "status"].contains(&s))),
    }
}

/// `gh release create`, `npm|pnpm|yarn publish`, `cargo publish`, `docker push`.
fn is_publish(t: &[String]) -> bool {
    let at = |i: usize, word: &str| t.get(i).is_some_and(|w| w == word);
    let first = |name: &str| t.first().is_some_and(|f| is(f, name));
    (first("gh") && at(1, "release") && at(2, "create"))
        || (["npm", "pnpm", "yarn", "cargo"].into_iter().any(first) && at(1, "publish"))
        || (first("docker") && at(1, "push"))
}

/// Whether a command matches one of `patterns`. A default pattern is its word rule; the
/// others are compiled together as one regex set, only when no word rule matched.
fn is_validation(command: &str, commands: &[Vec<String>], patterns: &[String]) -> bool {
    let mut custom = Vec::new();
    for p in patterns {
        match DEFAULT_VALIDATION_COMMANDS.iter().position(|d| d == p) {
            Some(i) => {
                if commands.iter().any(|w| DEFAULT_RULES[i](w)) {
                    return true;
                }
            }
            None => custom.push(p),
        }
    }
    !custom.is_empty() && RegexSet::new(custom).is_ok_and(|set| set.is_match(command))
}

/// The word rule of each default validation pattern, in `DEFAULT_VALIDATION_COMMANDS`'s
/// order (a test checks each against its regex).
const DEFAULT_RULES: [fn(&[String]) -> bool; DEFAULT_VALIDATION_COMMANDS.len()] = [
    // cargo [+toolchain] test|nextest|clippy|check
    |w| {
        after(w, "cargo").is_some_and(|rest| {
            let rest = match rest.first() {
                Some(t) if t.starts_with('+') => &rest[1..],
                _ => rest,
            };
            first_in(rest, &["test", "nextest", "clippy", "check"])
        })
    },
    // npm|pnpm|yarn|bun [run] test
    |w| {
        ["npm", "pnpm", "yarn", "bun"].iter().any(|tool| {
            after(w, tool).is_some_and(|rest| match rest.first().map(String::as_str) {
                Some("run") => first_in(&rest[1..], &["test"]),
                _ => first_in(rest, &["test"]),
            })
        })
    },
    // npx jest|vitest|mocha
    |w| after(w, "npx").is_some_and(|rest| first_in(rest, &["jest", "vitest", "mocha"])),
    // pytest | py.test | tox | nox
    |w| {
        w.iter()
            .any(|x| ["pytest", "py.test", "tox", "nox"].iter().any(|t| is(x, t)))
    },
    // python[3] -m pytest|unittest
    |w| {
        ["python", "python3"].iter().any(|py| {
            after(w, py).is_some_and(|rest| {
                rest.first().is_some_and(|m| m == "-m")
                    && first_in(&rest[1..], &["pytest", "unittest"])
            })
        })
    },
    // go test|vet
    |w| after(w, "go").is_some_and(|rest| first_in(rest, &["test", "vet"])),
    // make test|check
    |w| after(w, "make").is_some_and(|rest| first_in(rest, &["test", "check"])),
    // mvn|gradle|./gradlew test|verify|check
    |w| {
        ["mvn", "gradle", "gradlew"].iter().any(|tool| {
            after(w, tool).is_some_and(|rest| first_in(rest, &["test", "verify", "check"]))
        })
    },
    // rspec | phpunit | ctest | dotnet test | mix test | swift test
    |w| {
        w.iter()
            .any(|x| ["rspec", "phpunit", "ctest"].iter().any(|t| is(x, t)))
            || ["dotnet", "mix", "swift"]
                .iter()
                .any(|tool| after(w, tool).is_some_and(|rest| first_in(rest, &["test"])))
    },
];

/// The words after the first word that is `name` (or a path to it).
fn after<'a>(words: &'a [String], name: &str) -> Option<&'a [String]> {
    let at = words.iter().position(|w| is(w, name))?;
    Some(&words[at + 1..])
}

fn first_in(words: &[String], any_of: &[&str]) -> bool {
    words.first().is_some_and(|w| any_of.contains(&w.as_str()))
}

/// The commit hash a `git commit` printed (`[main 1a2b3c4] msg`, `[main (root-commit)
/// 1a2b3c4] msg`) or a bare 40-hex line.
pub fn commit_hash(output: &str) -> Option<String> {
    output.lines().find_map(|line| {
        if is_hex(line, 40..=40) {
            return Some(line.to_string());
        }
        let inside = line.strip_prefix('[')?.split(']').next()?;
        let mut parts = inside.split(' ');
        let branch = parts.next()?;
        let last = parts.next_back()?;
        let middle: Vec<&str> = parts.collect();
        // `[main 1a2b3c4]`, `[main (root-commit) 1a2b3c4]`, `[detached HEAD 1a2b3c4]`.
        let detached = branch == "detached" && middle == ["HEAD"];
        let well_formed = detached
            || !branch.is_empty()
                && (middle.is_empty()
                    || (middle.first()?.starts_with('(') && middle.last()?.ends_with(')')));
        (well_formed && is_hex(last, 7..=40)).then(|| last.to_string())
    })
}

fn is_hex(s: &str, len: std::ops::RangeInclusive<usize>) -> bool {
    len.contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The subject (first line) of the commit message of `git commit -m "…"` (`-m`, `-qm`,
/// `-am`, `-mMessage`, `--message`), when given inline; a message given as a here-document
/// (`-m "$(cat <<'EOF' … EOF)"`, the way Claude Code commits) is read from its body.
pub fn commit_message(command: &str) -> Option<String> {
    let message = simple_commands(command).iter().find_map(|words| {
        git_subcommand(words).filter(|s| *s == "commit")?;
        let mut it = words.iter();
        while let Some(w) = it.next() {
            if let Some(m) = w.strip_prefix("--message=") {
                return Some(m.to_string());
            }
            if w == "--message" {
                return it.next().cloned();
            }
            if let Some(cluster) = w.strip_prefix('-').filter(|c| !c.starts_with('-')) {
                match short_option_message(cluster) {
                    Cluster::Message(m) => return Some(m.to_string()),
                    Cluster::MessageNext => return it.next().cloned(),
                    Cluster::ArgumentNext => _ = it.next(),
                    Cluster::Flags => {}
                }
            }
        }
        None
    })?;
    let message = heredoc_body(&message).unwrap_or(message);
    message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// What a cluster of `git commit`'s short options (`amend` in `-amend`) says of the message.
enum Cluster<'a> {
    /// `-m` with the message glued to it: the rest of the cluster (`-mWIP`, `-amend`).
    Message(&'a str),
    /// `-m` last: the message is the next word.
    MessageNext,
    /// Another option that takes an argument (`-F`, `-C`, `-c`, `-t`) last: the next word
    /// is its argument, not a message.
    ArgumentNext,
    /// Flags only, or an option whose argument is glued to it.
    Flags,
}

/// Reads a short-option cluster the way git does: flags one letter each, until an option
/// that takes an argument, which takes the rest of the cluster, or else the next word.
fn short_option_message(cluster: &str) -> Cluster<'_> {
    for (i, c) in cluster.char_indices() {
        let rest = &cluster[i + c.len_utf8()..];
        match c {
            'm' if rest.is_empty() => return Cluster::MessageNext,
            'm' => return Cluster::Message(rest),
            'F' | 'C' | 'c' | 't' if rest.is_empty() => return Cluster::ArgumentNext,
            'F' | 'C' | 'c' | 't' | 'S' | 'u' => return Cluster::Flags,
            _ => {}
        }
    }
    Cluster::Flags
}

/// The body of a here-document given as a word (`$(cat <<'EOF'` … `EOF` `)`), which the
/// shell would have run: the lines between the opening line and the delimiter.
fn heredoc_body(word: &str) -> Option<String> {
    let rest = word.trim_start().strip_prefix("$(cat")?.trim_start();
    let rest = rest
        .strip_prefix("<<")?
        .trim_start_matches('-')
        .trim_start();
    let (opening, body) = rest.split_once('\n')?;
    let delimiter = opening.trim().trim_matches(|c| c == '\'' || c == '"');
    let lines: Vec<&str> = body.lines().take_while(|l| l.trim() != delimiter).collect();
    Some(lines.join("\n"))
}

/// The pull-request URL `gh pr create` printed.
pub fn pr_url(output: &str) -> Option<String> {
    output.split_whitespace().find_map(|token| {
        if !(token.starts_with("https://") || token.starts_with("http://")) {
            return None;
        }
        let at = token.find("/pull/")?;
        let digits = token[at + 6..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        (digits > 0).then(|| token[..at + 6 + digits].to_string())
    })
}

#[cfg(test)]
mod tests {
    mod bounded;

    use super::*;
    use crate::config::Config;
    use regex::Regex;

    fn patterns() -> Vec<String> {
        Config::default().validation_commands
    }

    /// A redirection takes no word from its command: `&>` does not end the command, and
    /// only a number written against `>` names a descriptor.
    #[test]
    fn a_redirection_leaves_its_command_s_words() {
        let words = |line: &str| read_commands(line).0;
        assert_eq!(words("echo a &> out.txt b"), [["echo", "a", "b"]]);
        assert_eq!(words("echo a & b"), [vec!["echo", "a"], vec!["b"]]);
        assert_eq!(words("echo 2 > out.txt"), [["echo", "2"]]);
        assert_eq!(words("echo 2> err.txt"), [["echo"]]);
    }

    #[test]
    fn recognizes_vcs_commands() {
        let k = classify(
            r#"git add -A && git commit -qm "Add nil-safe parser" && git log -1 --format=%H"#,
            &patterns(),
            &[],
        );
        assert!(k.git_commit && !k.git_push && !k.validation);
        assert!(classify("git -C sub push origin main", &patterns(), &[]).git_push);
        assert!(
            classify(
                "git -c user.name=x --no-pager commit -m x",
                &patterns(),
                &[]
            )
            .git_commit
        );
        assert!(classify("cd x && (git push)", &patterns(), &[]).git_push);
        assert!(classify("/usr/bin/git commit -m x", &patterns(), &[]).git_commit);
        assert!(classify("gh pr create --fill", &patterns(), &[]).pr_create);
        assert!(classify("GIT_AUTHOR_NAME=x git commit -m y", &patterns(), &[]).git_commit);
        assert!(classify("bash -c 'git commit -m x'", &patterns(), &[]).git_commit);
        for not in [
            "git commit-tree abc",
            "git log --grep commit",
            "echo git commit",
            "git commit --dry-run",
            "git show HEAD:commit",
        ] {
            assert!(!classify(not, &patterns(), &[]).git_commit, "{not}");
        }
        assert!(!classify("git push --dry-run", &patterns(), &[]).git_push);
        assert!(!classify("gh pr view", &patterns(), &[]).pr_create);
    }

    /// waymark's own commands (the agent keeping its plan) are told from work: a line that
    /// runs waymark and nothing else but a `cd`.
    #[test]
    fn a_line_of_waymark_alone_is_the_agent_keeping_its_plan() {
        let own = |c: &str| classify(c, &patterns(), &[]).waymark;
        for c in [
            "waymark step done 3",
            "waymark plan 'Read' 'Write'",
            "cd /p && waymark task done",
            "/usr/local/bin/waymark step start 1; waymark plan",
        ] {
            assert!(own(c), "{c}");
        }
        for c in [
            "waymark step done 3 && git commit -m x",
            "echo waymark",
            "printf x > src/a.rs",
            "cd src",
            "waymark-other step done",
        ] {
            assert!(!own(c), "{c}");
        }
    }

    #[test]
    fn recognizes_validations() {
        for c in [
            "cargo test",
            "cargo +nightly clippy --all-targets",
            "RUST_LOG=debug cargo nextest run",
            "npm test",
            "pnpm run test",
            "yarn test",
            "bun test",
            "npx vitest run",
            "pytest -q",
            "py.test -x",
            "tox -e py312",
            "python3 -m pytest",
            "python -m unittest discover",
            "go test ./...",
            "go vet ./...",
            "make check",
            "./gradlew check",
            "mvn verify",
            "dotnet test",
            "mix test",
            "swift test",
            "ctest --output-on-failure",
            "cd crate && cargo test; echo done",
        ] {
            assert!(classify(c, &patterns(), &[]).validation, "{c}");
        }
        for c in [
            "cargo build",
            "ls",
            "echo test",
            "npm install",
            "pip install pytest-xdist",
            "make",
            "waymark validate -- cargo test",
            "./bin/waymark --root /p validate --step x -- pytest",
            "waymark --root=/p validate -- go test ./...",
        ] {
            assert!(!classify(c, &patterns(), &[]).validation, "{c}");
        }
    }

    #[test]
    fn each_word_rule_agrees_with_its_regex() {
        // The commands both readings must agree on (quoting and `\b` differ only in cases
        // the word rules read better, such as `pytest-xdist`).
        let commands = [
            "cargo test",
            "cargo +stable test --all",
            "cargo build",
            "cargo testify",
            "npm run test",
            "npm run build",
            "yarn test",
            "npx jest",
            "npx eslint",
            "pytest",
            "tox",
            "python -m pytest",
            "python -m pip",
            "go test ./...",
            "go build",
            "make test",
            "make all",
            "mvn test",
            "gradle build",
            "rspec spec/",
            "phpunit",
            "dotnet test",
            "dotnet build",
            "mix test",
            "swift build",
            "echo hi",
        ];
        for (i, pattern) in DEFAULT_VALIDATION_COMMANDS.iter().enumerate() {
            let re = Regex::new(pattern).unwrap();
            for c in commands {
                let words = simple_commands(c);
                let by_words = words.iter().any(|w| DEFAULT_RULES[i](w));
                assert_eq!(by_words, re.is_match(c), "pattern {pattern} on {c:?}");
            }
        }
    }

    #[test]
    fn custom_patterns_are_regexes() {
        let mut patterns = patterns();
        patterns.push(r"^just\s+ci$".into());
        assert!(classify("just ci", &patterns, &[]).validation);
        assert!(!classify("just build", &patterns, &[]).validation);
        assert!(!classify("cargo test", &[r"^just\s+ci$".to_string()], &[]).validation);
    }

    #[test]
    fn side_effects_are_pushes_pull_requests_publishes_and_what_config_names() {
        let p = patterns();
        for cmd in [
            "git push origin main",
            "gh pr create --fill",
            "gh release create v1.0",
            "npm publish",
            "cd crate && cargo publish",
            "docker push me/app:1",
        ] {
            assert!(classify(cmd, &p, &[]).side_effect, "{cmd}");
        }
        for cmd in [
            "git status",
            "git push --dry-run",
            "cargo publish --dry-run",
            "npm test",
            "gh pr view",
        ] {
            assert!(!classify(cmd, &p, &[]).side_effect, "{cmd}");
        }
        let deploy = [r"^\./deploy\.sh\b".to_string()];
        assert!(classify("./deploy.sh prod", &p, &deploy).side_effect);
        assert!(!classify("./deploy.sh prod", &p, &[]).side_effect);
        assert!(!classify("./build.sh prod", &p, &deploy).side_effect);
    }

    /// A publish is the release or upload command itself, not any command with the same
    /// second word.
    #[test]
    fn only_the_publishing_subcommands_are_publishes() {
        let p = patterns();
        for cmd in [
            "gh release view v1.0",
            "gh release list",
            "gh create release",
            "echo push",
            "git stash push",
            "docker build .",
            "cargo build",
        ] {
            assert!(!classify(cmd, &p, &[]).side_effect, "{cmd}");
        }
        for cmd in [
            "/usr/bin/docker push me/app",
            "yarn publish",
            "pnpm publish",
        ] {
            assert!(classify(cmd, &p, &[]).side_effect, "{cmd}");
        }
    }

    #[test]
    fn words_and_quotes() {
        assert_eq!(
            simple_commands(r#"git commit -m "a; b" && echo 'c d'|wc"#),
            vec![
                vec!["git", "commit", "-m", "a; b"],
                vec!["echo", "c d"],
                vec!["wc"]
            ]
        );
        // A backslash keeps the next character as it is, inside double quotes too.
        assert_eq!(
            simple_commands(r#"echo "say \"hi\" \\ now" a\ b"#),
            vec![vec!["echo", r#"say "hi" \ now"#, "a b"]]
        );
    }

    /// Commands are read the way the shell reads them: the scripts a shell or a
    /// substitution runs are commands; a here-document's body, a comment and a
    /// redirection's file are not.
    #[test]
    fn commands_are_read_as_the_shell_reads_them() {
        let p = patterns();
        for (command, push) in [
            ("echo \"$(git push)\"", true),
            ("echo `git push`", true),
            ("bash -lc 'git push'", true),
            ("sh -o pipefail -c 'git push'", true),
            ("bash <<'EOF'\ngit push\nEOF", true),
            ("cat > notes <<EOF\ngit push\nEOF", false),
            (
                "git commit -m \"$(cat <<'EOF'\nThen git push\nEOF\n)\"",
                false,
            ),
            ("echo done # git push", false),
            ("bash push.sh", false),
            // A script file named like a command, after options that take no script.
            ("bash 'git push'", false),
            ("bash -x 'git push'", false),
            ("bash --rcfile 'git push' build.sh", false),
        ] {
            assert_eq!(classify(command, &p, &[]).git_push, push, "{command:?}");
        }
        assert_eq!(
            simple_commands("git commit -m x > /dev/null 2>&1 && cat <in"),
            vec![vec!["git", "commit", "-m", "x"], vec!["cat"]]
        );
    }

    /// What `quote` writes, a shell (and this module's reading of one) takes back as the
    /// one word it was given.
    #[test]
    fn a_quoted_string_is_read_back_as_one_word() {
        for (s, quoted) in [
            ("plain", "'plain'"),
            ("two words", "'two words'"),
            ("it's", r"'it'\''s'"),
            ("", "''"),
            ("$HOME; rm -rf /", "'$HOME; rm -rf /'"),
        ] {
            assert_eq!(quote(s), quoted, "{s:?}");
            assert_eq!(
                simple_commands(&format!("echo {quoted} x")),
                vec![vec!["echo", s, "x"]],
                "{s:?}"
            );
        }
    }

    /// The program a hook command runs, as written: quotes and escapes kept, up to the
    /// first white space they do not protect.
    #[test]
    fn the_first_word_is_the_program_as_written() {
        for (command, program) in [
            ("waymark hook Stop", "waymark"),
            (" \twaymark\thook", "waymark"),
            ("waymark", "waymark"),
            ("", ""),
            ("'/opt/x y/waymark' hook Stop", "'/opt/x y/waymark'"),
            (r#""/opt/x y/waymark" hook"#, r#""/opt/x y/waymark""#),
            (r"/opt/x\ y/waymark hook", r"/opt/x\ y/waymark"),
            (r#""/opt/a\"b c/waymark" hook"#, r#""/opt/a\"b c/waymark""#),
            (r#""/opt/it's x"/waymark hook"#, r#""/opt/it's x"/waymark"#),
            (r#"'/opt/a"b c'/waymark hook"#, r#"'/opt/a"b c'/waymark"#),
            // No escape inside single quotes: the backslash is the word's last character.
            (r"'C:\dir\' hook", r"'C:\dir\'"),
        ] {
            assert_eq!(first_word(command), program, "{command:?}");
        }
        let odd = quote("/opt/it's here/waymark");
        assert_eq!(first_word(&format!("{odd} hook Stop")), odd);
    }

    /// `NAME=value` words before a command are assignments only when NAME is a shell
    /// name; otherwise the shell runs that word as the command.
    #[test]
    fn only_a_shell_name_makes_an_assignment() {
        let p = patterns();
        for (command, commit) in [
            ("GIT_AUTHOR_NAME=x git commit -m y", true),
            ("A_1=x B= sudo env git commit -m y", true),
            ("time nohup git commit -m y", true),
            ("FOO-BAR=1 git commit -m y", false),
            ("=1 git commit -m y", false),
            ("a.b=1 git commit -m y", false),
        ] {
            assert_eq!(classify(command, &p, &[]).git_commit, commit, "{command}");
        }
    }

    proptest::proptest! {
        /// Any text, however broken, is classified without a panic.
        #[test]
        fn any_text_is_classified(command in "[a-z $'\"`\\\\(){}<>|&;~*#=/.\n\t-]{0,40}") {
            let _ = classify(&command, &patterns(), &[]);
            let _ = commit_message(&command);
        }
    }

    /// A command run by a wrapper (`timeout`, `nice`, `env -i`, `sudo -u`), or after a
    /// reserved word (`if`, `!`, `{`), is classified as the command it runs.
    #[test]
    fn wrappers_and_reserved_words_are_skipped_to_the_command() {
        let p = patterns();
        for command in [
            "timeout 600 cargo test",
            "timeout -s KILL 600 go test ./...",
            "flock /tmp/build.lock -c 'cargo test'",
            "env -S 'cargo test' --workspace",
            "nice -n 10 make check",
            "stdbuf -oL pytest -q",
        ] {
            assert!(classify(command, &p, &[]).validation, "{command}");
        }
        assert!(!classify("timeout 60 waymark validate -- cargo test", &p, &[]).validation);
        for command in [
            "nice -n 10 git commit -m x",
            "env -i A=b git commit -m x",
            "sudo -u me git commit -m x",
            "if git commit -m x; then echo ok; fi",
            "{ git commit -m x; }",
            "! git commit -m x",
        ] {
            assert!(classify(command, &p, &[]).git_commit, "{command}");
        }
        assert_eq!(
            commit_message("timeout 30 git commit -m wrapped").as_deref(),
            Some("wrapped")
        );
        for command in [
            "timeout -s KILL 60 npm publish",
            "stdbuf -oL git push",
            "nohup timeout 5 gh pr create --fill",
            "flock /tmp/deploy.lock -c 'git push origin main'",
            "env -S 'npm publish'",
        ] {
            assert!(classify(command, &p, &[]).side_effect, "{command}");
        }
    }

    /// The hash `git commit` printed; nothing from lines that only look like its summary.
    #[test]
    fn the_commit_hash_is_read_from_what_git_printed() {
        let full = "67f3bab02076607f95987e07638b7343fa2445b3";
        for (output, hash) in [
            (full, Some(full)),
            ("[main 1a2b3c4] fix\n 1 file changed", Some("1a2b3c4")),
            ("Running hooks\n[main 1a2b3c4] fix", Some("1a2b3c4")),
            ("[main (root-commit) 1a2b3c4] first", Some("1a2b3c4")),
            ("[feature/x-1 0123456789abcdef] x", Some("0123456789abcdef")),
            ("[INFO] building", None),
            // A word in brackets that is not a hash, or is too short for one.
            // A commit on a detached HEAD (during a rebase, a bisect).
            ("[detached HEAD 1a2b3c4] fix", Some("1a2b3c4")),
            ("[detached main 1a2b3c4] fix", None),
            ("[WARN deprecated] use x", None),
            ("[main abc] x", None),
            ("[main 1a2b3c4g] x", None),
            ("[ 1a2b3c4] x", None),
            // Between branch and hash, only a word in parentheses, such as (root-commit).
            ("[main (root 1a2b3c4] x", None),
            ("[main root) 1a2b3c4] x", None),
            ("67f3bab02076607f95987e07638b7343fa2445b", None),
            ("67f3bab02076607f95987e07638b7343fa2445bz", None),
        ] {
            assert_eq!(commit_hash(output).as_deref(), hash, "{output:?}");
        }
    }

    /// The message of a `git commit` given inline, however the flag is spelled.
    #[test]
    fn the_commit_message_is_read_from_the_command() {
        for (command, message) in [
            (
                r#"git commit -qm "Add nil-safe parser""#,
                Some("Add nil-safe parser"),
            ),
            ("git commit -am 'two words'", Some("two words")),
            ("git commit -a -m 'after a flag'", Some("after a flag")),
            ("git commit --message=x", Some("x")),
            ("git commit --message 'x y'", Some("x y")),
            (
                r#"git commit -m"glued and quoted""#,
                Some("glued and quoted"),
            ),
            ("git commit -mWIP", Some("WIP")),
            // git reads a cluster letter by letter: `-mform` is the message "form",
            // `-amend` (a typo) is `-a -m end`.
            ("git commit -mform src/a.rs", Some("form")),
            ("git commit -amend", Some("end")),
            ("git commit -qam 'quiet'", Some("quiet")),
            // An option taking an argument ends the cluster; its argument is no message.
            ("git commit -aF msg.txt", None),
            ("git commit -C HEAD~1 -m again", Some("again")),
            ("git commit -Skey -m signed", Some("signed")),
            ("git commit -Smykey -m signed", Some("signed")),
            ("git commit -Fmsg.txt -m real", Some("real")),
            // A file whose name starts with `-m` is still -F's argument.
            ("git commit -F -mfile.txt", None),
            // The subject: the first line that is not blank.
            ("git commit -m \"\n  Subject\n\nBody\"", Some("Subject")),
            // The way Claude Code commits: the message as a here-document.
            (
                "git commit -m \"$(cat <<'EOF'\nAdd the parser\n\nWith tests.\n\nCo-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)\"",
                Some("Add the parser"),
            ),
            (
                "git commit -m \"$(cat <<EOF\n\nFix the flag\nEOF\n)\"",
                Some("Fix the flag"),
            ),
            ("git -C platform commit -m fix", Some("fix")),
            (
                r#"git add . && git commit -m "a; b" && git push"#,
                Some("a; b"),
            ),
            ("bash -c 'git commit -m inner'", Some("inner")),
            ("git commit", None),
            ("git commit -F msg.txt", None),
            ("git commit --amend --no-edit", None),
            ("grep -m 1 x", None),
            ("git log -m", None),
        ] {
            assert_eq!(commit_message(command).as_deref(), message, "{command}");
        }
    }

    /// A here-document's body ends at its delimiter, quoted or not.
    #[test]
    fn a_here_document_ends_at_its_delimiter() {
        for word in [
            "$(cat <<'EOF'\nA\n\nB\nEOF\n)",
            "$(cat <<-\"EOF\"\nA\n\nB\nEOF\n)",
        ] {
            assert_eq!(heredoc_body(word).as_deref(), Some("A\n\nB"), "{word}");
        }
        assert_eq!(heredoc_body("plain words"), None);
    }

    /// The URL of the pull request `gh pr create` made; not the page for making one that
    /// `git push` prints.
    #[test]
    fn the_pull_request_url_is_read_from_what_gh_printed() {
        for (output, url) in [
            (
                "Creating pull request\nhttps://github.com/o/r/pull/12\n",
                Some("https://github.com/o/r/pull/12"),
            ),
            (
                "http://ghe.local/o/r/pull/7.",
                Some("http://ghe.local/o/r/pull/7"),
            ),
            (
                "https://github.com/o/r/pull/12/files",
                Some("https://github.com/o/r/pull/12"),
            ),
            ("https://github.com/o/r/pulls", None),
            ("remote:   https://github.com/o/r/pull/new/feature-x", None),
            ("https://github.com/o/r/pull/", None),
            ("see github.com/o/r/pull/3", None),
        ] {
            assert_eq!(pr_url(output).as_deref(), url, "{output:?}");
        }
    }
}
