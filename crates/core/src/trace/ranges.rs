//! Which lines of a file a mutation wrote, and a hash of each range's content.
//!
//! Agent Trace attributes line ranges at the recorded revision. Claude Code tells us what
//! changed without reading the file again: Write gives the new content (or, when it
//! replaced a file, a `structuredPatch`), Edit gives the `structuredPatch`. Only the lines
//! the agent added are attributed: a hunk's context lines were already there.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// One hunk of Claude Code's `structuredPatch` (Write and Edit results).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Hunk {
    pub old_start: u64,
    pub old_lines: u64,
    pub new_start: u64,
    pub new_lines: u64,
    pub lines: Vec<String>,
}

/// One attributed range, 1-based and inclusive, with the hash of its lines (a record's
/// `ranges[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineRange {
    pub start_line: u64,
    pub end_line: u64,
    /// `sha256:<hex>` of the range's lines, each followed by `\n`; `None` when the lines
    /// are not known (a hunk without its `lines`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_hash: Option<String>,
}

/// The whole content of a newly written file: lines `1..=n`.
pub fn whole_content(content: &str) -> Vec<LineRange> {
    let lines: Vec<&str> = content.lines().collect();
    if lines.is_empty() {
        return Vec::new();
    }
    vec![LineRange {
        start_line: 1,
        end_line: lines.len() as u64,
        content_hash: Some(content_hash(&lines)),
    }]
}

/// The added lines of each hunk, as runs of consecutive new-file lines. A hunk whose
/// `lines` are missing is attributed whole (`newStart..newStart+newLines-1`), unhashed.
pub fn from_patch(hunks: &[Hunk]) -> Vec<LineRange> {
    let mut out = Vec::new();
    for hunk in hunks {
        if hunk.lines.is_empty() {
            if hunk.new_lines > 0 && hunk.new_start > 0 {
                out.push(LineRange {
                    start_line: hunk.new_start,
                    end_line: hunk.new_start + hunk.new_lines - 1,
                    content_hash: None,
                });
            }
            continue;
        }
        let mut line_no = hunk.new_start.max(1);
        let mut run: Vec<&str> = Vec::new();
        let mut run_start = line_no;
        let flush = |run: &mut Vec<&str>, start: u64, out: &mut Vec<LineRange>| {
            if !run.is_empty() {
                out.push(LineRange {
                    start_line: start,
                    end_line: start + run.len() as u64 - 1,
                    content_hash: Some(content_hash(run)),
                });
                run.clear();
            }
        };
        for line in &hunk.lines {
            if let Some(added) = line.strip_prefix('+') {
                if run.is_empty() {
                    run_start = line_no;
                }
                run.push(added);
                line_no += 1;
            } else if line.starts_with('-') || line.starts_with('\\') {
                // A removed line (or "\ No newline at end of file") takes no new line.
            } else {
                flush(&mut run, run_start, &mut out);
                line_no += 1;
            }
        }
        flush(&mut run, run_start, &mut out);
    }
    out
}

/// `sha256:<hex>` of `lines`, each followed by a newline, so the same lines hash the same
/// wherever they land (the spec's "position-independent tracking").
pub fn content_hash(lines: &[&str]) -> String {
    let mut h = Sha256::new();
    for l in lines {
        h.update(l.as_bytes());
        h.update(b"\n");
    }
    format!("sha256:{}", crate::text::hex(&h.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunk(new_start: u64, new_lines: u64, lines: &[&str]) -> Hunk {
        Hunk {
            old_start: new_start,
            old_lines: 0,
            new_start,
            new_lines,
            lines: lines.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn whole_file() {
        let r = whole_content("a\nb\nc\n");
        assert_eq!((r[0].start_line, r[0].end_line), (1, 3));
        assert_eq!(
            r[0].content_hash.as_deref(),
            Some(content_hash(&["a", "b", "c"]).as_str())
        );
        assert!(whole_content("").is_empty());
        assert_eq!(whole_content("no newline")[0].end_line, 1);
    }

    #[test]
    fn only_added_lines_of_each_hunk() {
        // The fixture's Edit: one line replaced.
        let r = from_patch(&[hunk(1, 1, &["-hello world", "+HELLO world"])]);
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].start_line, r[0].end_line), (1, 1));
        assert_eq!(r[0].content_hash, Some(content_hash(&["HELLO world"])));
        // Context, two separate additions, a deletion inside a run.
        let r = from_patch(&[hunk(
            10,
            7,
            &[
                " ctx", "+a", "+b", " ctx", "-old", "+c", "-gone", "+d", " ctx",
            ],
        )]);
        let spans: Vec<_> = r.iter().map(|x| (x.start_line, x.end_line)).collect();
        assert_eq!(spans, vec![(11, 12), (14, 15)]);
        assert_eq!(r[1].content_hash, Some(content_hash(&["c", "d"])));
    }

    #[test]
    fn pure_deletion_and_missing_lines() {
        assert!(from_patch(&[hunk(3, 0, &["-x"])]).is_empty());
        let r = from_patch(&[hunk(4, 2, &[])]);
        assert_eq!(
            (r[0].start_line, r[0].end_line, r[0].content_hash.clone()),
            (4, 5, None)
        );
        assert!(from_patch(&[hunk(0, 0, &[])]).is_empty());
        // Without lines, a hunk that adds none, or starts at no line, attributes nothing.
        assert!(from_patch(&[hunk(4, 0, &[])]).is_empty());
        assert!(from_patch(&[hunk(0, 2, &[])]).is_empty());
    }

    /// The hash is of the lines as written, each ending in a newline (a fixed vector: the
    /// same lines must hash the same in every waymark that wrote a record).
    #[test]
    fn a_range_hash_is_the_sha256_of_its_lines() {
        assert_eq!(
            content_hash(&["a"]),
            "sha256:87428fc522803d31065e7bce3cf03fe475096631e5e07bbd7a0fde60c4cf25c7"
        );
        assert_eq!(
            whole_content("a\nb")[0].content_hash.as_deref(),
            Some("sha256:911169ddaaf146aff539f58c26c489af3b892dff0fe283c1c264c65ae5aa59a2")
        );
    }
}
