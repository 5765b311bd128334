//! Where the rules' keywords appear in a text, ASCII case-insensitively. Not Aho-Corasick:
//! building its automaton over the ~260 keywords costs ~3M instructions (measured), more
//! than a whole hook event, and every process would build it. Here the table is built at
//! compile time (a `const fn`): the keywords sorted by their first two bytes, and bit sets
//! of their first two and three bytes. A scan passes over nearly every position with one
//! lookup of the two bytes there, as they are (every case of every keyword's first two
//! bytes is in the set, so no byte is lowercased first); the few positions that pass are
//! checked against the three-byte set, and their keywords found by binary search.

/// Lowercase ASCII pair of bytes as one index.
const fn pair(a: u8, b: u8) -> usize {
    (a.to_ascii_lowercase() as usize) << 8 | b.to_ascii_lowercase() as usize
}

/// A lowercase pair and the lowercase byte after it, hashed onto 13 bits (the ~350
/// triples of the keywords fill 4% of them).
const fn hash(pair: usize, c: u8) -> usize {
    (pair.wrapping_mul(0x9E37) >> 3 ^ c as usize) & 0x1FFF
}

fn test(set: &[u64], i: usize) -> bool {
    set[i >> 6] & (1 << (i & 63)) != 0
}

/// How many (keyword, rule) entries `lists` (each rule's keywords) hold.
pub const fn count(lists: &[&[&str]]) -> usize {
    let (mut n, mut i) = (0, 0);
    while i < lists.len() {
        n += lists[i].len();
        i += 1;
    }
    n
}

/// The keywords, each with the rule it stands for (a keyword of several rules is listed
/// once per rule), `N` of them.
pub struct Scanner<const N: usize> {
    /// `(first two bytes, keyword, rule)`, sorted by the first.
    entries: [(u16, &'static [u8], u16); N],
    /// The first two bytes of every keyword, in every case, as they are.
    starts: [u64; 1024],
    /// The first three bytes of the keywords of three bytes or more, hashed ([`hash`]).
    triples: [u64; 128],
    /// The keywords of two bytes ([`pair`]).
    pairs: [u64; 1024],
}

impl<const N: usize> Scanner<N> {
    /// The scanner of `lists`: rule `i`'s keywords are `lists[i]` (`N` is [`count`] of it).
    /// Every keyword has two bytes or more.
    pub const fn build(lists: &[&[&'static str]]) -> Scanner<N> {
        let mut entries: [(u16, &'static [u8], u16); N] = [(0, b"", 0); N];
        let mut triples = [0u64; 128];
        let mut pairs = [0u64; 1024];
        let mut starts = [0u64; 1024];
        let (mut n, mut rule) = (0, 0);
        while rule < lists.len() {
            let mut k = 0;
            while k < lists[rule].len() {
                let w = lists[rule][k].as_bytes();
                assert!(w.len() >= 2, "a keyword has two bytes or more");
                let p = pair(w[0], w[1]);
                // Each of the four cases of the pair.
                let a = [w[0].to_ascii_lowercase(), w[0].to_ascii_uppercase()];
                let b = [w[1].to_ascii_lowercase(), w[1].to_ascii_uppercase()];
                let mut c = 0;
                while c < 4 {
                    let raw = (a[c / 2] as usize) << 8 | b[c % 2] as usize;
                    starts[raw >> 6] |= 1 << (raw & 63);
                    c += 1;
                }
                if w.len() == 2 {
                    pairs[p >> 6] |= 1 << (p & 63);
                } else {
                    let h = hash(p, w[2].to_ascii_lowercase());
                    triples[h >> 6] |= 1 << (h & 63);
                }
                entries[n] = (p as u16, w, rule as u16);
                n += 1;
                k += 1;
            }
            rule += 1;
        }
        // Insertion sort by pair (a `const fn` has no sort; it runs once, at compile time).
        let mut i = 1;
        while i < N {
            let mut j = i;
            while j > 0 && entries[j - 1].0 > entries[j].0 {
                let t = entries[j - 1];
                entries[j - 1] = entries[j];
                entries[j] = t;
                j -= 1;
            }
            i += 1;
        }
        Scanner {
            entries,
            starts,
            triples,
            pairs,
        }
    }

    /// Calls `hit(rule, start, end)` for every keyword occurrence in `text`, in the order
    /// they start.
    pub fn scan(&self, text: &[u8], mut hit: impl FnMut(usize, usize, usize)) {
        let lower = u8::to_ascii_lowercase;
        let Some(&first) = text.first() else {
            return;
        };
        let mut from = (1, first as usize);
        while let Some((end, raw)) = self.next_start(text, from) {
            let (i, p) = (end - 1, pair((raw >> 8) as u8, text[end]));
            let triple = || {
                text.get(end + 1)
                    .is_some_and(|&c| test(&self.triples, hash(p, lower(&c))))
            };
            if test(&self.pairs, p) || triple() {
                self.compare(text, i, p as u16, &mut hit);
            }
            from = (end + 1, raw);
        }
    }

    /// From byte `end` on (`raw` holding the byte before it), the first byte that ends a
    /// pair some keyword starts with, and that pair as it is. A loop that holds nothing
    /// else, so that it stays in registers: one load and one bit test per byte (two bytes
    /// index at most 65,535, so the set's bounds need no check).
    fn next_start(
        &self,
        text: &[u8],
        (mut end, mut raw): (usize, usize),
    ) -> Option<(usize, usize)> {
        while end < text.len() {
            raw = (raw << 8 | text[end] as usize) & 0xFFFF;
            if self.starts[raw >> 6] & (1 << (raw & 63)) != 0 {
                return Some((end, raw));
            }
            end += 1;
        }
        None
    }

    /// Compares the keywords starting with pair `p` against `text` at `i`.
    fn compare(&self, text: &[u8], i: usize, p: u16, hit: &mut impl FnMut(usize, usize, usize)) {
        let first = self.entries.partition_point(|e| e.0 < p);
        for &(q, kw, rule) in &self.entries[first..] {
            if q != p {
                break;
            }
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
        const LISTS: &[&[&str]] = &[&["sk-"], &["secret"], &["e|"], &["se"], &["api"]];
        let s = Scanner::<{ count(LISTS) }>::build(LISTS);
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
