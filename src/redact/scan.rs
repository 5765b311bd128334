//! Where the rules' keywords appear in a text, ASCII case-insensitively. Not Aho-Corasick:
//! building its automaton over the ~260 keywords costs ~3M instructions (measured), more
//! than a whole hook event, and every process would build it. Here the keywords are sorted
//! by their first two bytes; an 8K-bit set of their first three bytes (hashed) passes over
//! nearly every position with one lookup, and the keywords of a position that passes are
//! found by binary search. Building is a sort.

/// Lowercase ASCII pair of bytes as one index.
fn pair(a: u8, b: u8) -> usize {
    (a.to_ascii_lowercase() as usize) << 8 | b.to_ascii_lowercase() as usize
}

/// A lowercase pair and the lowercase byte after it, hashed onto 13 bits (the ~350
/// triples of the keywords fill 4% of them).
fn hash(pair: usize, c: u8) -> usize {
    (pair.wrapping_mul(0x9E37) >> 3 ^ c as usize) & 0x1FFF
}

fn test(set: &[u64], i: usize) -> bool {
    set[i >> 6] & (1 << (i & 63)) != 0
}

fn mark(set: &mut [u64], i: usize) {
    set[i >> 6] |= 1 << (i & 63);
}

/// The keywords, each with the rule it stands for (a keyword of several rules is listed
/// once per rule).
pub struct Scanner {
    /// Keywords of two bytes or more with the rule each stands for (a keyword of several
    /// rules is listed once per rule), sorted by their first two bytes.
    entries: Vec<(&'static [u8], u16)>,
    /// `(pair, first, end)` into `entries`, by pair.
    ranges: Vec<(u16, u16, u16)>,
    /// The first three bytes of the keywords of three bytes or more, hashed ([`hash`]).
    triples: Vec<u64>,
    /// The keywords of two bytes ([`pair`]).
    pairs: Vec<u64>,
}

impl Scanner {
    pub fn new(keywords: impl IntoIterator<Item = (&'static str, u16)>) -> Scanner {
        let mut keyed: Vec<(u16, &'static [u8], u16)> = Vec::new();
        let mut triples = vec![0u64; 1 << 7];
        let mut pairs = vec![0u64; 1 << 10];
        for (w, rule) in keywords {
            match w.as_bytes() {
                w @ [a, b] => {
                    mark(&mut pairs, pair(*a, *b));
                    keyed.push((pair(*a, *b) as u16, w, rule));
                }
                w @ [a, b, c, ..] => {
                    mark(&mut triples, hash(pair(*a, *b), c.to_ascii_lowercase()));
                    keyed.push((pair(*a, *b) as u16, w, rule));
                }
                _ => panic!("a keyword has two bytes or more: {w:?}"),
            }
        }
        keyed.sort_unstable_by_key(|k| k.0);
        let mut ranges: Vec<(u16, u16, u16)> = Vec::new();
        for (at, &(p, _, _)) in keyed.iter().enumerate() {
            match ranges.last_mut() {
                Some(last) if last.0 == p => last.2 = at as u16 + 1,
                _ => ranges.push((p, at as u16, at as u16 + 1)),
            }
        }
        Scanner {
            entries: keyed.into_iter().map(|(_, w, r)| (w, r)).collect(),
            ranges,
            triples,
            pairs,
        }
    }

    /// Calls `hit(rule, start, end)` for every keyword occurrence in `text`, in the order
    /// they start.
    pub fn scan(&self, text: &[u8], mut hit: impl FnMut(usize, usize, usize)) {
        let lower = u8::to_ascii_lowercase;
        let n = text.len();
        if n < 2 {
            return;
        }
        // The lowercase bytes at i, i + 1 and i + 2, carried along.
        let (mut a, mut b) = (lower(&text[0]), lower(&text[1]));
        for i in 0..n - 2 {
            let c = lower(&text[i + 2]);
            let p = (a as usize) << 8 | b as usize;
            if test(&self.triples, hash(p, c)) || test(&self.pairs, p) {
                self.compare(text, i, p as u16, &mut hit);
            }
            (a, b) = (b, c);
        }
        // The last position holds only a pair.
        let p = (a as usize) << 8 | b as usize;
        if test(&self.pairs, p) {
            self.compare(text, n - 2, p as u16, &mut hit);
        }
    }

    /// Compares the keywords starting with pair `p` against `text` at `i`.
    fn compare(&self, text: &[u8], i: usize, p: u16, hit: &mut impl FnMut(usize, usize, usize)) {
        let Ok(r) = self.ranges.binary_search_by_key(&p, |r| r.0) else {
            return;
        };
        let (_, lo, hi) = self.ranges[r];
        for &(kw, rule) in &self.entries[lo as usize..hi as usize] {
            if text[i..].len() >= kw.len() && text[i..i + kw.len()].eq_ignore_ascii_case(kw) {
                hit(rule as usize, i, i + kw.len());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_occurrence_in_any_case_and_nothing_else() {
        let words = ["sk-", "secret", "e|", "se", "api"];
        let s = Scanner::new(words.iter().enumerate().map(|(i, w)| (*w, i as u16)));
        let mut found = Vec::new();
        s.scan(b"My SECRET|sk-x api Secre|", |k, a, b| {
            found.push((k, a, b))
        });
        found.sort();
        let want = [
            (0, 10, 13),
            (1, 3, 9),
            (2, 23, 25),
            (3, 3, 5),
            (3, 19, 21),
            (4, 15, 18),
        ];
        assert_eq!(found, want);
    }
}
