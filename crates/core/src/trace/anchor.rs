//! Heads anchored in git history: with `commit_trailers` on, each commit made during a
//! task carries `Waymark-Trace: <N> <link>`, the ledger's line count and its last line's
//! link when it was made. git history is not the ledger: rewriting the ledger before an
//! anchored line (and re-chaining after it) changes that line's link, which the commit
//! still names, so `waymark trace --verify` catches it without the key.

/// One `Waymark-Trace` trailer: the commit it is in, and the line and link it anchors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor {
    pub commit: String,
    pub line: u64,
    pub link: String,
}

impl Anchor {
    /// The trailer's value, `<N> <link>`, of `commit`; None when it is not of that form.
    pub fn parse(commit: &str, value: &str) -> Option<Anchor> {
        let (line, link) = value.trim().split_once(' ')?;
        let link = link.trim();
        let hex = link.len() == 64 && link.bytes().all(|b| b.is_ascii_hexdigit());
        Some(Anchor {
            commit: commit.to_string(),
            line: line.parse().ok().filter(|n| *n > 0)?,
            link: hex.then(|| link.to_string())?,
        })
    }

    /// The trailer's value for a ledger of `count` lines whose last line has `link`.
    pub fn value(count: u64, link: &str) -> String {
        format!("{count} {link}")
    }
}

/// Each line's link, in order (empty lines skipped, as the chain does).
pub fn links(ledger: &[u8]) -> Vec<String> {
    ledger
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(super::link)
        .collect()
}

/// What is wrong with the ledger (`links`: each line's link, its first 128 bits, in order,
/// as the chain's walk keeps them, `Verified::links`) by `anchor`, if anything. The
/// anchored link must be at its line, or later: a union merge may put another branch's
/// records before it (docs/git.md); before it, or nowhere, means the lines up to it were
/// changed.
pub fn check(links: &[u128], anchor: &Anchor) -> Option<String> {
    let at = anchor.line as usize;
    let wanted = super::chain::short(&anchor.link);
    let is_it = |l: &u128| Some(*l) == wanted;
    if links.get(at - 1).is_some_and(is_it) || links.iter().skip(at).any(is_it) {
        return None;
    }
    let short = &anchor.commit[..anchor.commit.len().min(12)];
    Some(match links.len() < at {
        true => format!(
            "commit {short} anchors line {at}, and the ledger has {} lines (lines were removed)",
            links.len()
        ),
        false => format!(
            "commit {short} anchors line {at} as {}…, and the ledger's line {at} is not that record (the ledger was rewritten before it)",
            &anchor.link[..12]
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` links that differ in their first 128 bits, as links do.
    fn links(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("{i:032x}{:032x}", 0)).collect()
    }

    #[test]
    fn an_anchor_holds_at_its_line_or_later_and_breaks_otherwise() {
        let l = links(5);
        let at = |line: u64, link: &str| Anchor::parse("abcdef", &Anchor::value(line, link));
        let check = |links: &[String], a: &Anchor| {
            let short: Vec<u128> = links
                .iter()
                .filter_map(|l| super::super::chain::short(l))
                .collect();
            check(&short, a)
        };
        assert_eq!(check(&l, &at(3, &l[2]).unwrap()), None);
        // Moved later by a merge: holds.
        assert_eq!(check(&l, &at(2, &l[4]).unwrap()), None);
        // Earlier, elsewhere, or past the end: broken.
        assert!(check(&l, &at(4, &l[1]).unwrap()).is_some());
        assert!(check(&l, &at(3, &"f".repeat(64)).unwrap()).is_some());
        let gone = check(&l, &at(9, &"f".repeat(64)).unwrap()).unwrap();
        assert!(gone.contains("has 5 lines"), "{gone}");
        assert_eq!(Anchor::parse("c", "0 ab"), None);
        assert_eq!(Anchor::parse("c", "3 xyz"), None);
        assert_eq!(Anchor::parse("c", "nonsense"), None);
    }
}
