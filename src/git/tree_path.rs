//! A path from a snapshot's tree: bytes, as git gives them (a file name need not be
//! UTF-8), and safe for a rewind to write. It is checked where it is made, from git's
//! output or from a journal read back (`waymark_core::rewind::refusal`), so every change a
//! rewind plans has passed the check (docs/rewind.md, "What a rewind will not do").

use std::ffi::OsStr;
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::store::project::STATE_DIR;

/// A root-relative path, `/` between components, none of them `.`, `..` or `.git`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "Json", into = "Json")]
pub struct TreePath(Vec<u8>);

impl TreePath {
    /// The path, or why a rewind must not write it (a sentence naming it).
    pub fn new(bytes: Vec<u8>) -> Result<TreePath, String> {
        match waymark_core::rewind::refusal(&bytes, STATE_DIR) {
            None => Ok(TreePath(bytes)),
            Some(why) => Err(format!("`{}` is {why}", Shown(&bytes))),
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The path for the file system, byte for byte.
    pub fn as_path(&self) -> &Path {
        Path::new(OsStr::from_bytes(&self.0))
    }

    /// The directories it lies in, outermost first (`a`, `a/b` for `a/b/c`).
    pub fn ancestors(&self) -> impl Iterator<Item = &[u8]> {
        let bytes = &self.0;
        bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'/')
            .map(move |(i, _)| &bytes[..i])
    }
}

impl AsRef<[u8]> for TreePath {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Display for TreePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Shown(&self.0).fmt(f)
    }
}

/// A name for people: as it is when it is UTF-8, else with its bytes escaped (`caf\xe9`).
pub struct Shown<'a>(pub &'a [u8]);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match std::str::from_utf8(self.0) {
            Ok(s) => f.write_str(s),
            Err(_) => write!(f, "{}", self.0.escape_ascii()),
        }
    }
}

/// In JSON (the journal): a string when the name is UTF-8, else `{"hex": "<its bytes>"}`,
/// so that every name round-trips exactly.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Json {
    Text(String),
    Bytes { hex: String },
}

impl From<TreePath> for Json {
    fn from(p: TreePath) -> Json {
        match String::from_utf8(p.0) {
            Ok(s) => Json::Text(s),
            Err(e) => Json::Bytes {
                hex: waymark_core::text::hex(e.as_bytes()),
            },
        }
    }
}

impl TryFrom<Json> for TreePath {
    type Error = String;

    fn try_from(j: Json) -> Result<TreePath, String> {
        let bytes = match j {
            Json::Text(s) => s.into_bytes(),
            Json::Bytes { hex } => {
                waymark_core::text::unhex(&hex).ok_or_else(|| format!("bad hex {hex:?}"))?
            }
        };
        TreePath::new(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_round_trips_through_json_whatever_its_bytes() {
        for name in [&b"src/lib.rs"[..], b"caf\xc3\xa9.txt", b"caf\xe9.txt"] {
            let p = TreePath::new(name.to_vec()).unwrap();
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(
                serde_json::from_str::<TreePath>(&json).unwrap(),
                p,
                "{json}"
            );
        }
        let bad = serde_json::from_str::<TreePath>(r#"{"hex": "2e6769742f48454144"}"#);
        assert!(bad.unwrap_err().to_string().contains(".git/HEAD"));
    }
}
