//! `.orchestration/intent_map.md`, which files each intent was seen changing: its path, and
//! a file added under the map's lock. Its text is `waymark_core::governance::intent_map`
//! (re-exported here).

use std::io;
use std::path::PathBuf;

use crate::store::project::Project;

pub use waymark_core::governance::intent_map::*;

pub const MAP_FILE: &str = "intent_map.md";

pub fn map_path(project: &Project) -> PathBuf {
    project.state_file(MAP_FILE)
}

/// Adds `path` to `id`'s section under the map's lock. Returns true when it was added.
/// When the addition lands at the end of the file it is one append; otherwise the file
/// is replaced atomically.
pub fn add(project: &Project, id: &str, name: &str, path: &str) -> io::Result<bool> {
    let map = map_path(project);
    let added = crate::store::edit_text(&map, &map, |text| {
        with_path(text, id, name, path).map(|t| (t, ()))
    })?;
    Ok(added.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn add_appends_under_lock() {
        let dir = tempfile::tempdir().unwrap();
        let p = Project::at(dir.path().to_path_buf());
        assert!(add(&p, "INT-1", "one", "a.rs").unwrap());
        assert!(!add(&p, "INT-1", "one", "a.rs").unwrap());
        assert!(add(&p, "INT-1", "one", "b.rs").unwrap());
        let text = fs::read_to_string(map_path(&p)).unwrap();
        assert_eq!(entries(&text, "INT-1"), vec!["a.rs", "b.rs"]);
    }
}
