//! The ledger's chain: each record names the SHA-256 of the line before it
//! (`metadata.waymark.prev`), so a line edited or removed (or inserted with a link to no
//! line of the ledger) breaks the chain at the line after it. [`Verifier`] walks the
//! ledger's lines and names the first bad one.

use std::collections::HashMap;

use super::Record;

/// What a record names as the line before it: the SHA-256 of that line, hex.
pub fn link(line: &[u8]) -> String {
    crate::receipt::sha256_hex(line)
}

/// The first line of the ledger whose chain does not hold, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    /// 1-based line number.
    pub line: u64,
    pub why: String,
}

/// What [`Verifier`] found: how many lines, from which line on they are chained, and the
/// first bad line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verified {
    pub lines: u64,
    /// The first chained record (older ledgers start unchained); None when none is.
    pub chained_from: Option<u64>,
    pub bad: Option<BadLine>,
    /// Where another branch's records join (a union merge, docs/git.md): `(line, after)`,
    /// line `line` continues line `after` (0: the empty ledger) instead of the line before.
    pub merges: Vec<(u64, u64)>,
    /// Each good line's link, its first 128 bits, in order (for the head, `head::check`).
    pub links: Vec<u128>,
}

/// Checks, line by line, that every chained record names the line before it, and that no
/// record after the chain began is unchained. Lines before the first chained record
/// (written by an older waymark) are counted, not checked.
///
/// A record may instead name an earlier line: that is where a second branch's records
/// begin after git merged two branches' ledgers by union (`.gitattributes`). It is
/// reported in [`Verified::merges`], not as a break: lines joined that way cannot be told
/// from whole records inserted there, so the report says where they are.
#[derive(Debug, Default)]
pub struct Verifier {
    found: Verified,
    /// The link of the line before.
    previous: String,
    /// Every line's link (its first 128 bits) to its number, for a merge's join.
    seen: HashMap<u128, u64>,
}

/// The first 128 bits of a link, as a number (a compact key for [`Verifier::seen`]).
pub(crate) fn short(link: &str) -> Option<u128> {
    link.get(..32)
        .and_then(|h| u128::from_str_radix(h, 16).ok())
}

impl Verifier {
    /// Takes the next line, with its newline if it has one. Returns false once a bad line
    /// is found: nothing after it is checked.
    pub fn push(&mut self, line: &[u8]) -> bool {
        self.found.lines += 1;
        let n = self.found.lines;
        let Some(body) = line.strip_suffix(b"\n") else {
            return self.bad(
                n,
                "the last line is torn (no newline): a writer was killed, the next append cuts it"
                    .into(),
            );
        };
        let prev = serde_json::from_slice::<Record>(body)
            .ok()
            .and_then(|r| r.metadata)
            .and_then(|m| m.waymark.prev);
        if let Some(why) = self.problem(n, prev) {
            return self.bad(n, why);
        }
        self.previous = link(body);
        let k = short(&self.previous).expect("a link is 64 hex digits");
        self.seen.insert(k, n);
        self.found.links.push(k);
        true
    }

    /// What is wrong with line `n`, which names `prev` as the line before it.
    fn problem(&mut self, n: u64, prev: Option<String>) -> Option<String> {
        let Some(p) = prev else {
            return self.found.chained_from.map(|_| {
                "it carries no link to the line before it: it was not written by waymark, or was edited".to_string()
            });
        };
        self.found.chained_from.get_or_insert(n);
        // The first chained record of a ledger begun by an older waymark links to an
        // unchained line: that is checked like any other.
        let joins = match p.as_str() {
            "" => Some(0),
            p => short(p).and_then(|k| self.seen.get(&k).copied()),
        };
        if p == self.previous {
            None
        } else if let Some(after) = joins {
            self.found.merges.push((n, after));
            None
        } else if n == 1 {
            Some("it names a line before it, but it is the first line: lines were removed from the start".to_string())
        } else {
            Some(format!(
                "it does not name line {} as the line before it, nor any earlier line: line {} was changed, or lines were removed or inserted between them",
                n - 1,
                n - 1
            ))
        }
    }

    fn bad(&mut self, line: u64, why: String) -> bool {
        self.found.bad = Some(BadLine { line, why });
        false
    }

    /// What was found.
    pub fn finish(self) -> Verified {
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record as waymark writes it, naming `prev` as the line before it (None: an older
    /// waymark's, unchained).
    fn record(id: &str, prev: Option<&str>) -> String {
        let mut waymark =
            serde_json::json!({"kind": "bash", "event": "PostToolUse", "session_id": "s-1"});
        if let Some(p) = prev {
            waymark["prev"] = p.into();
        }
        serde_json::json!({
            "version": "0.1.0", "id": id, "timestamp": "2026-03-01T12:00:00.000Z",
            "files": [], "metadata": {"waymark": waymark},
        })
        .to_string()
    }

    /// The ledger as waymark appends it: `ids.len()` records, each naming the line before
    /// it (the first, the empty ledger), after `before`.
    fn appended(before: &[String], ids: &[&str]) -> Vec<String> {
        let mut lines = before.to_vec();
        for id in ids {
            let prev = lines.last().map(|l| link(l.as_bytes())).unwrap_or_default();
            lines.push(record(id, Some(&prev)));
        }
        lines
    }

    /// What the verifier finds in `lines` (each with its newline, but the last when
    /// `torn`), read as the application reads the ledger: up to the first bad line; and
    /// what each push returned.
    fn verify(lines: &[String], torn: bool) -> (Vec<bool>, Verified) {
        let mut v = Verifier::default();
        let mut pushed = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            let mut bytes = l.as_bytes().to_vec();
            if !(torn && i + 1 == lines.len()) {
                bytes.push(b'\n');
            }
            pushed.push(v.push(&bytes));
            if pushed.last() == Some(&false) {
                break;
            }
        }
        (pushed, v.finish())
    }

    #[test]
    fn a_link_is_the_sha256_of_the_line() {
        assert_eq!(
            link(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn an_appended_ledger_holds() {
        let (pushed, found) = verify(&appended(&[], &["a", "b", "c"]), false);
        assert_eq!(pushed, [true, true, true]);
        assert_eq!(
            found,
            Verified {
                lines: 3,
                chained_from: Some(1),
                bad: None,
                merges: vec![],
                links: found.links.clone(),
            }
        );
        assert_eq!(found.links.len(), 3);
    }

    #[test]
    fn lines_an_older_waymark_wrote_are_counted_not_checked() {
        let older = [record("old-1", None), record("old-2", None)];
        let (pushed, found) = verify(&appended(&older, &["a", "b"]), false);
        assert_eq!(pushed, [true; 4]);
        assert_eq!((found.lines, found.chained_from), (4, Some(3)));
        assert_eq!((found.bad, found.merges), (None, vec![]));
    }

    /// Git's union merge of two branches' ledgers: the second branch's records follow
    /// the first's, its first record naming the line both branches started from.
    #[test]
    fn where_a_merged_branch_joins_is_listed_not_a_break() {
        let main = appended(&[], &["a", "b", "c"]);
        let branch = appended(&main[..1], &["x", "y"]);
        let mut merged = main.clone();
        merged.extend_from_slice(&branch[1..]);
        let (pushed, found) = verify(&merged, false);
        assert_eq!(pushed, [true; 5]);
        assert_eq!((found.bad, found.merges), (None, vec![(4, 1)]));
        // A branch begun on an empty ledger joins after line 0.
        let mut merged = main;
        merged.extend(appended(&[], &["x"]));
        let (_, found) = verify(&merged, false);
        assert_eq!((found.bad, found.merges), (None, vec![(4, 0)]));
    }

    #[test]
    fn the_first_bad_line_is_named_with_why() {
        let ledger = appended(&[], &["a", "b", "c"]);
        let mut changed = ledger.clone();
        changed[1] = changed[1].replace("\"b\"", "\"B\"");
        let mut removed = ledger.clone();
        removed.remove(1);
        let mut unchained = ledger.clone();
        unchained.insert(2, record("z", None));
        let not_named = |n: u64| {
            format!(
                "it does not name line {n} as the line before it, nor any earlier line: line {n} was changed, or lines were removed or inserted between them"
            )
        };
        let cases: [(&str, &[String], bool, u64, String); 5] = [
            ("torn", &ledger, true, 3, "the last line is torn (no newline): a writer was killed, the next append cuts it".into()),
            ("changed", &changed, false, 3, not_named(2)),
            ("removed", &removed, false, 2, not_named(1)),
            ("unchained after the chain began", &unchained, false, 3, "it carries no link to the line before it: it was not written by waymark, or was edited".into()),
            ("cut from the start", &ledger[1..], false, 1, "it names a line before it, but it is the first line: lines were removed from the start".into()),
        ];
        for (case, lines, torn, line, why) in cases {
            let (pushed, found) = verify(lines, torn);
            assert_eq!(found.bad, Some(BadLine { line, why }), "{case}");
            assert_eq!(found.lines, line, "{case}");
            let mut expected = vec![true; line as usize - 1];
            expected.push(false);
            assert_eq!(pushed, expected, "{case}: the bad line's push says so");
        }
    }
}
