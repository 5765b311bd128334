//! What a simple command runs, the same for classifying it and for knowing what it writes:
//! its command word, past reserved words, assignments and the wrappers that run the
//! command after them; the shells that run a script they are handed, and how deep such
//! scripts are followed.

use super::is;
use super::lex::Word;

/// The reserved words that may stand before a command (`then sed -i …`, `! git push`).
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "do", "while", "until", "!", "{",
];

/// A command that runs the command after it, and the arguments it takes first.
struct Wrapper {
    name: &'static str,
    /// Its short options that take a value (`timeout -s KILL`), glued or the next word.
    takes: &'static str,
    /// Its long options (space-separated) that take the next word when no `=` glues a
    /// value to them (`--signal KILL`).
    long: &'static str,
    /// The operands before the command (`timeout`'s duration).
    operands: usize,
    /// Its options (space-separated names) whose value is a command line it runs in
    /// place of a command after it: `env -S 'sed -i …' f`, `flock LOCK -c 'git push'`
    /// (flock's stands after its operand).
    runs: &'static str,
    /// Whether that value is the wrapper's own arguments, read again with its name
    /// (`env -S '-i sed -i …'`), rather than a script for `sh -c`.
    runs_itself: bool,
    /// Its options whose value is a file it writes: `/usr/bin/time -o FILE`.
    writes: &'static str,
}

const fn wrapper(name: &'static str, takes: &'static str, long: &'static str) -> Wrapper {
    Wrapper {
        name,
        takes,
        long,
        operands: 0,
        runs: "",
        runs_itself: false,
        writes: "",
    }
}

/// The wrappers: where classifying looks for `git commit` and write detection for `sed -i`.
/// `VAR=value` words after one (`env -i A=b cmd`, `sudo A=b cmd`) are skipped as
/// assignments.
const WRAPPERS: &[Wrapper] = &[
    wrapper(
        "sudo",
        "ugCDhprtTU",
        "user group close-from chdir host prompt role type command-timeout other-user",
    ),
    wrapper("doas", "uC", ""),
    Wrapper {
        runs: "S split-string",
        runs_itself: true,
        ..wrapper("env", "uCS", "unset chdir split-string")
    },
    Wrapper {
        writes: "o output",
        ..wrapper("time", "fo", "format output")
    },
    wrapper("nohup", "", ""),
    wrapper("exec", "a", ""),
    wrapper("command", "", ""),
    wrapper("builtin", "", ""),
    wrapper("setsid", "", ""),
    wrapper("nice", "n", "adjustment"),
    wrapper("ionice", "cn", "class classdata"),
    wrapper("stdbuf", "ioe", "input output error"),
    wrapper("unbuffer", "", ""),
    Wrapper {
        operands: 1,
        ..wrapper("timeout", "sk", "signal kill-after")
    },
    // A priority, a CPU mask, a lock file before the command.
    Wrapper {
        operands: 1,
        ..wrapper("chrt", "TPD", "sched-runtime sched-period sched-deadline")
    },
    Wrapper {
        operands: 1,
        ..wrapper("taskset", "", "")
    },
    Wrapper {
        operands: 1,
        runs: "c command",
        ..wrapper("flock", "wEc", "timeout wait conflict-exit-code command")
    },
];

/// A simple command's words read past what stands before its command.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Read {
    /// Where the command itself is: after the reserved words before it, `VAR=value`
    /// assignments, and wrappers with their options. When no word is left, the last word.
    pub at: usize,
    /// The command line a wrapper runs by an option (`env -S`, `flock -c`), the words
    /// after `env -S`'s value included; and where those words begin (`env -S tee "$LOG"`):
    /// they are quoted into the script, which fixes them only when they are literal.
    pub script: Option<(String, usize)>,
    /// The files the wrappers write by an option (`/usr/bin/time -o`): the word, and the byte the
    /// name starts at in it (`-oFILE`, `--output=FILE`).
    pub writes: Vec<(usize, usize)>,
}

/// Bash's reserved word `time`, the first word of a command ([`is_time_keyword`]): it takes
/// `-p` and writes nothing. Elsewhere (`/usr/bin/time`, `command time`, `A=1 time`, or
/// followed by another option) `time` is the program, whose `-o FILE` writes FILE.
const TIME_KEYWORD: Wrapper = wrapper("time", "", "");

/// Where the command itself is among a simple command's words ([`Read::at`]).
pub(super) fn command_word(words: &[String]) -> usize {
    read(words).at
}

/// A simple command's words read past its reserved words, assignments and wrappers.
pub(super) fn read(words: &[String]) -> Read {
    let first = words
        .iter()
        .take_while(|w| RESERVED.contains(&w.as_str()))
        .count();
    let mut at = first;
    let mut read = Read::default();
    while let Some(w) = words.get(at) {
        if is_assignment(w) {
            at += 1;
            continue;
        }
        let keyword = (at == first && w == "time" && is_time_keyword(words.get(at + 1)))
            .then_some(&TIME_KEYWORD);
        let Some(wrapper) = keyword.or_else(|| WRAPPERS.iter().find(|x| is(w, x.name))) else {
            read.at = at;
            return read;
        };
        let mut values = Vec::new();
        at = after_options(wrapper, words, at + 1, &mut values) + wrapper.operands;
        if wrapper.operands > 0 && words.get(at).is_some_and(|w| is_option(w, wrapper.runs)) {
            at = after_options(wrapper, words, at, &mut values);
        }
        for (name, (word, from)) in values {
            let Some(value) = words.get(word).and_then(|w| w.get(from..)) else {
                continue;
            };
            if is_named(name, wrapper.writes) {
                read.writes.push((word, from));
            } else if is_named(name, wrapper.runs) && read.script.is_none() {
                let value = match wrapper.runs_itself {
                    true => format!("{} {value}", wrapper.name),
                    false => value.to_string(),
                };
                let rest = words.get(at..).unwrap_or_default().iter();
                let script = std::iter::once(value).chain(rest.map(|w| super::quote(w)));
                read.script = Some((script.collect::<Vec<_>>().join(" "), at));
                at = words.len();
            }
        }
    }
    read.at = words.len().saturating_sub(1);
    read
}

/// Whether a command's first word `time` is bash's reserved word, by the word after it:
/// the reserved word takes only `-p` (and `--`); `time -o f cmd` or `time -v cmd` can only
/// mean the program (bash would run `-o`).
fn is_time_keyword(next: Option<&String>) -> bool {
    next.is_none_or(|w| !w.starts_with('-') || w == "-p" || w == "--")
}

/// Whether `name` is one of the space-separated `names`.
fn is_named(name: &str, names: &str) -> bool {
    !name.is_empty() && names.split(' ').any(|n| n == name)
}

/// Whether `word` is one of the options `names` (`-c`, `--command`), without a value.
fn is_option(word: &str, names: &str) -> bool {
    let name = word.strip_prefix("--").or_else(|| word.strip_prefix('-'));
    name.is_some_and(|n| is_named(n, names))
}

/// `NAME=value`, with NAME a shell name: otherwise the shell runs the word as the command.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(k, _)| {
        !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    })
}

/// Where `wrapper`'s options, from `at`, end: the getopt way, up to the first word that is
/// not one (or after `--`). Each option given a value is noted in `values` with where the
/// value is: its word and the byte it starts at.
fn after_options<'a>(
    wrapper: &Wrapper,
    words: &'a [String],
    mut at: usize,
    values: &mut Vec<(&'a str, (usize, usize))>,
) -> usize {
    while let Some(w) = words.get(at) {
        at += 1;
        if w == "--" {
            return at;
        }
        if let Some(long) = w.strip_prefix("--") {
            match long.split_once('=') {
                Some((name, _)) => values.push((name, (at - 1, 3 + name.len()))),
                None if is_named(long, wrapper.long) => {
                    values.push((long, (at, 0)));
                    at += 1;
                }
                None => {}
            }
        } else if let Some(cluster) = w.strip_prefix('-').filter(|c| !c.is_empty()) {
            // The first letter that takes a value takes the rest, or else the next word.
            if let Some((i, c)) = cluster
                .char_indices()
                .find(|(_, c)| wrapper.takes.contains(*c))
            {
                let name = &cluster[i..i + c.len_utf8()];
                let from = 1 + i + c.len_utf8();
                if from == w.len() {
                    values.push((name, (at, 0)));
                    at += 1;
                } else {
                    values.push((name, (at - 1, from)));
                }
            }
        } else {
            return at - 1;
        }
    }
    at
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_word_is_past_reserved_words_assignments_and_wrappers() {
        for (command, word) in [
            ("git push", "git"),
            ("A=1 B= git push", "git"),
            ("timeout 5 sed -i s/a/b/ f", "sed"),
            ("timeout -s KILL 5 cargo test", "cargo"),
            ("timeout --signal KILL -k10 5 cargo test", "cargo"),
            ("timeout --signal=KILL --preserve-status 5 cargo", "cargo"),
            ("timeout --preserve-status 5 cargo test", "cargo"),
            ("sudo -Eu root tee f", "tee"),
            ("nice -n 10 make", "make"),
            ("nice -n10 make", "make"),
            ("nice -10 make", "make"),
            ("nice --adjustment 5 make", "make"),
            ("stdbuf -oL -e 0 grep x", "grep"),
            ("env -i A=b PATH=/bin sh", "sh"),
            ("env -u HOME -- git", "git"),
            ("/usr/bin/env -C dir git", "git"),
            ("sudo -u root -E A=1 tee f", "tee"),
            ("sudo -- git push", "git"),
            ("nohup nice timeout 60 cargo test", "cargo"),
            ("exec -a name git", "git"),
            ("command -p git", "git"),
            ("time -p git", "git"),
            ("flock -w 5 /tmp/lock cargo test", "cargo"),
            ("taskset -c 0,1 chrt -b 0 make", "make"),
            ("unbuffer tee log", "tee"),
            ("if ! git push", "git"),
            ("then { A=1 git push", "git"),
            ("echo if", "echo"),
            ("git if", "git"),
            // Nothing is run: the last word stands for the command.
            ("timeout 5", "5"),
            ("A=1", "A=1"),
            ("timeout -s", "-s"),
        ] {
            let words: Vec<String> = command.split(' ').map(String::from).collect();
            assert_eq!(words[command_word(&words)], word, "{command}");
        }
    }
}
