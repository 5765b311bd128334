//! Programs found on `PATH`: waymark's own (which `doctor` and `init` check and register)
//! and git's, which every git process waymark starts is run by.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The first executable file called `name` in the directories of `PATH`.
pub fn on_path(name: &str) -> Option<PathBuf> {
    find(&std::env::var_os("PATH")?, name)
}

/// The first executable file called `name` in the directories of `path` (as `PATH`
/// lists them; an empty entry is skipped, not taken for the working directory).
fn find(path: &OsStr, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path)
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// `git`, searched for on `PATH` once per process and run by its path from then on: a
/// capture starts four git processes, and each search tries every directory before git's
/// (one failed `execve` each; with version managers' shims first on `PATH`, half a
/// dozen). Not found, it stays `git`, and starting it fails as it always did.
pub fn git() -> &'static OsStr {
    static GIT: OnceLock<PathBuf> = OnceLock::new();
    GIT.get_or_init(|| on_path("git").unwrap_or_else(|| "git".into()))
        .as_os_str()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_first_executable_file_of_that_name_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let d = |n: &str| {
            let p = dir.path().join(n);
            std::fs::create_dir_all(&p).unwrap();
            p
        };
        let (plain, folder, exec, later) = (d("plain"), d("folder"), d("exec"), d("later"));
        std::fs::write(plain.join("git"), "not executable").unwrap();
        std::fs::create_dir(folder.join("git")).unwrap();
        for dir in [&exec, &later] {
            std::fs::write(dir.join("git"), "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(dir.join("git"), std::fs::Permissions::from_mode(0o755))
                .unwrap();
        }
        let path = std::env::join_paths([&plain, &folder, Path::new(""), &exec, &later]).unwrap();
        assert_eq!(find(&path, "git"), Some(exec.join("git")));
        let none = std::env::join_paths([&plain, &folder]).unwrap();
        assert_eq!(find(&none, "git"), None);
    }
}
