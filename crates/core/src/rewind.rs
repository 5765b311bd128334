//! Which paths a rewind may write. A snapshot is a commit anyone who can write to `.git`
//! can forge, and a rewind's journal is a file: a path from either is written only when it
//! names a file inside the project's work tree, never inside git's own directory nor
//! waymark's state directory (docs/rewind.md, "What a rewind will not do"). The same rule
//! judges every file of the project waymark writes on the project's word (the lessons
//! file too), on the path's text here and where it really lands in the application
//! (`store::project::Project::landing`, docs/guarantees.md).

/// The directory waymark keeps its state in, under the project's root.
pub const STATE_DIR: &str = ".orchestration";

/// Why a root-relative path (bytes, as git gives it, `/` between components) must not be
/// written by a rewind; `None` when it may. `state_dir` is waymark's own directory.
pub fn refusal(path: &[u8], state_dir: &str) -> Option<&'static str> {
    if path.is_empty() {
        return Some("an empty path");
    }
    if path.starts_with(b"/") {
        return Some("an absolute path, outside the project");
    }
    if path.contains(&0) {
        return Some("a NUL byte in the name");
    }
    let mut components = path.split(|b| *b == b'/');
    if components.clone().next() == Some(state_dir.as_bytes()) {
        return Some("inside waymark's state directory, which a rewind leaves alone");
    }
    components.find_map(|c| match c {
        b"" => Some("an empty component (`//`)"),
        b"." | b".." => Some("a `.` or `..` component, which could lead outside the project"),
        c if is_dot_git(c) => Some("inside `.git`, git's own directory"),
        _ => None,
    })
}

/// Whether a path component names git's directory: `.git` in any case (a case-insensitive
/// file system, macOS's by default, opens `.GIT` as `.git`), also with the code points
/// HFS+ ignores in names, as git itself checks.
pub fn is_dot_git(component: &[u8]) -> bool {
    let Ok(name) = std::str::from_utf8(component) else {
        return false;
    };
    let kept: String = name.chars().filter(|c| !hfs_ignored(*c)).collect();
    kept.eq_ignore_ascii_case(".git")
}

/// The code points HFS+ leaves out when it compares names (git's `next_hfs_char`).
fn hfs_ignored(c: char) -> bool {
    matches!(c, '\u{200c}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{206a}'..='\u{206f}' | '\u{feff}')
}

#[cfg(test)]
mod tests {
    use super::refusal;

    fn ok(path: &[u8]) -> bool {
        refusal(path, ".orchestration").is_none()
    }

    #[test]
    fn rewind_writes_files_of_the_project_only() {
        for fine in [
            &b"src/lib.rs"[..],
            b"caf\xe9.txt",
            b".gitignore",
            b".github/workflows/ci.yml",
            b"a/.git.txt",
            b"x.orchestration/y",
            b"..hidden",
        ] {
            assert!(ok(fine), "{}", String::from_utf8_lossy(fine));
        }
        for bad in [
            &b""[..],
            b"/etc/passwd",
            b"../x",
            b"a/../../x",
            b"./a",
            b"a//b",
            b".git/HEAD",
            b"sub/.git/hooks/post-commit",
            b".GIT/config",
            b".Git",
            ".g\u{200c}it/HEAD".as_bytes(),
            b".orchestration/hook.json",
            b"a\0b",
        ] {
            assert!(!ok(bad), "{}", String::from_utf8_lossy(bad));
        }
    }
}
