//! Context rules: secrets only their place gives away, across lines or table columns,
//! where a regex cannot follow (regex-lite has no back-references, and no pattern knows
//! indentation or columns). Each has keywords and a cheap condition at its keyword as the
//! table's rules do ([`Confirm`]), a case it must hide and one it must leave alone, and
//! runs after the table, on what it left.
//!
//! What names a credential is one function, [`is_credential_name`], shared with the JSON
//! writer, which hides the value of any object key it accepts.

use std::ops::Range;

use super::Confirm;

// The cases and descriptions are read by the tests (and docs/redaction.md) only.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) struct ContextRule {
    pub id: &'static str,
    /// What the rule hides, for docs/redaction.md.
    pub what: &'static str,
    /// As a table rule's: lowercase, every case the rule hides contains one.
    pub keywords: &'static [&'static str],
    pub confirm: Confirm,
    /// The byte ranges of `text` to mask, for the keyword starting at the offset.
    pub find: fn(&str, usize) -> Option<Vec<Range<usize>>>,
    pub hit: &'static str,
    pub secret: &'static str,
    pub miss: &'static str,
}

/// The keywords of a credential's name, as [`is_credential_name`] reads it.
const NAME_KEYWORDS: &[&str] = &[
    "passw",
    "passphrase",
    "pwd",
    "pass",
    "secret",
    "token",
    "credential",
    "key",
    "auth",
];

pub(crate) const CONTEXT: &[ContextRule] = &[
    ContextRule {
        id: "waymark-yaml-block-secret",
        what: "A YAML block scalar (`|` or `>`) under a key named for a credential: every line indented under the key.",
        keywords: NAME_KEYWORDS,
        confirm: Confirm::BlockScalar,
        find: yaml_block,
        hit: "database:\n  password: |\n    Hunter2pw\n  host: db.internal\n",
        secret: "Hunter2pw",
        miss: "database:\n  description: |\n    The password is rotated monthly.\n  host: db.internal\n",
    },
    ContextRule {
        id: "waymark-table-column-secret",
        what: "A Markdown table whose header names a credential: that column's cells in every row.",
        keywords: NAME_KEYWORDS,
        confirm: Confirm::TableHeader,
        find: table_column,
        hit: "| user | password |\n| --- | --- |\n| bob | Hunter2pw |\n",
        secret: "Hunter2pw",
        miss: "| user | password set |\n| --- | --- |\n| bob | yes |\n",
    },
    ContextRule {
        id: "waymark-name-space-value",
        what: "An upper-case name of a credential, a space, then its value (`DB_PASSWORD X` in a commit subject); not a `$NAME` reference, another NAME, a flag or a word of prose (`DB_PASSWORD is required`).",
        keywords: &[
            "password",
            "passwd",
            "passphrase",
            "secret",
            "token",
            "_key",
            "_pat",
            "_pwd",
            "_pass",
            "_auth",
        ],
        confirm: Confirm::NameSpaced,
        find: name_space_value,
        hit: "fix(ci): set DB_PASSWORD Hunter2pw in staging",
        secret: "Hunter2pw",
        miss: "fix(ci): DB_PASSWORD is read from the vault in staging",
    },
    ContextRule {
        id: "waymark-netrc-password",
        what: "A `.netrc` entry's `password X` (`cat ~/.netrc`, curl's and ftp's credentials): the word `password`, a space, then the value, after the entry's pairs from a `machine` or `default` on its line, or ending a line of pairs or of its own (`login bob password X`, `password X`); not `login failed: password expired for bob`.",
        keywords: &["password"],
        confirm: Confirm::Netrc,
        find: |text, at| Some(vec![netrc_value(text.as_bytes(), at)?]),
        hit: "machine api.example.com login bob password hunter2xyz",
        secret: "hunter2xyz",
        miss: "the password you gave for api.example.com is wrong",
    },
    // The rest of a JSON credential's string value that a wrapped output carried to the
    // next line (`"password": "Hunt` / `er2pw"`): the table hides what is on the key's line
    // only.
    ContextRule {
        id: "waymark-json-split-secret",
        what: "The rest of a JSON string value under a key named for a credential, when the value does not close on the key's line (an output wrapped mid-value): the next line up to the closing quote.",
        keywords: NAME_KEYWORDS,
        confirm: Confirm::SplitJson,
        find: |text, at| Some(vec![split_json(text.as_bytes(), at)?]),
        hit: "{\"db_password\": \"Hunter2\nxyz9pw\"}\n",
        secret: "xyz9pw",
        miss: "{\"description\": \"a long\nline\"}\n",
    },
];

/// [`Confirm::SplitJson`] at the keyword starting at `start`: the range of the next line,
/// up to its closing quote, when the keyword is in a JSON key named for a credential whose
/// string value does not close on the key's line.
pub(crate) fn split_json(text: &[u8], start: usize) -> Option<Range<usize>> {
    let line = line_at(text, start)?;
    let bytes = &text[line.clone()];
    // The key's opening quote, before the keyword, and its closing one after it.
    let open = bytes[..start - line.start]
        .iter()
        .rposition(|&b| b == b'"')?;
    let close = start - line.start
        + bytes[start - line.start..]
            .iter()
            .position(|&b| b == b'"')?;
    let name = std::str::from_utf8(&bytes[open + 1..close]).ok()?;
    let after = &bytes[close + 1..];
    let after = &after[indent(after)..];
    let value = after.strip_prefix(b":")?;
    let value = value[indent(value)..].strip_prefix(b"\"")?;
    if value.contains(&b'"') || !is_credential_name(name) {
        return None;
    }
    let next = line.end + 1;
    let rest = text.get(next..)?;
    let end = rest[..line_end(rest)].iter().position(|&b| b == b'"')?;
    (end > 0).then_some(next..next + end)
}

/// The words of a `.netrc` entry followed by a value, as its `password` is.
const NETRC_PAIRS: &[&[u8]] = &[b"machine", b"login", b"account", b"port"];

/// The value of a `.netrc` `password` at the keyword starting at `start`: the word
/// `password` (any case), spaces, then one word, where what the line holds before it
/// ends in a netrc entry ([`netrc_entry`]). [`Confirm::Netrc`] holds where there is one.
pub(crate) fn netrc_value(text: &[u8], start: usize) -> Option<Range<usize>> {
    let line = line_at(text, start)?;
    // Only blanks and `>` are skipped: the keyword is never before `from`.
    let from = line.start + quote(&text[line.clone()]);
    let end = start + "password".len();
    let blank = |b: &u8| matches!(b, b' ' | b'\t');
    let starts_word = start == from || blank(&text[start - 1]);
    let gap = text[end..line.end].iter().take_while(|b| blank(b)).count();
    let value = end + gap;
    let len = text[value..line.end]
        .iter()
        .take_while(|b| !b.is_ascii_whitespace())
        .count();
    if !starts_word || gap == 0 || len == 0 {
        return None;
    }
    let last = text[value + len..line.end].iter().all(blank);
    netrc_entry(&text[from..start], last).then_some(value..value + len)
}

/// Whether `before`, what a line holds before its `password`, ends in a netrc entry: its
/// pairs (`machine H`, `login U`, `account A`, `port P`, and `default`) from a `machine`
/// or `default` on (`echo 'machine H login U password X' >> ~/.netrc`), or, with the value
/// ending the line (`last`), the pairs alone or nothing (`password X` on a line of its
/// own); not `login failed: password expired for bob`.
fn netrc_entry(before: &[u8], last: bool) -> bool {
    let is = |w: &[u8], of: &[&[u8]]| of.iter().any(|k| w.eq_ignore_ascii_case(k));
    let words: Vec<&[u8]> = before
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .map(|w| &w[w.iter().take_while(|b| b"'\"`".contains(b)).count()..])
        .collect();
    let pairs = |words: &[&[u8]]| {
        let mut words = words.iter();
        while let Some(word) = words.next() {
            let pair = is(word, NETRC_PAIRS);
            if (pair && words.next().is_none()) || (!pair && !is(word, &[b"default"])) {
                return false;
            }
        }
        true
    };
    match words.iter().rposition(|w| is(w, &[b"machine", b"default"])) {
        Some(entry) => pairs(&words[entry..]),
        None => last && pairs(&words),
    }
}

/// Whether a name (an object key, a table header, a YAML key, a variable) names a
/// credential: its last word is one (`db_password`, `clientSecret`, `API key`,
/// `access-token`), not merely holds one (`token_count`, `password_file`).
pub fn is_credential_name(name: &str) -> bool {
    // Every key of every JSON waymark writes is asked: nearly none holds a part of a
    // credential's name, and those are answered without splitting it into words.
    const PARTS: [&[u8]; 6] = [b"pass", b"pwd", b"secret", b"token", b"credential", b"key"];
    let holds = |part: &[u8]| {
        name.as_bytes()
            .windows(part.len())
            .any(|w| w.eq_ignore_ascii_case(part))
    };
    if !PARTS.iter().any(|p| holds(p)) && !holds(b"auth") {
        return false;
    }
    let words = words(name);
    let last = words.last().map(String::as_str);
    let before = words.len().checked_sub(2).map(|i| words[i].as_str());
    matches!(
        (before, last),
        (
            _,
            Some("password" | "passwd" | "passphrase" | "pwd" | "pass" | "secret")
        ) | (
            _,
            Some("passwords" | "secrets" | "token" | "credential" | "credentials")
        ) | (
            _,
            Some("auth" | "apikey" | "secretkey" | "privatekey" | "accesskey")
        ) | (_, Some("clientsecret"))
            | (
                Some("api" | "private" | "secret" | "access" | "signing"),
                Some("key")
            )
    )
}

/// Whether an upper-case variable names a credential: as [`is_credential_name`], or with
/// the suffixes the environment rules take (`DEPLOY_KEY`, `GITHUB_PAT`, `SMTP_PASS`).
fn is_credential_variable(name: &str) -> bool {
    let suffixed = ["_KEY", "_PAT", "_PWD", "_PASS", "_AUTH"]
        .iter()
        .any(|s| name.len() > s.len() && name.ends_with(s));
    suffixed || is_credential_name(name)
}

/// A name's words, lowercase: split at anything not a letter or digit and where a
/// lowercase letter meets an uppercase one (`clientSecret`).
fn words(name: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut prev_lower = false;
    let mut word = String::new();
    for c in name.chars() {
        if !c.is_alphanumeric() {
            words.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower {
            words.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    words.extend((!word.is_empty()).then_some(word));
    words
}

/// [`Confirm::BlockScalar`] at the keyword starting at `start`: it is in the key of a
/// block scalar. (A keyword that starts in a key ends in it: the keywords are letters,
/// and a key ends at a `:`, a quote or a space.)
pub(crate) fn in_block_key(text: &[u8], start: usize) -> bool {
    line_at(text, start).is_some_and(|line| {
        block_key(&text[line.clone()])
            .is_some_and(|(key, _)| (line.start + key.start..line.start + key.end).contains(&start))
    })
}

/// [`Confirm::TableHeader`] at the keyword starting at `start`: its line has a `|` and a
/// table's separator row follows it.
pub(crate) fn on_table_header(text: &[u8], start: usize) -> bool {
    line_at(text, start).is_some_and(|line| {
        text[line.clone()].contains(&b'|')
            && text
                .get(line.end + 1..)
                .is_some_and(|rest| is_separator(&rest[..line_end(rest)]))
    })
}

/// [`Confirm::NameSpaced`] at the keyword starting at `start`: it is in an upper-case
/// name followed by a space or a tab.
pub(crate) fn in_name_spaced(text: &[u8], start: usize) -> bool {
    let name = env_name(text, start);
    text[name.clone()].iter().all(|b| !b.is_ascii_lowercase())
        && text[name.end..]
            .first()
            .is_some_and(|b| matches!(b, b' ' | b'\t'))
}

/// The longest line a block's key or a table's header is looked for on: each keyword
/// looks along its line, and a line of megabytes holding thousands of keywords would
/// cost their product.
const MAX_LINE: usize = 4096;

/// The line holding byte `at`, without its newline; `None` when it is longer than
/// [`MAX_LINE`].
fn line_at(text: &[u8], at: usize) -> Option<Range<usize>> {
    let back = &text[at.saturating_sub(MAX_LINE)..at];
    let start = match back.iter().rposition(|&b| b == b'\n') {
        Some(i) => at - back.len() + i + 1,
        None if at <= MAX_LINE => 0,
        None => return None,
    };
    let ahead = &text[start..text.len().min(start + MAX_LINE + 1)];
    let len = line_end(ahead);
    (len <= MAX_LINE).then_some(start..start + len)
}

fn line_end(text: &[u8]) -> usize {
    text.iter().position(|&b| b == b'\n').unwrap_or(text.len())
}

/// The length of a line's Markdown quote marks (`  > `, `> > `), where waymark quotes an
/// output (HOOK.md, AGENT.md): a block or a table is read inside its quote.
fn quote(line: &[u8]) -> usize {
    let mut at = 0;
    loop {
        let next = at + indent(&line[at..]);
        if line.get(next) != Some(&b'>') {
            return at;
        }
        at = next + 1 + usize::from(line.get(next + 1) == Some(&b' '));
    }
}

fn indent(line: &[u8]) -> usize {
    line.iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count()
}

/// In a line `  key: |` (or `- "key": >-`, with a comment after), the key's range and the
/// line's indent.
fn block_key(line: &[u8]) -> Option<(Range<usize>, usize)> {
    let q = quote(line);
    let ind = indent(&line[q..]);
    let mut at = q + ind;
    if line[at..].starts_with(b"- ") {
        at += 2;
    }
    let quoted = matches!(line.get(at), Some(b'"' | b'\''));
    let key_start = at + usize::from(quoted);
    let name = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.');
    let key_end = key_start + line[key_start..].iter().take_while(|b| name(b)).count();
    let mut rest = &line[key_end + usize::from(quoted)..];
    rest = &rest[indent(rest)..];
    rest = rest.strip_prefix(b":")?;
    rest = &rest[indent(rest)..];
    let style = rest
        .iter()
        .take_while(|b| b"|>+-0123456789".contains(b))
        .count();
    let after = &rest[style..];
    let after = &after[indent(after)..];
    let closed = after.is_empty() || after.starts_with(b"#") || after == b"\r";
    (matches!(rest.first(), Some(b'|' | b'>')) && closed).then_some((key_start..key_end, ind))
}

fn yaml_block(text: &str, at: usize) -> Option<Vec<Range<usize>>> {
    let bytes = text.as_bytes();
    let line = line_at(bytes, at)?;
    let (key, ind) = block_key(&bytes[line.clone()])?;
    if !is_credential_name(&text[line.start + key.start..line.start + key.end]) {
        return None;
    }
    let q = quote(&bytes[line.clone()]);
    let mut masked = Vec::new();
    let mut next = line.end + 1;
    while next < bytes.len() {
        let this = next..next + line_end(&bytes[next..]);
        let content = trim_end(&bytes[this.clone()]);
        // Inside a quote, the block ends with it.
        let q = if q > 0 { q.min(content.len()) } else { 0 };
        if q > 0 && quote(content) != q {
            break;
        }
        let depth = q + indent(&content[q..]);
        if depth < content.len() && depth - q <= ind {
            break;
        }
        if depth < content.len() {
            masked.push(this.start + depth..this.start + content.len());
        }
        next = this.end + 1;
    }
    Some(masked)
}

fn trim_end(line: &[u8]) -> &[u8] {
    let n = line
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_whitespace())
        .count();
    &line[..line.len() - n]
}

/// A table's separator row: `| --- | :-: |`.
fn is_separator(line: &[u8]) -> bool {
    let line = trim_end(&line[quote(line)..]);
    line.contains(&b'-') && line.iter().all(|b| b" \t|:-".contains(b))
}

/// The cells of a table row, each trimmed, relative to the line.
fn cells(quoted: &[u8]) -> Vec<Range<usize>> {
    let q = quote(quoted);
    let line = &quoted[q..];
    let mut bounds: Vec<usize> = vec![];
    let mut escaped = false;
    for (i, &b) in line.iter().enumerate() {
        if b == b'|' && !escaped {
            bounds.push(i);
        }
        escaped = b == b'\\' && !escaped;
    }
    let lead = trim_end(line).len() > indent(line) && line[indent(line)] == b'|';
    let trail = trim_end(line).last() == Some(&b'|');
    // A cell starts after each bound, or at the start without a leading `|`; it ends at
    // the next bound, or at the end without a trailing `|`.
    let edges = (!lead)
        .then_some(0)
        .into_iter()
        .chain(bounds.iter().map(|b| b + 1));
    let ends = bounds.iter().copied().skip(usize::from(lead));
    edges
        .zip(ends.chain((!trail).then_some(line.len())))
        .map(|(s, e)| {
            let cell = &line[s..e];
            let lead = indent(cell);
            q + s + lead..q + s + lead.max(trim_end(cell).len())
        })
        .collect()
}

fn table_column(text: &str, at: usize) -> Option<Vec<Range<usize>>> {
    let bytes = text.as_bytes();
    let header = line_at(bytes, at)?;
    let columns: Vec<usize> = cells(&bytes[header.clone()])
        .into_iter()
        .enumerate()
        .filter(|(_, c)| is_credential_name(&text[header.start + c.start..header.start + c.end]))
        .map(|(i, _)| i)
        .collect();
    let mut masked = Vec::new();
    let separator = header.end + 1;
    let mut next = separator + line_end(&bytes[separator..]) + 1;
    while next < bytes.len() {
        let row = next..next + line_end(&bytes[next..]);
        if !bytes[row.clone()].contains(&b'|') {
            break;
        }
        let cells = cells(&bytes[row.clone()]);
        for &c in &columns {
            if let Some(cell) = cells.get(c).filter(|c| !c.is_empty()) {
                masked.push(row.start + cell.start..row.start + cell.end);
            }
        }
        next = row.end + 1;
    }
    Some(masked)
}

/// The longest name a credential's is taken to be: a run of name characters longer than
/// this, walked from every keyword in it, would cost their product.
const MAX_NAME: usize = 256;

/// The upper-case name (letters, digits, `_`) around byte `at`, at most [`MAX_NAME`]
/// bytes each way.
fn env_name(text: &[u8], at: usize) -> Range<usize> {
    let name = |b: &&u8| b.is_ascii_alphanumeric() || **b == b'_';
    let back = text[..at]
        .iter()
        .rev()
        .take(MAX_NAME)
        .take_while(name)
        .count();
    let ahead = text[at..].iter().take(MAX_NAME).take_while(name).count();
    at - back..at + ahead
}

/// Words that follow a credential's name in prose, not its value.
const PROSE: &[&str] = &[
    "a",
    "an",
    "and",
    "are",
    "as",
    "at",
    "be",
    "been",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "empty",
    "env",
    "environment",
    "exists",
    "file",
    "for",
    "from",
    "had",
    "has",
    "have",
    "if",
    "in",
    "into",
    "is",
    "isn't",
    "missing",
    "must",
    "needed",
    "not",
    "of",
    "on",
    "or",
    "required",
    "set",
    "should",
    "that",
    "the",
    "then",
    "to",
    "unset",
    "used",
    "using",
    "value",
    "var",
    "variable",
    "via",
    "was",
    "were",
    "when",
    "will",
    "with",
    "without",
    "would",
];

fn name_space_value(text: &str, at: usize) -> Option<Vec<Range<usize>>> {
    let bytes = text.as_bytes();
    let name = env_name(bytes, at);
    let reference = name.start > 0 && matches!(bytes[name.start - 1], b'$' | b'{');
    if reference || !is_credential_variable(&text[name.clone()]) {
        return None;
    }
    let gap = indent(&bytes[name.end..]);
    let start = name.end + gap;
    let len = bytes[start..]
        .iter()
        .take_while(|b| !b.is_ascii_whitespace())
        .count();
    let range = start..start + len;
    let value = &text[range.clone()];
    let other_name = value
        .bytes()
        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    let word = value
        .trim_end_matches([',', '.', ';', ':'])
        .to_ascii_lowercase();
    let skip = value.is_empty()
        || value.starts_with([
            '$', '-', '(', '[', '{', '<', '>', '|', '=', ':', '"', '\'', '`', '#',
        ])
        || value.starts_with(super::MASK)
        || other_name
        || PROSE.contains(&word.as_str());
    (!skip).then(|| vec![range])
}
