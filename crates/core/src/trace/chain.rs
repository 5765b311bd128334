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
fn short(link: &str) -> Option<u128> {
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
        if let Some(k) = short(&self.previous) {
            self.seen.insert(k, n);
        }
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
        } else if let Some(after) = joins.filter(|_| n > 1) {
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
