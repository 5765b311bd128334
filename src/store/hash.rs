//! The SHA-256 of a file of the project (a checkpoint's file snapshots, a file a snapshot
//! leaves out), read in pieces: a file of any size costs its length, not its memory.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use sha2::{Digest, Sha256};

/// The SHA-256 of the content of the file at `path`, lowercase hex.
pub fn sha256_file(path: &Path) -> io::Result<String> {
    let mut file = File::open(path)?;
    let mut hash = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match file.read(&mut buf)? {
            0 => return Ok(waymark_core::text::hex(&hash.finalize())),
            n => hash.update(&buf[..n]),
        }
    }
}
