//! [`Clean`]: bytes that passed the redactor, the only thing waymark's files are written
//! from; JSON is redacted string by string as it is serialized, so its structure (and a
//! field named `token_count`) is never touched.

use std::io;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::ser::{CharEscape, CompactFormatter, Formatter, PrettyFormatter};

use super::{MASK, is_credential_name, redact};

/// Text or JSON every string of which went through [`redact`]. Only this module makes one,
/// and the store's record writers take nothing else.
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
        Clean::joined_lines(items.iter().map(Clean::json))
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

    /// A JSON object's line with one more field `name` holding `hex` (a MAC of the line
    /// before it: `store` seals journal lines so): nothing but hex digits is added, so the
    /// line stays clean. Anything else, or a line that is no object, is left as it was.
    pub fn with_hex_field(mut self, name: &str, hex: &str) -> Clean {
        let plain =
            |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
        let is_hex = !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit());
        if plain(name) && is_hex && self.0.len() > 2 && self.0.ends_with('}') {
            self.0.pop();
            self.0.push_str(&format!(",\"{name}\":\"{hex}\"}}"));
        }
        self
    }

    /// Clean lines as one JSON Lines text, each ending in a newline.
    pub fn joined_lines(lines: impl IntoIterator<Item = Clean>) -> Clean {
        let mut out = String::new();
        for line in lines {
            out.push_str(&line.0);
            out.push('\n');
        }
        Clean(out)
    }

    /// Appends a newline (a JSONL record, a line of text).
    pub fn with_newline(mut self) -> Clean {
        self.0.push('\n');
        self
    }
}

/// `value` with every string redacted, and whether any changed: for what is signed or
/// compared before it is stored (a receipt signs the command as it will be kept).
pub fn scrub<T: Serialize + DeserializeOwned>(value: &T) -> (T, bool) {
    let plain = serde_json::to_string(value).expect("serializable");
    let clean = to_string(value, CompactFormatter);
    (
        serde_json::from_str(&clean).expect("round-trips"),
        clean != plain,
    )
}

fn to_string<T: Serialize + ?Sized, F: Formatter>(value: &T, inner: F) -> String {
    let mut out = Vec::with_capacity(256);
    let formatter = Redacting {
        inner,
        string: String::new(),
        in_string: false,
        escaped: false,
        in_key: false,
        secret: false,
    };
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    // waymark's types have string keys only; an error here is a bug, not bad input.
    value.serialize(&mut ser).expect("serializable");
    // The serializer writes only the `str`s it is given, whole, and ASCII (punctuation,
    // numbers, escapes); the redactor hands it `str`s too.
    String::from_utf8(out).expect("JSON of UTF-8 strings")
}

/// A serde_json formatter that holds each string back until it is complete, redacts it,
/// and writes it escaped through the formatter it wraps. Object keys are strings like any
/// other (a map from a payload can have anything for keys): `token_count` passes, as no
/// rule matches a bare name. A key that names a credential ([`is_credential_name`]:
/// `password`, `clientSecret`, `api_key`) hides its value whole, whatever it looks like:
/// the strings and integers under it (an MCP tool's `{"password": "…"}`).
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
    /// Writing an object key.
    in_key: bool,
    /// Under a key that names a credential, until its value ends.
    secret: bool,
}

impl<F: Formatter> Redacting<F> {
    /// The mask, as a JSON string, in place of a number under a credential's key.
    fn write_mask<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.begin_string(w)?;
        self.inner.write_string_fragment(w, MASK)?;
        self.inner.end_string(w)
    }

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
        if self.in_key {
            self.secret = is_credential_name(&s);
        } else if self.secret && !s.is_empty() {
            self.string = s;
            self.inner.write_string_fragment(w, MASK)?;
            return self.inner.end_string(w);
        }
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
        // Raw JSON would bypass the string-by-string redaction: waymark writes none.
        Err(io::Error::other("raw JSON is not written by waymark"))
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
        self.in_key = true;
        self.secret = false;
        self.inner.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.in_key = false;
        self.inner.end_object_key(w)
    }
    fn write_i64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: i64) -> io::Result<()> {
        match self.secret {
            true => self.write_mask(w),
            false => self.inner.write_i64(w, value),
        }
    }
    fn write_u64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: u64) -> io::Result<()> {
        match self.secret {
            true => self.write_mask(w),
            false => self.inner.write_u64(w, value),
        }
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.secret = false;
        self.inner.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// JSON Lines: one redacted record a line, each ending in a newline.
    #[test]
    fn json_lines_are_one_redacted_record_a_line() {
        let records = [
            json!({"n": 1}),
            json!({"command": "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 make"}),
        ];
        let text = Clean::json_lines(&records).as_str().to_string();
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0], "{\"n\":1}\n");
        assert!(lines[1].ends_with("make\"}\n"), "{text}");
        assert!(!text.contains("ghp_abcdefghijklmnopqrstuvwxyz"), "{text}");
        assert_eq!(Clean::json_lines::<serde_json::Value>(&[]).as_str(), "");
    }

    #[test]
    fn strings_are_redacted_and_the_json_stays_valid() {
        let v = json!({
            "token_count": 12,
            "command": "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 cargo test",
            "lines": ["password = \"hunter22\"", "ok \"quoted\"\n\ttab \u{1}"],
            "password": "not a secret by itself",
            "mcp": {"tool_input": {"user": "bob", "clientSecret": "plain words", "pin": 1, "db_password": 4242, "secret": -7}},
            "passwords": ["a", "b"],
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
            // A key that names a credential hides its value, whatever it looks like.
            assert_eq!(back["password"], MASK);
            assert_eq!(back["mcp"]["tool_input"]["clientSecret"], MASK);
            assert_eq!(back["mcp"]["tool_input"]["db_password"], MASK);
            assert_eq!(back["mcp"]["tool_input"]["secret"], MASK);
            assert_eq!(back["mcp"]["tool_input"]["user"], "bob");
            assert_eq!(back["mcp"]["tool_input"]["pin"], 1);
            assert_eq!(back["passwords"], json!([MASK, MASK]));
            assert!(
                !text.contains("4242") && !text.contains("plain words"),
                "{text}"
            );
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
