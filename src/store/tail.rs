//! Read the last lines of a file without reading the file.
//!
//! The trace grows without bound; every per-event read of "recent records" goes through
//! here and costs the same with a thousand records or a million (docs/design.md rule 5).

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use waymark_core::text::newlines;

/// The complete lines at the end of a file, oldest first.
#[derive(Debug, Default)]
pub struct TailLines {
    pub lines: Vec<String>,
    /// True when the file did not end with a newline (a torn last line, skipped).
    pub torn: bool,
}

/// `path` opened for reading; `None` when it is missing or not a regular file: a FIFO would
/// block the open until a writer comes (a hostile `transcript_path`), a device may never end.
pub fn open_regular(path: &Path) -> io::Result<Option<File>> {
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return Ok(None);
    }
    super::found(File::open(path))
}

/// Reads up to `max_lines` complete lines from the end of `path`, reading at most
/// `max_bytes` bytes. A missing file is an empty tail. A last line without its newline
/// is a torn write and is left out.
pub fn read_tail_lines(path: &Path, max_lines: usize, max_bytes: u64) -> io::Result<TailLines> {
    let Some(file) = open_regular(path)? else {
        return Ok(TailLines::default());
    };
    let len = file.metadata()?.len();
    if len == 0 || max_lines == 0 {
        return Ok(TailLines::default());
    }
    let floor = len.saturating_sub(max_bytes);
    // Read backwards into one buffer, growing the window fourfold from a guess of a line's size
    // until it holds `max_lines` newlines (plus the one before them) or hits a limit.
    let mut bytes: Vec<u8> = Vec::new();
    let mut end = len;
    let mut want = (max_lines as u64 + 1) * 512;
    while end > floor && newlines(&bytes).count() <= max_lines {
        let start = len.saturating_sub(want).max(floor);
        let mut buf = vec![0u8; (end - start) as usize];
        file.read_exact_at(&mut buf, start)?;
        buf.extend_from_slice(&bytes);
        bytes = buf;
        end = start;
        want = want.saturating_mul(4);
    }
    let torn = bytes.last() != Some(&b'\n');
    // Drop the torn tail; then keep the last `max_lines` lines, and of a window that did
    // not reach the file's start, never its partial first line. Only those lines are
    // decoded: a log read for its newest ten entries pays for ten, not for the chunk.
    let body = match newlines(&bytes).next_back() {
        Some(i) => &bytes[..=i],
        None => &bytes[..0],
    };
    let start = match newlines(body).nth_back(max_lines) {
        Some(i) => i + 1,
        None if end == 0 => 0,
        None => newlines(body).next().map_or(body.len(), |i| i + 1),
    };
    let body = &body[start..];
    // Valid UTF-8 (the usual case) is checked by the fast validator; only a file with bad
    // bytes pays for the lossy conversion.
    let text = match std::str::from_utf8(body) {
        Ok(t) => std::borrow::Cow::Borrowed(t),
        Err(_) => String::from_utf8_lossy(body),
    };
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    Ok(TailLines { lines, torn })
}

/// The first of `f`'s answers over the complete lines at the end of `path`, newest first,
/// reading backwards a chunk at a time and never more than `max_bytes`: a reader that
/// wants the last line of some kind (the transcript's last `usage`) reads one chunk, not
/// a window of lines. A last line without its newline (being written) is skipped.
pub fn find_from_end<T>(
    path: &Path,
    max_bytes: u64,
    f: impl FnMut(&str) -> Option<T>,
) -> io::Result<Option<T>> {
    find_before(path, u64::MAX, max_bytes, f)
}

/// [`find_from_end`] over the lines that end before byte `end` (the file's length when
/// it is shorter).
pub fn find_before<T>(
    path: &Path,
    end: u64,
    max_bytes: u64,
    mut f: impl FnMut(&str) -> Option<T>,
) -> io::Result<Option<T>> {
    let Some(file) = open_regular(path)? else {
        return Ok(None);
    };
    let len = file.metadata()?.len().min(end);
    let floor = len.saturating_sub(max_bytes);
    // `pending` holds the bytes after the last newline seen so far (a line's start not
    // yet read); the very end, up to the last newline, is a torn line and is dropped.
    let mut pending: Vec<u8> = Vec::new();
    let mut end = len;
    let mut torn_dropped = false;
    let chunk = 16 * 1024u64;
    while end > floor {
        let start = end.saturating_sub(chunk).max(floor);
        let mut buf = vec![0u8; (end - start) as usize];
        file.read_exact_at(&mut buf, start)?;
        buf.extend_from_slice(&pending);
        let mut line_end = buf.len();
        for i in newlines(&buf).rev() {
            if !torn_dropped {
                torn_dropped = true;
            } else if let Ok(line) = std::str::from_utf8(&buf[i + 1..line_end]) {
                if let Some(t) = f(line) {
                    return Ok(Some(t));
                }
            }
            line_end = i;
        }
        pending = buf[..line_end].to_vec();
        end = start;
    }
    // The file's first line, when the whole file was read.
    if end == 0 && torn_dropped {
        if let Ok(line) = std::str::from_utf8(&pending) {
            return Ok(f(line));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn last_lines_of_a_large_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let text: String = (0..100_000).map(|i| format!("{{\"n\":{i}}}\n")).collect();
        fs::write(&p, text).unwrap();
        let t = read_tail_lines(&p, 3, 1 << 20).unwrap();
        assert_eq!(
            t.lines,
            vec!["{\"n\":99997}", "{\"n\":99998}", "{\"n\":99999}"]
        );
        assert!(!t.torn);
    }

    #[test]
    fn torn_last_line_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        fs::write(&p, "a\nb\n{\"tor").unwrap();
        let t = read_tail_lines(&p, 10, 1 << 20).unwrap();
        assert_eq!(t.lines, vec!["a", "b"]);
        assert!(t.torn);
    }

    #[test]
    fn byte_cap_drops_the_partial_first_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        fs::write(&p, "aaaaaaaaaa\nbb\ncc\n").unwrap();
        let t = read_tail_lines(&p, 10, 7).unwrap();
        assert_eq!(t.lines, vec!["bb", "cc"]);
    }

    #[test]
    fn finds_the_newest_line_that_answers() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let mut text: String = (0..5000).map(|i| format!("line {i}\n")).collect();
        text.push_str("torn");
        fs::write(&p, text).unwrap();
        let even = |l: &str| {
            l.strip_prefix("line ")?
                .parse::<u32>()
                .ok()
                .filter(|n| n % 2 == 0)
        };
        assert_eq!(find_from_end(&p, 1 << 20, even).unwrap(), Some(4998));
        assert_eq!(
            find_from_end(&p, 1 << 20, |l| (l == "line 0").then_some(0)).unwrap(),
            Some(0)
        );
        assert_eq!(
            find_from_end(&p, 100, |l| (l == "line 0").then_some(0)).unwrap(),
            None
        );
        assert_eq!(
            find_from_end(&p, 1 << 20, |l| (l == "torn").then_some(1)).unwrap(),
            None
        );
        assert_eq!(
            find_from_end(&dir.path().join("none"), 10, |_| Some(1)).unwrap(),
            None
        );
    }

    #[test]
    fn missing_file_is_empty() {
        let t = read_tail_lines(Path::new("/nonexistent/x"), 5, 100).unwrap();
        assert!(t.lines.is_empty());
    }
}
