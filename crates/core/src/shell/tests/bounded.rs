//! Reading a command line is bounded, whatever it holds (docs/guarantees.md, "Bounded and
//! stack-safe"): nested `$(`, `${`, backquotes, quotes, subshells, here-documents and
//! `bash -c` scripts, as deep and as long as the hook's input allows, are read without
//! overflowing the stack, in bounded time; what is not read whole is said
//! ([`crate::shell::Kinds::unread`], and a reason among
//! [`crate::shell::writes::Writes::unreadable`], which scope enforcement's deny mode asks
//! about).

use std::time::{Duration, Instant};

use proptest::prelude::*;

use crate::shell::lex::{MAX_LEN, NESTING};
use crate::shell::{classify, commit_message, remote_check, writes};

/// What a hook's whole input may be (`waymark hook`'s `MAX_INPUT`).
const HOOK_INPUT: usize = 64 << 20;

/// The kinds of nesting a command can hold, each wrapping `inner` one level deeper.
#[derive(Debug, Clone, Copy)]
enum Nest {
    Dollar,
    QuotedDollar,
    Brace,
    Backquote,
    Subshell,
    Arithmetic,
    Process,
    Heredoc,
    BashC,
    Xargs,
    Busybox,
}

const ALL: [Nest; 11] = [
    Nest::Dollar,
    Nest::QuotedDollar,
    Nest::Brace,
    Nest::Backquote,
    Nest::Subshell,
    Nest::Arithmetic,
    Nest::Process,
    Nest::Heredoc,
    Nest::BashC,
    Nest::Xargs,
    Nest::Busybox,
];

/// `levels` of `nest` around a command that writes `out.txt`, cut off when it would pass
/// `max` bytes (backquotes and `bash -c` quoting grow the text at each level).
fn nested(nest: Nest, levels: usize, max: usize) -> (String, usize) {
    let mut s = "echo x > out.txt".to_string();
    for level in 0..levels {
        let next = match nest {
            Nest::Dollar => format!("echo $({s})"),
            Nest::QuotedDollar => format!("echo \"$({s})\""),
            Nest::Brace => format!("echo ${{a:-{s}}}"),
            Nest::Backquote => format!("echo `{}`", s.replace('\\', "\\\\").replace('`', "\\`")),
            Nest::Subshell => format!("( {s} )"),
            Nest::Arithmetic => format!("(( {s} ))"),
            Nest::Process => format!("cat <({s})"),
            Nest::Heredoc => format!("bash <<E{level}\n{s}\nE{level}"),
            Nest::BashC => format!("bash -c {}", crate::shell::quote(&s)),
            Nest::Xargs => format!("xargs {s}"),
            Nest::Busybox => format!("busybox {s}"),
        };
        if next.len() > max {
            return (s, level);
        }
        s = next;
    }
    (s, levels)
}

/// Reads `command` every way a hook does; returns how long that took.
fn read_every_way(command: &str) -> (writes::Writes, crate::shell::Kinds, Duration) {
    let start = Instant::now();
    let w = writes::of(command);
    let kinds = classify(command, &[], &["deploy".to_string()]);
    let _ = commit_message(command);
    let _ = remote_check(command);
    (w, kinds, start.elapsed())
}

/// The kinds read recursively: past their bound, the line is said to be unread.
fn deep_is_unread(nest: Nest, levels: usize) -> bool {
    match nest {
        Nest::Dollar | Nest::QuotedDollar | Nest::Process => levels > NESTING,
        Nest::Backquote | Nest::Heredoc | Nest::BashC | Nest::Xargs | Nest::Busybox => {
            levels > crate::shell::command::DEPTH
        }
        Nest::Brace | Nest::Subshell | Nest::Arithmetic => false,
    }
}

fn nest() -> impl Strategy<Value = Nest> {
    prop::sample::select(ALL.to_vec())
}

proptest::proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any nesting, to 20,000 levels and 1 MiB: read in bounded time without a crash, and
    /// when it is too deep to read, said so (deny mode asks).
    #[test]
    fn nested_input_is_read_in_bounded_time(nest in nest(), levels in 0usize..20_000) {
        let (command, levels) = nested(nest, levels, MAX_LEN);
        let (w, kinds, took) = read_every_way(&command);
        prop_assert!(took < Duration::from_secs(5), "{nest:?} x{levels}: {took:?}");
        if deep_is_unread(nest, levels) {
            prop_assert!(!w.unreadable.is_empty(), "{nest:?} x{levels}: {w:?}");
            prop_assert!(kinds.unread.is_some() || matches!(nest, Nest::Xargs | Nest::Busybox));
        }
    }

    /// Nested openings never closed, and a mix of every kind at random.
    #[test]
    fn unclosed_and_mixed_nesting_is_read(
        kinds in prop::collection::vec(nest(), 1..20),
        repeat in 1usize..5,
        open in prop::sample::select(vec!["$(", "${", "`", "\"", "'", "( ", "<(", "$((", "bash -c \"", "<<E\n"]),
    ) {
        let mut command = open.repeat(10_000);
        for (i, n) in kinds.iter().cycle().take(kinds.len() * repeat).enumerate() {
            command = nested(*n, 1 + i % 3, MAX_LEN - 64).0.replace("out.txt", &command);
            if command.len() > MAX_LEN - 64 {
                break;
            }
            command.truncate(MAX_LEN - 64);
        }
        while !command.is_char_boundary(command.len()) {
            command.pop();
        }
        let (_, _, took) = read_every_way(&command);
        prop_assert!(took < Duration::from_secs(5), "{took:?}");
    }
}

/// The case: a 30 KB command of 10,000 nested `$(`. Deny mode asks.
#[test]
fn ten_thousand_nested_substitutions_are_said_unread() {
    let command = format!(
        "{}echo > out.txt{}",
        "$(".repeat(10_000),
        ")".repeat(10_000)
    );
    let (w, kinds, took) = read_every_way(&command);
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert!(
        w.unreadable.iter().any(|u| u.contains("deeper than")),
        "{w:?}"
    );
    assert!(kinds.unread.is_some());
}

/// Within the bounds, the nesting is read and the file named.
#[test]
fn nesting_within_the_bounds_is_read_whole() {
    for nest in ALL {
        let (command, levels) = nested(nest, 4, MAX_LEN);
        assert_eq!(levels, 4);
        let (w, kinds, _) = read_every_way(&command);
        assert_eq!(kinds.unread, None, "{nest:?}: {command}");
        if !matches!(
            nest,
            Nest::Xargs | Nest::Arithmetic | Nest::Brace | Nest::Busybox
        ) {
            let named = w.targets.iter().any(|t| t.path == "out.txt");
            assert!(
                named && w.unreadable.is_empty(),
                "{nest:?}: {command} {w:?}"
            );
        }
    }
}

/// A command as long as the hook's input may be is not read (it would cost more than the
/// deadline): it is said unread, at once.
#[test]
fn a_command_as_long_as_the_input_limit_is_said_unread_at_once() {
    for unit in ["$(", "echo a; ", "`", "( "] {
        let command = unit.repeat(HOOK_INPUT / unit.len());
        let (w, kinds, took) = read_every_way(&command);
        assert!(took < Duration::from_secs(5), "{unit}: {took:?}");
        assert!(!w.unreadable.is_empty() && kinds.unread.is_some(), "{unit}");
    }
}
