//! [`Clean`]: bytes that passed the redactor, the only thing waymark's files are written
//! from; JSON is redacted string by string as it is serialized, so its structure (and a
//! field named `token_count`) is never touched.

use std::cell::Cell;
use std::io;
use std::ops::Range;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::ser::{CharEscape, CompactFormatter, Formatter, PrettyFormatter};

use super::redact;

/// Text or JSON every string of which went through [`redact`]. Only this module makes one,
/// and the store's record writers take nothing else.
/// Held as text: a save asks a text it made for its `str` several times (to sum it, to find
/// a member in it), and checking 30 KB of UTF-8 each time cost 57K instructions at the caps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Clean(String);

impl Clean {
    /// Redacted text (Markdown, a log line, an error message).
    pub fn text(text: &str) -> Clean {
        Clean(redact(text).into_owned())
    }

    /// `value` as one line of JSON (no newline), every string redacted.
    pub fn json<T: Serialize + ?Sized>(value: &T) -> Clean {
        Clean(to_string(value, CompactFormatter))
    }

    /// `value` as indented JSON, every string redacted.
    pub fn json_pretty<T: Serialize + ?Sized>(value: &T) -> Clean {
        Clean(to_string(value, PrettyFormatter::new()))
    }

    /// JSON Lines: each item on its own line, each line ending in a newline.
    pub fn json_lines<T: Serialize>(items: &[T]) -> Clean {
        let mut out = String::new();
        for item in items {
            out.push_str(&to_string(item, CompactFormatter));
            out.push('\n');
        }
        Clean(out)
    }

    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Clean parts one after the other. Each part went through the rules on its own: the
    /// caller joins them where no secret can straddle the seam (HOOK.md joins its listing
    /// of the plan at section headings).
    pub fn concat(parts: &[&Clean]) -> Clean {
        // Slice by slice: collected byte by byte, HOOK.md's 9 KB at the caps cost 70K
        // instructions.
        let mut out = String::with_capacity(parts.iter().map(|p| p.len()).sum());
        for part in parts {
            out.push_str(part.as_str());
        }
        Clean(out)
    }

    /// What a file records to prove this text is the one this redactor made, cut into
    /// `parts` as it was made ([`Clean::proven`]): each part's length is in the sum, so the
    /// same text cut elsewhere does not prove. As for [`Clean::write_sum`], `kind` names
    /// what it stands for.
    pub fn sum(&self, parts: &[Range<usize>], kind: u64) -> String {
        let texts: Vec<&str> = parts.iter().map(|part| &self.0[part.clone()]).collect();
        sum_of(&texts, kind)
    }

    /// Writes over `at`, a placeholder as long as a sum, the sum [`Vouched::proven`] takes
    /// of its texts at `parts`, in order: JSON this redactor has just made, whose parts
    /// are therefore proven when read back as they stand. `kind` names the type they stand
    /// for as this build defines it (a hash of the source that does), so that a build with
    /// another definition never takes them unparsed.
    pub fn write_sum<const N: usize>(
        &mut self,
        at: Range<usize>,
        parts: [Range<usize>; N],
        kind: u64,
    ) {
        let sum = sum_of(&parts.map(|part| &self.0[part]), kind);
        assert_eq!(at.len(), sum.len(), "a placeholder as long as the sum");
        self.0.replace_range(at, &sum);
    }

    /// `text` read back from a file, when `sum` is its [`Clean::sum`] of the same `kind`,
    /// cut into the same `parts`: the text this redactor made (the sum is seeded with its
    /// fingerprint), so clean, and cut where it was made.
    pub fn proven(text: &str, parts: &[Range<usize>], sum: &str, kind: u64) -> Option<Clean> {
        let texts: Option<Vec<&str>> = parts.iter().map(|part| text.get(part.clone())).collect();
        (sum == sum_of(&texts?, kind)).then(|| Clean(text.to_string()))
    }

    /// `parts` one after the other: lines of `kept`, a clean text, copied as they are, and
    /// new text, redacted (the new text between two kept parts at once). Every part is
    /// whole lines, so no secret the rules find within a line straddles a seam; what the
    /// caller keeps of `kept` is lines that stand for the same things as before (HOOK.md's
    /// listing: the lines of the steps a change left alone).
    pub fn splice(kept: &Clean, parts: &[Part]) -> Clean {
        let mut out = String::with_capacity(kept.len() + 256);
        let mut fresh = String::new();
        for part in parts {
            match part {
                Part::New(text) => fresh.push_str(text),
                Part::Kept(range) => {
                    out.push_str(&redact(&fresh));
                    fresh.clear();
                    out.push_str(&kept.0[range.clone()]);
                }
            }
        }
        out.push_str(&redact(&fresh));
        Clean(out)
    }

    /// Appends a newline (a JSONL record, a line of text).
    pub fn with_newline(mut self) -> Clean {
        self.0.push('\n');
        self
    }
}

/// A part of a text [`Clean::splice`] makes: a range of a clean text, or new text.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    Kept(std::ops::Range<usize>),
    New(String),
}

/// JSON this very redactor wrote earlier, to be written back as it is, unparsed and
/// unredacted: what a save spends most of its time on at the caps is the plan it did not
/// change. Made only from JSON that is whole and this redactor's: [`Parsed::vouch`], JSON
/// [`Vouched::parse_first`] has just parsed whole, read from a file that records this
/// redactor's [`FINGERPRINT`](super::FINGERPRINT) (a file another version wrote goes
/// through the rules again); [`Vouched::proven`], JSON this redactor made read back, as
/// the sum written with it proves ([`Clean::write_sum`]).
/// Writing it is the one raw fragment the serializer takes.
/// Shared, not copied: every change clones the hook it read (to tell whether it changed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vouched(Arc<str>);

impl Vouched {
    /// The JSON value `text` starts with, parsed as a `T`, and its text: parsing finds
    /// where the value ends (no search for its end, which would walk it a second time).
    pub fn parse_first<T: DeserializeOwned>(text: &str) -> serde_json::Result<(T, Parsed<'_>)> {
        let mut values = serde_json::Deserializer::from_str(text).into_iter::<T>();
        let value = values
            .next()
            .unwrap_or_else(|| Err(serde::de::Error::custom("no JSON value")))?;
        Ok((value, Parsed(&text[..values.byte_offset()])))
    }

    /// `jsons` read back from a file that records this redactor's fingerprint (`stamp`) and
    /// `sum` of them: the very texts a [`Clean::write_sum`] of the same `kind` was taken of,
    /// in order (the plan and its outline share one), so each is one whole JSON value this
    /// waymark made, and parses as what it stands for. Not parsed here: that is what it
    /// saves.
    pub fn proven<const N: usize>(
        jsons: [&str; N],
        stamp: &str,
        sum: &str,
        kind: u64,
    ) -> Option<[Vouched; N]> {
        (stamp == Self::fingerprint() && sum == sum_of(&jsons, kind))
            .then(|| jsons.map(|json| Vouched(json.into())))
    }

    /// The sum [`Clean::write_sum`] writes of these texts: for a test to make a file
    /// proven by hand.
    #[cfg(test)]
    pub fn sum(jsons: &[&Vouched], kind: u64) -> String {
        let texts: Vec<&str> = jsons.iter().map(|j| j.as_str()).collect();
        sum_of(&texts, kind)
    }

    /// This redactor's [`FINGERPRINT`](super::FINGERPRINT), as files record it.
    pub fn fingerprint() -> String {
        format!("{:016x}", super::FINGERPRINT)
    }

    /// The value of `key` in `object`, pretty JSON this redactor has just made of an
    /// object whose last member `key` is (`{ …, "key": VALUE\n}`), vouched for: it passed
    /// the rules as it was made, and stands as deep as a member of hook.json does.
    #[cfg(test)]
    pub fn last_member(object: &Clean, key: &str) -> Option<Vouched> {
        let text = object.as_str().strip_suffix("\n}")?;
        // Found from the start: a line of two spaces and a quoted key is a member of the
        // object itself (a nested one is indented further, no string holds a newline),
        // and its keys are distinct. From the end, the search walked the whole value back:
        // 0.25M instructions for a plan of 113 steps.
        let start = text.find(&format!("\n  \"{key}\": "))? + key.len() + 7;
        Some(Vouched(text[start..].into()))
    }

    /// Its items, `self` being a JSON array: each parsed as a `T`, and where each one's
    /// JSON stands in it (to be written back on its own: [`Vouched::serialize_part_or`]).
    pub fn items<T: DeserializeOwned>(
        &self,
    ) -> serde_json::Result<(Vec<T>, Vec<std::ops::Range<usize>>)> {
        use serde::de::Error;
        let text: &str = &self.0;
        let spaces = |from: usize| {
            from + text.as_bytes()[from..]
                .iter()
                .take_while(|b| b.is_ascii_whitespace())
                .count()
        };
        let (mut values, mut items) = (Vec::new(), Vec::new());
        let mut at = spaces(0);
        if text.as_bytes().get(at) != Some(&b'[') {
            return Err(serde_json::Error::custom("not an array"));
        }
        at = spaces(at + 1);
        if text.as_bytes().get(at) == Some(&b']') {
            return Ok((values, items));
        }
        loop {
            let (value, parsed) = Vouched::parse_first::<T>(&text[at..])?;
            values.push(value);
            items.push(at..at + parsed.end());
            at = spaces(at + parsed.end());
            match text.as_bytes().get(at) {
                Some(b',') => at = spaces(at + 1),
                Some(b']') => return Ok((values, items)),
                _ => {
                    return Err(serde_json::Error::custom(
                        "an array item not followed by , or ]",
                    ));
                }
            }
        }
    }

    /// The JSON as it will be written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether both are the one JSON text read once (not merely equal texts).
    pub fn same(&self, other: &Vouched) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Writes the JSON as it was read when `s` is the redacting serializer of [`Clean`],
    /// and has `otherwise` write the value it stands for to any other serializer
    /// (`to_value`, plain `to_vec`), which takes no raw JSON from waymark.
    pub fn serialize_or<S: serde::Serializer>(
        &self,
        s: S,
        otherwise: impl FnOnce(S) -> Result<S::Ok, S::Error>,
    ) -> Result<S::Ok, S::Error> {
        self.serialize_part_or(s, 0..self.0.len(), otherwise)
    }

    /// Whether the serializer running now writes vouched JSON as it is (the redacting
    /// serializer of [`Clean`]), so that a part of it may stand for several values.
    pub fn is_written_raw() -> bool {
        REDACTING.get()
    }

    /// [`Vouched::serialize_or`] for a part of it (`part`, its span): one of its
    /// [`Vouched::items`], or several of them and what stands between them.
    pub fn serialize_part_or<S: serde::Serializer>(
        &self,
        s: S,
        part: std::ops::Range<usize>,
        otherwise: impl FnOnce(S) -> Result<S::Ok, S::Error>,
    ) -> Result<S::Ok, S::Error> {
        if !REDACTING.get() {
            return otherwise(s);
        }
        // The redacting formatter writes it where serde_json asks it for a `null`.
        RAW.set(Some((self.0.clone(), part)));
        let done = s.serialize_unit();
        // Taken back whatever happened, so that no later `null` can be written as it.
        let left = RAW.take();
        debug_assert!(left.is_none(), "the vouched JSON was not written");
        done
    }
}

/// The text of one JSON value [`Vouched::parse_first`] parsed, not yet vouched for: the
/// stamp of the file it came from may be read after it.
#[derive(Debug, Clone, Copy)]
pub struct Parsed<'a>(&'a str);

impl Parsed<'_> {
    /// Where it ends in the text it was parsed from (a byte offset).
    pub fn end(&self) -> usize {
        self.0.len()
    }

    /// Vouched for when `stamp` is this redactor's fingerprint.
    pub fn vouch(self, stamp: &str) -> Option<Vouched> {
        (stamp == Vouched::fingerprint()).then(|| Vouched(self.0.into()))
    }
}

/// 16 hex digits of a 64-bit FNV-1a over `texts` a word at a time, seeded with this
/// waymark's version, its redactor and `kind`: another build never takes a file's plan as
/// its own. Not a defence against a forger (who could write hook.json anyway); any change
/// to one word of a text changes it (each step is a bijection), and each length is in it.
fn sum_of(texts: &[&str], kind: u64) -> String {
    let seed = format!(
        "waymark {} {:016x} {kind:016x}",
        env!("CARGO_PKG_VERSION"),
        super::FINGERPRINT
    );
    use crate::text::{FNV_BASIS, FNV_PRIME};
    let step = |h: u64, word: u64| (h ^ word).wrapping_mul(FNV_PRIME);
    let mut h = FNV_BASIS;
    for text in std::iter::once(seed.as_str()).chain(texts.iter().copied()) {
        let bytes = text.as_bytes();
        let words = bytes.chunks_exact(8);
        let mut tail = [0u8; 8];
        tail[..words.remainder().len()].copy_from_slice(words.remainder());
        for w in words {
            h = step(h, u64::from_le_bytes(w.try_into().expect("8 bytes")));
        }
        h = step(step(h, u64::from_le_bytes(tail)), bytes.len() as u64);
    }
    format!("{h:016x}")
}

thread_local! {
    /// Set while [`Clean`] serializes, with its redacting formatter: the only serializer
    /// a [`Vouched`] value is written raw to.
    static REDACTING: Cell<bool> = const { Cell::new(false) };
    /// The [`Vouched`] JSON the redacting formatter is to write next, in place of a `null`.
    static RAW: Cell<Option<(Arc<str>, std::ops::Range<usize>)>> = const { Cell::new(None) };
}

/// `value` with every string redacted, and whether any changed: for what is signed or
/// compared before it is stored (a receipt signs the command as it will be kept).
pub(crate) fn scrub<T: Serialize + DeserializeOwned>(value: &T) -> (T, bool) {
    let plain = serde_json::to_string(value).expect("serializable");
    let clean = to_string(value, CompactFormatter);
    if clean == plain {
        return (serde_json::from_str(&plain).expect("round-trips"), false);
    }
    (serde_json::from_str(&clean).expect("round-trips"), true)
}

fn to_string<T: Serialize + ?Sized, F: Formatter>(value: &T, inner: F) -> String {
    let mut out = Vec::with_capacity(256);
    let formatter = Redacting {
        inner,
        string: String::new(),
        in_string: false,
        escaped: false,
    };
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    let outer = REDACTING.replace(true);
    // waymark's types have string keys only; an error here is a bug, not bad input.
    let done = value.serialize(&mut ser);
    REDACTING.set(outer);
    done.expect("serializable");
    // SAFETY: as for `serde_json::to_string`, which converts the same way: the serializer
    // writes only the `str`s it is given, whole (strings, and raw JSON: `Vouched` text),
    // and ASCII (punctuation, numbers, escapes); the redactor hands it `str`s too.
    unsafe { String::from_utf8_unchecked(out) }
}

/// A serde_json formatter that holds each string back until it is complete, redacts it,
/// and writes it escaped through the formatter it wraps. Object keys are strings like any
/// other (a map from a payload can have anything for keys): `token_count` passes, as no
/// rule matches a bare name.
struct Redacting<F> {
    inner: F,
    /// The string being serialized, unescaped (one buffer for all of them: a save
    /// serializes thousands).
    string: String,
    /// Inside a string value (held back in `string`).
    in_string: bool,
    /// The string held back had a character serde_json escaped: it is escaped again when
    /// written (a string without one is written as it is).
    escaped: bool,
}

impl<F: Formatter> Redacting<F> {
    fn write_escaped<W: ?Sized + io::Write>(&mut self, w: &mut W, s: &str) -> io::Result<()> {
        let bytes = s.as_bytes();
        let mut run = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let escape = match b {
                b'"' => CharEscape::Quote,
                b'\\' => CharEscape::ReverseSolidus,
                b'\n' => CharEscape::LineFeed,
                b'\r' => CharEscape::CarriageReturn,
                b'\t' => CharEscape::Tab,
                0x08 => CharEscape::Backspace,
                0x0c => CharEscape::FormFeed,
                0x00..=0x1f => CharEscape::AsciiControl(b),
                _ => continue,
            };
            if run < i {
                self.inner.write_string_fragment(w, &s[run..i])?;
            }
            self.inner.write_char_escape(w, escape)?;
            run = i + 1;
        }
        if run < bytes.len() {
            self.inner.write_string_fragment(w, &s[run..])?;
        }
        Ok(())
    }
}

/// The character an escape stands for.
fn unescape(e: CharEscape) -> char {
    match e {
        CharEscape::Quote => '"',
        CharEscape::ReverseSolidus => '\\',
        CharEscape::Solidus => '/',
        CharEscape::Backspace => '\u{8}',
        CharEscape::FormFeed => '\u{c}',
        CharEscape::LineFeed => '\n',
        CharEscape::CarriageReturn => '\r',
        CharEscape::Tab => '\t',
        CharEscape::AsciiControl(b) => b as char,
    }
}

impl<F: Formatter> Formatter for Redacting<F> {
    fn begin_string<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.string.clear();
        self.in_string = true;
        self.escaped = false;
        Ok(())
    }

    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        if !self.in_string {
            return self.inner.write_string_fragment(w, fragment);
        }
        self.string.push_str(fragment);
        Ok(())
    }

    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        escape: CharEscape,
    ) -> io::Result<()> {
        if !self.in_string {
            return self.inner.write_char_escape(w, escape);
        }
        self.string.push(unescape(escape));
        self.escaped = true;
        Ok(())
    }

    fn end_string<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        if !self.in_string {
            return self.inner.end_string(w);
        }
        self.in_string = false;
        let s = std::mem::take(&mut self.string);
        self.inner.begin_string(w)?;
        match redact(&s) {
            // Nearly every string: no secret, nothing to escape, so written as it came.
            std::borrow::Cow::Borrowed(_) if !self.escaped => {
                self.inner.write_string_fragment(w, &s)?
            }
            std::borrow::Cow::Borrowed(_) => self.write_escaped(w, &s)?,
            std::borrow::Cow::Owned(r) => self.write_escaped(w, &r)?,
        }
        self.string = s;
        self.inner.end_string(w)
    }

    fn write_raw_fragment<W: ?Sized + io::Write>(
        &mut self,
        _w: &mut W,
        _fragment: &str,
    ) -> io::Result<()> {
        // Raw JSON would bypass the string-by-string redaction: waymark writes none but a
        // `Vouched` value (`write_null`).
        Err(io::Error::other("raw JSON is not written by waymark"))
    }

    fn write_null<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        match RAW.take() {
            // Sliced as text, so that the output stays UTF-8 (`to_string`).
            Some((vouched, part)) => w.write_all(vouched[part].as_bytes()),
            None => self.inner.write_null(w),
        }
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.begin_array(w)
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.end_array(w)
    }
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.inner.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.end_array_value(w)
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.begin_object(w)
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.end_object(w)
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.inner.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_are_redacted_and_the_json_stays_valid() {
        let v = json!({
            "token_count": 12,
            "command": "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 cargo test",
            "lines": ["password = \"hunter22\"", "ok \"quoted\"\n\ttab \u{1}"],
            "password": "not a secret by itself",
        });
        for clean in [Clean::json(&v), Clean::json_pretty(&v)] {
            let back: serde_json::Value = serde_json::from_slice(clean.as_bytes()).unwrap();
            assert_eq!(back["token_count"], 12);
            let text = clean.as_str();
            assert!(
                !text.contains("ghp_abc") && !text.contains("hunter22"),
                "{text}"
            );
            assert_eq!(back["lines"][1], "ok \"quoted\"\n\ttab \u{1}");
            assert_eq!(back["password"], "not a secret by itself");
        }
    }

    #[test]
    fn json_without_secrets_is_what_serde_json_writes() {
        let v = json!({"a": "plain \"text\" with \\ and \n", "b": [1, 2.5, null, true], "c": {}});
        assert_eq!(Clean::json(&v).as_bytes(), serde_json::to_vec(&v).unwrap());
        assert_eq!(
            Clean::json_pretty(&v).as_bytes(),
            serde_json::to_vec_pretty(&v).unwrap()
        );
    }

    #[test]
    fn scrub_reports_a_change() {
        let (same, changed) = scrub(&json!({"c": "cargo test"}));
        assert!(!changed);
        assert_eq!(same["c"], "cargo test");
        let (hidden, changed) =
            scrub(&json!({"c": "curl -H 'Authorization: Bearer abcdefghijklmnopqrstu'"}));
        assert!(changed);
        assert!(
            !hidden["c"]
                .as_str()
                .unwrap()
                .contains("abcdefghijklmnopqrstu")
        );
    }
}
