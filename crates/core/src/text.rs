//! Small text helpers shared by the renderers.

use chrono::{DateTime, Utc};

/// How far past a cut the redactor looks, so that a secret straddling the cut is seen
/// whole (a PEM key block, the longest, is ~3 KB) while a 50 MB output is not scanned.
const CUT_MARGIN: usize = 8 * 1024;

/// Byte offset where the first `n` characters of `s` end.
fn end_of_first(s: &str, n: usize) -> usize {
    // No more bytes than `n`: no more characters either (the common case, at no cost).
    if s.len() <= n {
        return s.len();
    }
    // A character starts at every byte that is not a UTF-8 continuation byte.
    s.bytes()
        .enumerate()
        .filter(|&(_, b)| (b as i8) >= -0x40)
        .nth(n)
        .map_or(s.len(), |(i, _)| i)
}

/// The first 8 characters of an id, for a person to tell ids apart (by characters: an id
/// from an event may hold any).
pub fn short_id(id: &str) -> &str {
    prefix(id, 8)
}

/// The first `n` characters of `s` (not bytes: a hash or an id read from a file edited
/// by hand may hold any).
pub fn prefix(s: &str, n: usize) -> &str {
    &s[..end_of_first(s, n)]
}

/// Byte offset where the last `n` characters of `s` start.
fn start_of_last(s: &str, n: usize) -> usize {
    match n {
        0 => s.len(),
        _ => s.char_indices().rev().nth(n - 1).map_or(0, |(i, _)| i),
    }
}

/// Cuts `s` to at most `max` characters (not bytes), marking the cut with `…`. What is
/// cut is redacted first (with a margin past the cut): a cut through a secret would leave
/// a piece no rule recognizes for the store's redaction to catch.
pub fn truncate(s: &str, max: usize) -> String {
    if end_of_first(s, max) == s.len() {
        return s.to_string();
    }
    let window = waymark_redact::redact(&s[..end_of_first(s, max + CUT_MARGIN)]);
    let mut out = window[..end_of_first(&window, max.saturating_sub(1))].to_string();
    out.push('…');
    out
}

/// The last `max` characters of `s` (output tails keep the end, where errors are),
/// marked `…` where cut; redacted before the cut, like [`truncate`].
pub fn tail(s: &str, max: usize) -> String {
    if end_of_first(s, max) == s.len() {
        return s.to_string();
    }
    let window = waymark_redact::redact(&s[start_of_last(s, max + CUT_MARGIN)..]);
    let mut out = String::from("…");
    out.push_str(&window[start_of_last(&window, max.saturating_sub(1))..]);
    out
}

/// The last `n` non-blank lines of `s`, each cut to 200 characters, the whole to at most
/// `max` characters (the end kept): the lines of an output that say why it failed.
pub fn last_lines(s: &str, n: usize, max: usize) -> String {
    let mut lines: Vec<String> = s
        .lines()
        .rev()
        .filter(|l| !l.trim().is_empty())
        .take(n)
        .map(|l| truncate(l.trim_end(), 200))
        .collect();
    lines.reverse();
    tail(&lines.join("\n"), max)
}

/// `42s`, `5m`, `3h 12m`, `2d 4h`: how long ago `then` was.
pub fn ago(now: DateTime<Utc>, then: DateTime<Utc>) -> String {
    let secs = (now - then).num_seconds().max(0);
    match secs {
        0..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m", secs / 60),
        3600..=86_399 => format!("{}h {}m", secs / 3600, secs % 3600 / 60),
        _ => format!("{}d {}h", secs / 86_400, secs % 86_400 / 3600),
    }
}

/// When `then` was, for a text read `now` (`5m ago`), or for a file read any time later
/// (`now` `None`: `at 2026-11-26T08:42:20Z`).
pub fn when(now: Option<DateTime<Utc>>, then: DateTime<Utc>) -> String {
    match now {
        Some(now) => format!("{} ago", ago(now, then)),
        None => format!("at {}", stamp(then)),
    }
}

/// RFC 3339 to the second, the way every file waymark writes shows times.
pub fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// `1 event`, `2 events`: a count with its noun (an `s` added when it is not one).
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    match n.into() {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

/// One line: newlines folded to spaces (for table cells and log lines).
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// How long something took or is configured to take, the one way waymark writes it:
/// `850ms`, `12.3s`, `2s`, `4m5s`, `1h30m`, `720h` (what `parse_duration` reads back).
pub fn format_duration(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        return format!("{ms}ms");
    }
    if ms < 60_000 {
        let tenths = (ms + 50) / 100;
        return if tenths % 10 == 0 {
            format!("{}s", tenths / 10)
        } else {
            format!("{}.{}s", tenths / 10, tenths % 10)
        };
    }
    let secs = d.as_secs();
    let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    [(h, "h"), (m, "m"), (s, "s")]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, unit)| format!("{n}{unit}"))
        .collect()
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Lowercase or uppercase hex to bytes; None unless every character pairs up.
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    s.as_bytes()
        .chunks(2)
        .map(|p| {
            let hi = (p[0] as char).to_digit(16)?;
            let lo = (p[1] as char).to_digit(16)?;
            Some((hi * 16 + lo) as u8)
        })
        .collect()
}

/// `<prefix>-<8 hex>`, random: std's `RandomState` is seeded from the operating system
/// once per thread and is a new key at each call, so ids differ within a process and
/// across processes, and making one cannot fail.
pub fn new_id(prefix: &str) -> String {
    use std::hash::{BuildHasher, Hasher};
    let n = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    format!("{prefix}-{:08x}", n as u32)
}

/// The message of a caught panic (`catch_unwind`'s payload).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Where `bytes` holds a newline, in order (`.rev()` for newest first).
pub fn newlines(bytes: &[u8]) -> impl DoubleEndedIterator<Item = usize> + '_ {
    bytes
        .iter()
        .enumerate()
        .filter_map(|(i, &b)| (b == b'\n').then_some(i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    /// A hash or an id read from a file edited by hand may hold anything: it is cut by
    /// characters, never through one.
    #[test]
    fn a_prefix_is_cut_by_characters() {
        assert_eq!(prefix("0123456789abcdef", 12), "0123456789ab");
        assert_eq!(prefix("abc", 12), "abc");
        assert_eq!(prefix("ééééééééééééé", 12), "éééééééééééé");
        assert_eq!(short_id("日本語のセッションID"), "日本語のセッショ");
    }

    #[test]
    fn newlines_are_found_both_ways_across_words() {
        let text = b"one\ntwo lines, then a long one without any break at all\n\nend\n";
        let at: Vec<usize> = text
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| i)
            .collect();
        assert_eq!(newlines(text).collect::<Vec<_>>(), at);
        assert_eq!(
            newlines(text).rev().collect::<Vec<_>>(),
            at.iter().rev().copied().collect::<Vec<_>>()
        );
        assert_eq!(newlines(text).nth_back(1), Some(at[at.len() - 2]));
        assert_eq!(newlines(b"no break").next(), None);
    }

    #[test]
    fn truncation_counts_characters() {
        assert_eq!(truncate("héllo", 5), "héllo");
        assert_eq!(truncate("héllo!", 5), "héll…");
        assert_eq!(tail("abcdef", 4), "…def");
        assert_eq!(truncate(&"é".repeat(600), 500).chars().count(), 500);
        assert_eq!(tail("abcd", 4), "abcd");
        assert_eq!(tail("", 4), "");
        assert_eq!(truncate("abcd", 0), "abcd"[..0].to_string() + "…");
    }

    /// At most `max` characters, the mark included: a text of exactly `max` is kept
    /// whole, one more is cut; with room for the mark only, the mark is all there is.
    #[test]
    fn a_cut_is_made_at_exactly_max_characters() {
        for (s, max, cut, end) in [
            ("abcd", 4, "abcd", "abcd"),
            ("abcde", 4, "abc…", "…cde"),
            ("日本語のテ", 4, "日本語…", "…語のテ"),
            ("日本語の", 4, "日本語の", "日本語の"),
            ("abc", 1, "…", "…"),
            ("a", 1, "a", "a"),
            ("abc", 0, "…", "…"),
            ("", 0, "", ""),
        ] {
            assert_eq!(truncate(s, max), cut, "truncate {s:?} {max}");
            assert_eq!(tail(s, max), end, "tail {s:?} {max}");
        }
    }

    /// The redactor reads 8 KiB past a cut: a key block (at most ~3 KB) that ends within
    /// that is masked whole, and what follows it still shows; one that runs past it is
    /// masked to the end of what was read, and nothing after it is read.
    #[test]
    fn the_redactor_reads_eight_kib_past_a_cut() {
        let block = |len: usize| {
            format!(
                "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----",
                "A".repeat(len)
            )
        };
        let head = |len| format!("key:\n{}\nnext", block(len));
        let foot = |len| format!("start\n{}\nlast", block(len));
        assert_eq!(truncate(&head(3000), 40), "key:\n[REDACTED]\nnext…");
        assert_eq!(tail(&foot(3000), 40), "…start\n[REDACTED]\nlast");
        assert_eq!(truncate(&head(20_000), 40), "key:\n[REDACTED]…");
        assert_eq!(tail(&foot(20_000), 40), "…[REDACTED]\nlast");
    }

    #[test]
    fn the_end_of_the_first_characters_is_where_char_indices_puts_it() {
        for s in ["", "abc", "héllo", "日本語のテキスト", "a😀b😀c", "é"] {
            for n in 0..12 {
                let want = s.char_indices().nth(n).map_or(s.len(), |(i, _)| i);
                assert_eq!(end_of_first(s, n), want, "{s:?} {n}");
            }
        }
    }

    #[test]
    fn a_cut_through_a_secret_leaves_no_piece_of_it() {
        let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        let text = format!("{}{token} and more", "x".repeat(90));
        let cut = truncate(&text, 100);
        assert!(!cut.contains("ghp_abcde"), "{cut}");
        let text = format!("GITHUB_TOKEN={token}{}", "y".repeat(5000));
        let cut = tail(&text, 5000 + 20);
        assert!(!cut.contains("klmnopqrstuvwxyz0123456789"), "{cut}");
    }

    #[test]
    fn a_duration_changes_its_unit_at_a_second_and_a_minute() {
        use std::time::Duration as D;
        for (ms, shown) in [
            (999, "999ms"),
            (1000, "1s"),
            (1049, "1s"),
            (1050, "1.1s"),
            (59_900, "59.9s"),
            (60_000, "1m"),
            (61_000, "1m1s"),
            (3_600_000, "1h"),
            (3_601_000, "1h1s"),
        ] {
            assert_eq!(format_duration(D::from_millis(ms)), shown, "{ms}ms");
        }
        // What it writes, parse_duration reads back.
        for shown in ["250ms", "1s", "1.1s", "59.9s", "1m", "1m1s", "1h1s", "720h"] {
            let d = crate::config::parse_duration(shown).unwrap();
            assert_eq!(format_duration(d), shown);
        }
    }

    #[test]
    fn durations_read_as_they_are_configured() {
        use std::time::Duration as D;
        assert_eq!(format_duration(D::from_millis(850)), "850ms");
        assert_eq!(format_duration(D::from_millis(12_345)), "12.3s");
        assert_eq!(format_duration(D::from_secs(2)), "2s");
        assert_eq!(format_duration(D::from_millis(245_200)), "4m5s");
        assert_eq!(format_duration(D::from_secs(5400)), "1h30m");
        assert_eq!(format_duration(D::from_secs(720 * 3600)), "720h");
        assert_eq!(format_duration(D::ZERO), "0ms");
        assert_eq!(hex(&[0, 0xab, 0x10]), "00ab10");
        assert_eq!(unhex("00ffA0"), Some(vec![0, 255, 160]));
        assert_eq!(unhex("abc"), None);
        assert_eq!(unhex("zz"), None);
        assert!(new_id("ckpt").starts_with("ckpt-") && new_id("ckpt").len() == 13);
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| new_id("x")).collect();
        assert_eq!(ids.len(), 1000, "ids made in a row differ");
    }

    fn at(rfc3339: &str) -> DateTime<Utc> {
        rfc3339.parse().unwrap()
    }

    #[test]
    fn ago_changes_its_unit_at_each_boundary() {
        let now = at("2026-11-26T08:42:20Z");
        for (secs, shown) in [
            (0, "0s"),
            (59, "59s"),
            (60, "1m"),
            (119, "1m"),
            (3599, "59m"),
            (3600, "1h 0m"),
            (11_520, "3h 12m"),
            (86_399, "23h 59m"),
            (86_400, "1d 0h"),
            (190_800, "2d 5h"),
            // A time from a clock a little ahead: not "-5s".
            (-5, "0s"),
        ] {
            assert_eq!(ago(now, now - Duration::seconds(secs)), shown, "{secs}s");
        }
    }

    #[test]
    fn when_is_ago_for_a_reader_now_and_a_stamp_for_a_file() {
        let then = at("2026-11-26T08:42:20.750+00:00");
        assert_eq!(stamp(then), "2026-11-26T08:42:20Z");
        assert_eq!(when(None, then), "at 2026-11-26T08:42:20Z");
        assert_eq!(when(Some(then + Duration::minutes(5)), then), "5m ago");
        assert_eq!(when(Some(then), then), "0s ago");
    }

    #[test]
    fn the_last_lines_say_why_it_failed() {
        let out = "compiling\n\nerror: x\n   \nwarning: y  \ntest failed\n\n";
        assert_eq!(last_lines(out, 2, 1000), "warning: y\ntest failed");
        assert_eq!(
            last_lines(out, 10, 1000),
            "compiling\nerror: x\nwarning: y\ntest failed"
        );
        assert_eq!(last_lines(out, 10, 12), "…test failed");
        assert_eq!(last_lines(" \n\n", 3, 100), "");
        let long = last_lines(&format!("{}\nend", "x".repeat(300)), 2, 1000);
        assert_eq!(long, format!("{}…\nend", "x".repeat(199)));
    }

    #[test]
    fn a_panic_says_what_it_said() {
        let caught = |f: fn()| std::panic::catch_unwind(f).unwrap_err();
        assert_eq!(panic_message(&*caught(|| panic!("boom"))), "boom");
        assert_eq!(
            panic_message(&*caught(|| panic!("index {} of {}", 3, 2))),
            "index 3 of 2"
        );
        assert_eq!(
            panic_message(&*caught(|| std::panic::panic_any(42))),
            "unknown panic"
        );
    }
}

/// JSON text with each escape of a lone UTF-16 surrogate (`\ud83d` with no low half after
/// it, an emoji a client's truncation cut in half, or a low half alone) made `\ufffd`:
/// serde_json refuses the whole input for one ("unexpected end of hex escape"), and the
/// event must not be lost for it. Paired surrogates and everything else are left as they
/// are; a text with no such escape is borrowed.
pub fn lone_surrogates_replaced(json: &str) -> std::borrow::Cow<'_, str> {
    let surrogate = |hex: &str| {
        u16::from_str_radix(hex, 16)
            .ok()
            .filter(|u| (0xd800..0xe000).contains(u))
    };
    let b = json.as_bytes();
    let escape_at = |i: usize| {
        (b.get(i) == Some(&b'\\') && b.get(i + 1) == Some(&b'u'))
            .then(|| json.get(i + 2..i + 6))
            .flatten()
            .and_then(surrogate)
    };
    let mut out: Option<String> = None;
    let (mut i, mut copied) = (0, 0);
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(unit) = escape_at(i) else {
            i += 2; // `\\`, `\"` and the other escapes: the next byte is not one.
            continue;
        };
        let paired = unit < 0xdc00 && escape_at(i + 6).is_some_and(|low| low >= 0xdc00);
        if paired {
            i += 12;
            continue;
        }
        let o = out.get_or_insert_with(|| String::with_capacity(json.len()));
        o.push_str(&json[copied..i]);
        o.push_str("\\ufffd");
        i += 6;
        copied = i;
    }
    match out {
        Some(mut o) => {
            o.push_str(&json[copied..]);
            std::borrow::Cow::Owned(o)
        }
        None => std::borrow::Cow::Borrowed(json),
    }
}

/// Whether `c` would act on a terminal or reader instead of being read: a C0 control
/// (but tab), DEL, a C1 control (CSI, OSC and the rest), a bidirectional override or
/// isolate (which reorders what is shown: "Trojan Source"), or text nobody sees: a
/// Unicode tag character (U+E0000–U+E007F, "ASCII smuggling": invisible to a person,
/// read by the model), a zero-width space, joiner or word joiner, a byte order mark, or a
/// line or paragraph separator (U+2028, U+2029: a line end to some readers).
pub fn acts(c: char) -> bool {
    matches!(c, '\0'..='\u{8}' | '\u{a}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        || matches!(
            c,
            '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}' | '\u{2028}' | '\u{2029}'
        )
        || matches!(c, '\u{e0000}'..='\u{e007f}')
}

/// `s` made inert for a reader: every character that would act on a terminal or start a
/// line of its own shown as an escape (`\u{1b}`, `\n`), so that a string from outside (a
/// step name, a prompt, a command, a file name) is only ever read. With `lines`, line
/// ends stay (whole documents, output quoted line by line). The one rendering choke point:
/// the terminal (`cmd`), the hook's output to Claude Code, and the task as the brief and
/// HOOK.md show it ([`crate::recovery::inert`]) pass through it.
pub fn inert(s: &str, lines: bool) -> std::borrow::Cow<'_, str> {
    escaped(s, lines, false)
}

/// Text for a terminal, inert as [`inert`] with its lines kept, but for the colour
/// sequences waymark writes itself (SGR, `ESC [ 0;31 m`: they only colour what follows):
/// no cursor move, screen clear, OSC 8 link, OSC 52 clipboard write or C1 control passes.
pub fn for_terminal(s: &str) -> std::borrow::Cow<'_, str> {
    escaped(s, true, true)
}

fn escaped(s: &str, lines: bool, colours: bool) -> std::borrow::Cow<'_, str> {
    let keeps = |c: char| !acts(c) || (lines && c == '\n');
    if s.chars().all(keeps) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        let sgr = (colours && c == '\u{1b}').then(|| sgr_len(rest)).flatten();
        if let Some(n) = sgr {
            out.push_str(&rest[..n]);
            rest = &rest[n..];
            continue;
        }
        match c {
            _ if keeps(c) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
}

/// The length of the SGR sequence `s` starts with (`ESC [`, digits and `;`, `m`), if any.
fn sgr_len(s: &str) -> Option<usize> {
    let body = s.strip_prefix("\u{1b}[")?;
    let params = body
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    (body.as_bytes().get(params) == Some(&b'm')).then_some(2 + params + 1)
}

#[cfg(test)]
mod inert_tests {
    use super::*;

    #[test]
    fn what_acts_is_shown_escaped_and_the_rest_as_it_is() {
        assert!(matches!(
            inert("plain text, ünïcode", false),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(inert("a\nb\tc", false), "a\\nb\tc");
        assert_eq!(inert("a\nb", true), "a\nb");
        assert_eq!(
            inert("x\r\u{1b}]52;c;eA==\u{7}\u{9b}2J\u{202e}", true),
            "x\\r\\u{1b}]52;c;eA==\\u{7}\\u{9b}2J\\u{202e}"
        );
        assert_eq!(
            inert("\u{0}\u{7f}\u{2066}", false),
            "\\u{0}\\u{7f}\\u{2066}"
        );
        // Text nobody sees: tag characters spelling "run x", zero-width characters, a
        // byte order mark, line and paragraph separators.
        let smuggled: String = "run x"
            .chars()
            .map(|c| char::from_u32(0xe0000 + c as u32).unwrap())
            .collect();
        assert_eq!(
            inert(&format!("ok{smuggled}"), true),
            "ok\\u{e0072}\\u{e0075}\\u{e006e}\\u{e0020}\\u{e0078}"
        );
        assert_eq!(
            inert(
                "a\u{200b}b\u{200c}\u{200d}\u{2060}\u{feff}\u{2028}\u{2029}",
                true
            ),
            "a\\u{200b}b\\u{200c}\\u{200d}\\u{2060}\\u{feff}\\u{2028}\\u{2029}"
        );
        assert_eq!(inert("\u{e0080}\u{200e}", false), "\u{e0080}\u{200e}");
    }

    /// A lone surrogate escape (half an emoji) is replaced, so that the input parses;
    /// a pair, an escaped backslash before `u`, and plain text are left as they are.
    #[test]
    fn a_lone_surrogate_escape_is_replaced_and_the_rest_left() {
        let fixed = |s: &str| lone_surrogates_replaced(s).into_owned();
        assert_eq!(fixed(r#"{"a":"cut \ud83d"}"#), r#"{"a":"cut \ufffd"}"#);
        assert_eq!(
            fixed(r#""\ude00 x \uD83D\u0041""#),
            r#""\ufffd x \ufffd\u0041""#
        );
        for kept in [
            r#""\ud83d\ude00""#,
            r#""\\ud83d""#,
            r#""\u00e9 plain""#,
            "é",
            r#""\u""#,
            r#""\ud8""#,
        ] {
            assert!(
                matches!(
                    lone_surrogates_replaced(kept),
                    std::borrow::Cow::Borrowed(_)
                ),
                "{kept}"
            );
        }
        let v: serde_json::Value = serde_json::from_str(&fixed(r#"{"a":"cut \ud83d"}"#)).unwrap();
        assert_eq!(v["a"], "cut \u{fffd}");
    }

    /// A terminal keeps waymark's colours and nothing else that acts.
    #[test]
    fn a_terminal_keeps_colours_only() {
        let coloured = "\u{1b}[1;31mred\u{1b}[0m\n";
        assert_eq!(for_terminal(coloured), coloured);
        assert_eq!(for_terminal("\u{1b}[2J"), "\\u{1b}[2J");
        assert_eq!(
            for_terminal("\u{1b}]8;;http://x\u{7}"),
            "\\u{1b}]8;;http://x\\u{7}"
        );
        assert_eq!(for_terminal("\u{1b}[31"), "\\u{1b}[31");
        assert_eq!(for_terminal("\u{1b}"), "\\u{1b}");
    }
}
