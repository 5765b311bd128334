//! Redaction: no secret reaches anything waymark stores or prints (docs/design.md rule 4).
//!
//! The choke point is the [`Clean`] type. Every file waymark writes for itself (hook.json
//! and its logs, HOOK.md, the trace, AGENT.md, the intent map, captures, the pending
//! journal, waymark.log) and every hook answer on stdout or stderr is written from a
//! `Clean`, and a `Clean` can only be made here, by passing the text, or every string of a
//! value serialized to JSON, through [`redact`]. A field added tomorrow cannot skip it.
//! Files that belong to the user (settings.json, their configuration and intent files) are
//! written verbatim, by design (`store::write_verbatim`); so is the signing key, by
//! `receipt::master`.
//!
//! The rules are one table ([`rules::RULES`]), modelled on gitleaks' default rule set, each
//! with the keywords every match of it contains and a case it must hide and one it must
//! leave alone. Redaction runs on every save, so its cost is kept to what a text needs:
//!
//! - one pass finds the keywords ([`scan`]); a text with none (nearly every one) is
//!   returned as it is, borrowed;
//! - a keyword counts only where a cheap necessary condition of its rule holds
//!   ([`Confirm`]): `token` in prose is not `token=…`;
//! - a rule's regex is compiled only when one of its keywords counts, with `regex-lite`,
//!   which compiles a rule in a twentieth of the time `regex` takes (the table in `regex`
//!   costs ~1.8M instructions a rule to compile, more than a whole event); its slower
//!   matching is run only on a window around each keyword, not on the whole text.
//!
//! It errs on the side of hiding: a false positive costs a few characters of context, a
//! miss leaks a credential into a ledger that is meant to be committed.

mod context;
mod json;
// The table's cases (`hit`, `secret`, `miss`) are read by the tests only.
#[cfg_attr(not(test), allow(dead_code))]
mod rules;
mod scan;

use std::borrow::Cow;
use std::sync::OnceLock;

use regex_lite::Regex;

pub use context::is_credential_name;
use context::{CONTEXT, ContextRule};
pub use json::Clean;
pub use json::scrub;
use rules::RULES;

/// What [`redact`] puts where a secret was.
pub const MASK: &str = rules::MASK;

/// How far around a keyword a rule's regex looks: a match holds a keyword, and no secret
/// a rule knows is longer than this on either side of it. Rules whose matches can span a
/// whole text (key blocks) run on the whole text.
const WINDOW: usize = 4096;

/// How far a [`Confirm`] looks from its keyword along a name, a flag or a URL: every
/// keyword of a text looks, and a run of megabytes without a stop, holding thousands of
/// keywords, would cost their product. No name, flag or user a rule knows is longer.
const NEAR: usize = 256;

/// A cheap condition every match of a rule meets at its keyword, checked before the rule
/// is compiled or run. Each is a necessary condition of its rule's pattern (the tests
/// break it in the rule's own case and see the rule stop matching).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Confirm {
    /// The keyword starts a word (the pattern puts a word boundary or a separator before
    /// it) and at least this many token characters follow it: a provider's prefix and its
    /// secret. (`sk` in `task` or `skip`, `pat` in `path`.)
    Prefix(usize),
    /// The keyword is part of a name that is assigned: after it, more name characters,
    /// an optional quote, spaces, then `:`, `=`, `:=`, `=>` or `?=`. (`token` in prose.)
    /// And the value is not the mask already ([`masked`]).
    Assigned,
    /// The keyword is part of an upper-case environment variable being set: `NAME=`.
    /// (`"file_path": …` is not `GITHUB_PAT=…`.) And the value is not the mask already.
    EnvAssigned,
    /// The keyword follows at least 15 digits (an app id, for `id|secret` tokens).
    AfterDigits,
    /// `://` starts a URL with a user and a password: `user:…@` before any space.
    /// (`file:///…` and `http://host:port/` are not.)
    Userinfo,
    /// The keyword starts a word and a credential of at least this many characters
    /// follows it: after an optional `:`, spaces and an optional `Bearer`, `Basic` or
    /// `token` scheme. (`the bearer token expired`; `Authorization: Bearer [REDACTED]`,
    /// which waymark keeps once it has masked one.)
    Credential(usize),
    /// The keyword is part of a command-line flag (`--db-password`: the word it is in
    /// starts with `-` and ends with it), and a value follows after spaces, not another
    /// flag. (`--token-file`, `password` in prose.)
    Flag,
    /// The keyword is part of a name followed by spaces and a quote: `password "…"`.
    SpaceQuoted,
    /// The keyword starts a word that ends in a space or a tab: a command name and its
    /// arguments (`ldapsearch -w`, `docker login`; not `Dockerfile.helm`).
    Command,
    /// The keyword is in the key of a YAML block scalar: `password: |`.
    BlockScalar,
    /// The keyword is on a table's header row: a line with a `|`, a separator row next.
    TableHeader,
    /// The keyword is in an upper-case name followed by a space: `DB_PASSWORD X`.
    NameSpaced,
    /// The keyword is a `.netrc` entry's `password X`: after `machine`, `login`, … on
    /// its line, or alone on it.
    Netrc,
    /// The keyword is in a JSON key that ends its line (`"password":`): its value is on
    /// the next line.
    SplitJson,
}

/// The rules whose keywords need a [`Confirm`]: the ones whose keywords are common words or
/// fragments of them.
const CONFIRMS: &[(&str, Confirm)] = &[
    ("generic-api-key", Confirm::Assigned),
    ("waymark-quoted-secret", Confirm::Assigned),
    ("waymark-env-secret", Confirm::EnvAssigned),
    ("waymark-env-secret-quoted", Confirm::EnvAssigned),
    ("twilio-api-key", Confirm::Prefix(32)),
    ("airtable-personnal-access-token", Confirm::Prefix(14)),
    ("authress-service-client-access-key", Confirm::Prefix(5)),
    ("lob-api-key", Confirm::Prefix(35)),
    ("sendgrid-api-token", Confirm::Prefix(66)),
    ("huggingface-access-token", Confirm::Prefix(34)),
    ("waymark-sk-key", Confirm::Prefix(16)),
    ("facebook-access-token", Confirm::AfterDigits),
    // Keywords made of hex digits, which turn up inside random ids and hashes
    // (`rcpt-e5eaaa66`): there they follow another word character.
    ("square-access-token", Confirm::Prefix(22)),
    ("facebook-page-access-token", Confirm::Prefix(100)),
    ("clickhouse-cloud-api-secret-key", Confirm::Prefix(38)),
    ("aws-access-token", Confirm::Prefix(16)),
    ("waymark-aws-secret-after-key-id", Confirm::Prefix(16)),
    ("1password-secret-key", Confirm::Prefix(6)),
    ("waymark-url-password-with-at-or-slash", Confirm::Userinfo),
    ("waymark-url-credentials", Confirm::Userinfo),
    ("waymark-authorization-header", Confirm::Credential(8)),
    ("waymark-bearer-token", Confirm::Credential(16)),
    ("waymark-password-flag", Confirm::Flag),
    // Command names: a word of their own, followed by its arguments (`7z` ends every
    // timestamp whose nanoseconds end in 7, `zip` is in `gzip`, `docker` in `Dockerfile`).
    ("waymark-sshpass-password", Confirm::Command),
    ("waymark-redis-cli-password", Confirm::Command),
    ("waymark-openssl-pass-argument", Confirm::Prefix(0)),
    ("waymark-openssl-enc-key", Confirm::Command),
    ("waymark-ldap-password", Confirm::Command),
    ("waymark-zip-password", Confirm::Command),
    ("waymark-7z-password", Confirm::Command),
    ("waymark-htpasswd-batch", Confirm::Command),
    ("waymark-registry-login-password", Confirm::Command),
    ("waymark-azure-sas-signature", Confirm::Prefix(0)),
    ("waymark-name-then-quoted-value", Confirm::SpaceQuoted),
];

/// How many rules there are: the table's, then the context rules.
const ALL: usize = RULES.len() + CONTEXT.len();

/// Each rule's keywords, as the scanner takes them.
const KEYWORD_LISTS: [&[&str]; ALL] = {
    let mut lists: [&[&str]; ALL] = [&[]; ALL];
    let mut i = 0;
    while i < ALL {
        lists[i] = match i < RULES.len() {
            true => RULES[i].keywords,
            false => CONTEXT[i - RULES.len()].keywords,
        };
        i += 1;
    }
    lists
};

/// The keyword scanner, built at compile time.
static SCANNER: scan::Scanner<{ scan::count(&KEYWORD_LISTS) }> =
    scan::Scanner::build(&KEYWORD_LISTS);

/// Each rule's confirm, looked up at compile time.
const CONFIRM: [Option<Confirm>; ALL] = {
    let mut confirm = [None; ALL];
    let mut k = 0;
    while k < CONTEXT.len() {
        confirm[RULES.len() + k] = Some(CONTEXT[k].confirm);
        k += 1;
    }
    let mut c = 0;
    while c < CONFIRMS.len() {
        let mut i = 0;
        while i < RULES.len() {
            if same(RULES[i].id, CONFIRMS[c].0) {
                confirm[i] = Some(CONFIRMS[c].1);
            }
            i += 1;
        }
        c += 1;
    }
    confirm
};

/// `a == b` for a `const` context.
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Rule `i`'s regex, compiled on first need.
fn regex(i: usize) -> &'static Regex {
    static REGEXES: [OnceLock<Regex>; RULES.len()] = [const { OnceLock::new() }; RULES.len()];
    REGEXES[i].get_or_init(|| Regex::new(RULES[i].pattern).expect("redaction pattern compiles"))
}

/// True when rule `i` may match across a whole text (a key block), not only near a keyword.
fn whole_text(i: usize) -> bool {
    let p = RULES[i].pattern;
    p.contains("(?s") || p.contains("\\A") || p.contains("\\z")
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// A character a secret is made of (a token's alphabet: base64, hex, ids).
fn is_token(b: u8) -> bool {
    is_word(b) || matches!(b, b'-' | b'.' | b'=' | b'+' | b'/')
}

/// [`Confirm::Userinfo`], `after` being what follows the keyword.
fn userinfo(after: &[u8]) -> bool {
    let stop = |b: &u8| b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b'<' | b'>');
    let user = after
        .iter()
        .take(NEAR)
        .take_while(|b| !stop(b) && !matches!(b, b':' | b'/' | b'@'));
    let rest = &after[user.count()..];
    rest.first() == Some(&b':')
        && rest
            .iter()
            .take(WINDOW)
            .take_while(|b| !stop(b))
            .any(|&b| b == b'@')
}

/// Whether `confirm` holds for the keyword at `start..end` of `text`.
fn holds(confirm: Confirm, text: &[u8], start: usize, end: usize) -> bool {
    let after = &text[end..];
    match confirm {
        Confirm::Prefix(tail) => {
            (start == 0 || !is_word(text[start - 1]))
                && after
                    .iter()
                    .take(tail)
                    .take_while(|&&b| is_token(b))
                    .count()
                    >= tail
        }
        Confirm::AfterDigits => {
            text[..start]
                .iter()
                .rev()
                .take(15)
                .take_while(|b| b.is_ascii_digit())
                .count()
                >= 15
        }
        Confirm::EnvAssigned => {
            let upper = |b: &u8| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_';
            let name = after.iter().take(NEAR).take_while(|b| upper(b)).count();
            text[start..end].iter().all(upper)
                && after.get(name) == Some(&b'=')
                && !masked(&after[name + 1..], false)
        }
        Confirm::Credential(min) => {
            let credential = |b: &u8| b.is_ascii_alphanumeric() || b"._~+/=-".contains(b);
            let mut rest = after.strip_prefix(b":").unwrap_or(after);
            rest = &rest[spaces(rest)..];
            if let Some(n) = scheme(rest) {
                rest = &rest[n..];
            }
            (start == 0 || !is_word(text[start - 1]))
                && rest.iter().take(min).take_while(|b| credential(b)).count() >= min
        }
        Confirm::Userinfo => userinfo(after),
        Confirm::Flag => flag(text, start, after),
        Confirm::Command => command(text, start, after),
        Confirm::SpaceQuoted => space_quoted(after),
        Confirm::BlockScalar => context::in_block_key(text, start),
        Confirm::TableHeader => context::on_table_header(text, start),
        Confirm::NameSpaced => context::in_name_spaced(text, start),
        Confirm::Netrc => context::netrc_value(text, start).is_some(),
        Confirm::SplitJson => context::split_json(text, start).is_some(),
        Confirm::Assigned => assigned(after),
    }
}

/// [`Confirm::Assigned`], `after` being what follows the keyword.
fn assigned(after: &[u8]) -> bool {
    let name = |b: &u8| is_word(*b) || *b == b'-' || *b == b'.';
    let mut rest = &after[after.iter().take(NEAR).take_while(|b| name(b)).count()..];
    if let [b'"' | b'\'', tail @ ..] = rest {
        rest = tail;
    }
    let rest = &rest[spaces(rest)..];
    let value = match rest {
        [b':', b'=', v @ ..] | [b'=', b'>', v @ ..] | [b'?', b'=', v @ ..] => v,
        [b':' | b'=', v @ ..] => v,
        _ => return false,
    };
    let value = &value[spaces(value)..];
    !masked(value, true)
}

/// [`Confirm::Command`] at the keyword `text[start..]`, `after` being what follows it.
fn command(text: &[u8], start: usize, after: &[u8]) -> bool {
    let word = after
        .iter()
        .take(NEAR)
        .take_while(|b| is_word(**b) || **b == b'-');
    let rest = &after[word.count()..];
    (start == 0 || !is_word(text[start - 1])) && matches!(rest.first(), Some(b' ' | b'\t'))
}

/// [`Confirm::Flag`] at the keyword `text[start..]`, `after` being what follows it.
fn flag(text: &[u8], start: usize, after: &[u8]) -> bool {
    let flag = |b: &&u8| b.is_ascii_alphanumeric() || **b == b'-';
    let before = text[..start]
        .iter()
        .rev()
        .take(NEAR)
        .take_while(flag)
        .count();
    let gap = after
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count();
    text.get(start - before) == Some(&b'-')
        && gap > 0
        && after
            .get(gap)
            .is_some_and(|b| *b != b'-' && !b.is_ascii_whitespace())
}

/// [`Confirm::SpaceQuoted`], `after` being what follows the keyword.
fn space_quoted(after: &[u8]) -> bool {
    let name = |b: &&u8| is_word(**b) || matches!(b, b'-' | b'.');
    let rest = &after[after.iter().take(NEAR).take_while(name).count()..];
    let gap = rest
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count();
    gap > 0 && matches!(rest.get(gap), Some(b'"' | b'\''))
}

/// Whether an assigned value is the mask already: `[REDACTED]`, or `"[REDACTED]"` with
/// its quote closed right after it, or (`schemes`, for [`Confirm::Assigned`]) unquoted
/// after a `Bearer `, `Basic ` or `token ` scheme. Every rule a [`Confirm::Assigned`] or
/// [`Confirm::EnvAssigned`] keyword makes due would then put the mask back where it is
/// (an unquoted value's rules take the mask alone, and leave what follows it), so the
/// keyword does not count. What waymark stores keeps its masked assignments
/// (`API_KEY=[REDACTED]` in a last output), and each one cost every later save its rule's
/// regex over the text around it: 12M instructions for a Write.
fn masked(value: &[u8], schemes: bool) -> bool {
    let mask = MASK.as_bytes();
    if let [q @ (b'"' | b'\''), quoted @ ..] = value {
        return quoted
            .strip_prefix(mask)
            .is_some_and(|r| r.first() == Some(q));
    }
    let skip = scheme(value).filter(|_| schemes).unwrap_or(0);
    value[skip..].starts_with(mask)
}

/// How many spaces `text` starts with (the patterns' `\s`: ASCII, with `\v`).
fn spaces(text: &[u8]) -> usize {
    text.iter()
        .take_while(|b| b.is_ascii_whitespace() || **b == 0x0B)
        .count()
}

/// The length of the `Bearer `, `Basic ` or `token ` scheme `text` starts with (any
/// case, the spaces after it included), if it starts with one.
fn scheme(text: &[u8]) -> Option<usize> {
    [&b"bearer"[..], b"basic", b"token"].iter().find_map(|s| {
        let n = s.len();
        let word = text.get(..n)?.eq_ignore_ascii_case(s);
        let gap = spaces(&text[n..]);
        (word && gap > 0).then_some(n + gap)
    })
}

/// For each rule, where its keywords count in `text` (start offsets).
fn hits(text: &str) -> Vec<Vec<usize>> {
    let bytes = text.as_bytes();
    let mut hits: Vec<Vec<usize>> = Vec::new();
    SCANNER.scan(bytes, |r, start, end| {
        if CONFIRM[r].is_some_and(|c| !holds(c, bytes, start, end)) {
            return;
        }
        if hits.is_empty() {
            hits.resize_with(ALL, Vec::new);
        }
        hits[r].push(start);
    });
    hits
}

/// Whether `text` holds a secret a rule knows (a file kept out of a snapshot for it).
pub fn holds_secret(text: &str) -> bool {
    matches!(redact(text), Cow::Owned(_))
}

/// `text` with every secret the rules know replaced by [`MASK`]; borrowed (no copy) when
/// there was none, which is nearly always.
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut found = hits(text);
    if found.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = Cow::Borrowed(text);
    for i in 0..ALL {
        if found[i].is_empty() {
            continue;
        }
        let changed = match i.checked_sub(RULES.len()) {
            None => apply(i, &out, &found[i]),
            Some(c) => apply_context(&CONTEXT[c], &out, &found[i]),
        };
        if let Some(changed) = changed {
            out = Cow::Owned(changed);
            // Offsets moved: find the keywords of the rules still to come again.
            found = hits(&out);
            if found.is_empty() {
                break;
            }
        }
    }
    out
}

/// Rule `i` applied to `text` around the keyword offsets `at` (or to all of it for a
/// whole-text rule); `None` when it changed nothing.
fn apply(i: usize, text: &str, at: &[usize]) -> Option<String> {
    let re = regex(i);
    let replace = RULES[i].replace;
    if whole_text(i) || text.len() <= 2 * WINDOW {
        return match re.replace_all(text, replace) {
            Cow::Owned(s) => Some(s),
            Cow::Borrowed(_) => None,
        };
    }
    // Windows around the keywords, merged where they overlap, on character boundaries.
    let floor = |mut p: usize| {
        while !text.is_char_boundary(p) {
            p -= 1;
        }
        p
    };
    let mut windows: Vec<(usize, usize)> = Vec::new();
    for &s in at {
        let (lo, hi) = (
            floor(s.saturating_sub(WINDOW)),
            floor((s + WINDOW).min(text.len())),
        );
        match windows.last_mut() {
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => windows.push((lo, hi)),
        }
    }
    let mut out = String::new();
    let mut done = 0;
    let mut changed = false;
    for (lo, hi) in windows {
        if let Cow::Owned(s) = re.replace_all(&text[lo..hi], replace) {
            out.push_str(&text[done..lo]);
            out.push_str(&s);
            done = hi;
            changed = true;
        }
    }
    changed.then(|| {
        out.push_str(&text[done..]);
        out
    })
}

/// A context rule applied to `text` at its keywords `at`; `None` when it changed nothing
/// (what it would hide is the mask already).
fn apply_context(rule: &ContextRule, text: &str, at: &[usize]) -> Option<String> {
    let found = at.iter().filter_map(|&a| (rule.find)(text, a));
    let mut ranges: Vec<_> = found.flatten().collect();
    ranges.retain(|r| &text[r.clone()] != MASK);
    if ranges.is_empty() {
        return None;
    }
    ranges.sort_by_key(|r| (r.start, r.end));
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    for r in ranges {
        if r.start >= done {
            out.push_str(&text[done..r.start]);
            out.push_str(MASK);
            done = r.end;
        }
    }
    out.push_str(&text[done..]);
    Some(out)
}

#[cfg(test)]
mod tests;
