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
}

const fn wrapper(name: &'static str, takes: &'static str, long: &'static str) -> Wrapper {
    Wrapper {
        name,
        takes,
        long,
        operands: 0,
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
    wrapper("env", "uCS", "unset chdir split-string"),
    wrapper("time", "fo", "format output"),
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
        ..wrapper("flock", "wE", "timeout wait conflict-exit-code")
    },
];

/// Where the command itself is among a simple command's words: after the reserved words
/// before it, `VAR=value` assignments, and wrappers with their options. When no word is
/// left, the last word.
pub(super) fn command_word(words: &[String]) -> usize {
    let mut at = words
        .iter()
        .take_while(|w| RESERVED.contains(&w.as_str()))
        .count();
    while let Some(w) = words.get(at) {
        if is_assignment(w) {
            at += 1;
        } else if let Some(wrapper) = WRAPPERS.iter().find(|x| is(w, x.name)) {
            at = after_options(wrapper, words, at + 1) + wrapper.operands;
        } else {
            return at;
        }
    }
    words.len().saturating_sub(1)
}

/// `NAME=value`, with NAME a shell name: otherwise the shell runs the word as the command.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(k, _)| {
        !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    })
}

/// Where `wrapper`'s options, from `at`, end: the getopt way, up to the first word that is
/// not one (or after `--`).
fn after_options(wrapper: &Wrapper, words: &[String], mut at: usize) -> usize {
    while let Some(w) = words.get(at) {
        at += 1;
        if w == "--" {
            return at;
        }
        let takes_next = if let Some(long) = w.strip_prefix("--") {
            wrapper.long.split(' ').any(|l| l == long)
        } else if let Some(cluster) = w.strip_prefix('-').filter(|c| !c.is_empty()) {
            // The first letter that takes a value takes the rest, or else the next word.
            cluster
                .char_indices()
                .find(|(_, c)| wrapper.takes.contains(*c))
                .is_some_and(|(i, c)| i + c.len_utf8() == cluster.len())
        } else {
            return at - 1;
        };
        at += usize::from(takes_next);
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
