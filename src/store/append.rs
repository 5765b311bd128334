//! Appends that never interleave and repair what a killed writer left.

use std::fs::{self, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::lock::FileLock;
use waymark_redact::Clean;

/// Appends one JSONL record (a newline is added) under the file's lock, in one `write`.
///
/// If the file ends in a torn line (a writer was killed mid-write), the fragment is cut
/// off first, so the file again holds only whole records; the fragment is returned so the
/// caller can log it.
pub fn append_line(path: &Path, record: Clean) -> io::Result<Option<String>> {
    debug_assert!(!record.as_bytes().contains(&b'\n'));
    append_locked(path, record.with_newline().as_bytes(), true)
}

/// Appends several JSONL records at once (`text` is whole lines, each ending in a newline)
/// under the file's lock, in one write, repairing a torn tail first like [`append_line`].
pub fn append_lines(path: &Path, lines: &Clean) -> io::Result<Option<String>> {
    debug_assert!(lines.is_empty() || lines.as_bytes().ends_with(b"\n"));
    append_locked(path, lines.as_bytes(), true)
}

/// Appends one JSONL record made by `make` from the file's last complete line (`None`
/// when there is none), both under the file's lock: for a ledger whose records each name
/// the one before them (the trace's chain). The last line is read from the end, so an
/// append costs the same however long the file is. A torn tail is cut first, as by
/// [`append_line`].
pub fn append_chained(
    path: &Path,
    make: impl FnOnce(Option<&[u8]>) -> Clean,
) -> io::Result<Option<String>> {
    append_after(path, |last| {
        let record = make(last).with_newline();
        debug_assert_eq!(record.as_bytes().iter().filter(|&&b| b == b'\n').count(), 1);
        record
    })
}

/// Appends the whole lines `make` returns (each ending in a newline, none at all is
/// fine) given the file's last complete line, as [`append_chained`] does one: for a log
/// that must first be given back what it lost (the receipts, `task::store`).
pub fn append_after(
    path: &Path,
    make: impl FnOnce(Option<&[u8]>) -> Clean,
) -> io::Result<Option<String>> {
    let _critical = crate::store::deadline::enter();
    let (_lock, mut file, len) = open_locked(path)?;
    let torn = cut_torn_tail(&mut file, len)?;
    let len = file.seek(SeekFrom::End(0))?;
    let last = last_line(&mut file, len)?;
    let lines = make(last.as_deref());
    debug_assert!(lines.is_empty() || lines.as_bytes().ends_with(b"\n"));
    if !lines.is_empty() {
        write_record(&mut file, lines.as_bytes())?;
    }
    Ok(torn)
}

/// Makes what was appended to `path` durable (`fdatasync`): for the receipts, which
/// hook.json holds until then.
pub fn sync_appended(path: &Path) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.read(true);
    let (file, _) = super::nofollow::open(path, &mut options)?;
    file.sync_data()
}

/// Takes `path`'s lock (which makes the directory when it is missing) and opens the file
/// for appending, never through a link: the lock, the file and its length.
fn open_locked(path: &Path) -> io::Result<(FileLock, fs::File, u64)> {
    let lock = FileLock::acquire(path).map_err(io::Error::other)?;
    let mut options = OpenOptions::new();
    options.create(true).read(true).append(true);
    let (file, meta) = super::nofollow::open(path, &mut options)?;
    Ok((lock, file, meta.len()))
}

/// The last line of a file of `len` bytes that ends with a newline, without it.
fn last_line(file: &mut fs::File, len: u64) -> io::Result<Option<Vec<u8>>> {
    if len == 0 {
        return Ok(None);
    }
    let end = len - 1; // the final newline
    let start = line_start(file, end)?;
    let mut line = vec![0u8; (end - start) as usize];
    file.read_exact_at(&mut line, start)?;
    Ok(Some(line))
}

/// Where the line holding byte `end - 1` starts: just after the last newline before `end`
/// (0 when there is none), found walking back from `end` in chunks.
fn line_start(file: &mut fs::File, mut end: u64) -> io::Result<u64> {
    let mut buf = vec![0u8; 8192];
    while end > 0 {
        let start = end.saturating_sub(buf.len() as u64);
        let n = (end - start) as usize;
        file.read_exact_at(&mut buf[..n], start)?;
        if let Some(i) = waymark_core::text::newlines(&buf[..n]).next_back() {
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

/// Appends text (a log line) under the file's lock, in one write.
pub fn append_text(path: &Path, text: &Clean) -> io::Result<()> {
    append_locked(path, text.as_bytes(), false).map(|_| ())
}

fn append_locked(path: &Path, bytes: &[u8], repair: bool) -> io::Result<Option<String>> {
    let _critical = crate::store::deadline::enter();
    let (_lock, mut file, len) = open_locked(path)?;
    let torn = repair
        .then(|| cut_torn_tail(&mut file, len))
        .transpose()?
        .flatten();
    write_record(&mut file, bytes)?;
    Ok(torn)
}

/// The one write of an append (where the tests' "append.torn" fault tears it).
fn write_record(file: &mut fs::File, bytes: &[u8]) -> io::Result<()> {
    if let Some(fault) = crate::store::faults::due("append.torn") {
        file.write_all(&bytes[..bytes.len() / 2])?;
        crate::store::faults::strike("append.torn", fault);
    }
    file.write_all(bytes)
}

/// Truncates the file (of `len` bytes) back to its last newline when it does not end with
/// one.
fn cut_torn_tail(file: &mut fs::File, len: u64) -> io::Result<Option<String>> {
    if len == 0 {
        return Ok(None);
    }
    let mut last = [0u8; 1];
    file.read_exact_at(&mut last, len - 1)?;
    if last[0] == b'\n' {
        return Ok(None);
    }
    let cut = line_start(file, len)?;
    let mut fragment = vec![0u8; (len - cut).min(200) as usize];
    file.read_exact_at(&mut fragment, cut)?;
    file.set_len(cut)?;
    Ok(Some(String::from_utf8_lossy(&fragment).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chained_record_is_made_from_the_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let seen = |p: &Path| {
            let mut got = None;
            append_chained(p, |last| {
                got = last.map(|l| String::from_utf8_lossy(l).into_owned());
                Clean::text("{}")
            })
            .unwrap();
            got
        };
        assert_eq!(seen(&p), None);
        let long = format!("{{\"x\":\"{}\"}}", "y".repeat(10_000));
        append_line(&p, Clean::text(&long)).unwrap();
        assert_eq!(seen(&p).as_deref(), Some(long.as_str()));
        assert_eq!(seen(&p).as_deref(), Some("{}"));
        // A torn tail is cut first: the last line is the last whole one.
        fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .write_all(b"{\"torn")
            .unwrap();
        assert_eq!(seen(&p).as_deref(), Some("{}"));
    }

    #[test]
    fn torn_tail_is_cut_before_the_next_record() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        append_line(&p, Clean::text("{\"a\":1}")).unwrap();
        fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .write_all(b"{\"b\":")
            .unwrap();
        let torn = append_line(&p, Clean::text("{\"c\":3}")).unwrap();
        assert_eq!(torn.as_deref(), Some("{\"b\":"));
        assert_eq!(fs::read_to_string(&p).unwrap(), "{\"a\":1}\n{\"c\":3}\n");
    }

    #[test]
    fn a_symlinked_file_is_not_appended_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "keep\n").unwrap();
        let p = dir.path().join("t.jsonl");
        std::os::unix::fs::symlink(&victim, &p).unwrap();
        assert!(append_line(&p, Clean::text("{}")).is_err());
        assert!(append_text(&p, &Clean::text("x")).is_err());
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep\n");
    }

    #[test]
    fn a_file_that_is_one_torn_line_is_emptied() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        fs::write(&p, "garbage").unwrap();
        append_line(&p, Clean::text("{}")).unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "{}\n");
    }

    #[test]
    fn concurrent_appends_do_not_interleave() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let p = p.clone();
                std::thread::spawn(move || {
                    for i in 0..50 {
                        let rec =
                            format!("{{\"t\":{t},\"i\":{i},\"pad\":\"{}\"}}", "x".repeat(500));
                        append_line(&p, Clean::text(&rec)).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let text = fs::read_to_string(&p).unwrap();
        assert_eq!(text.lines().count(), 400);
        for line in text.lines() {
            serde_json::from_str::<serde_json::Value>(line).unwrap();
        }
    }
}
