//! Scope globs: which files an intent owns.

use globset::{GlobBuilder, GlobSetBuilder};

/// True when `path` (root-relative) matches one of the `owned_scope` globs. A glob naming
/// a directory (`src/auth` or `src/auth/`) owns everything below it. `*` and `?` stay
/// within one path component, as in a shell (`web/*.ts` does not own
/// `web/admin/secrets/x.ts`); `**` crosses directories. No scope owns what is under
/// `.git/` or waymark's own `.orchestration/`, whatever its globs (`**` included): a write
/// there (a git hook, waymark's state) is out of every intent's scope (docs/governance.md).
pub fn in_scope(scope: &[String], path: &str) -> bool {
    let first = path
        .trim_start_matches("./")
        .split('/')
        .next()
        .unwrap_or_default();
    if NEVER_OWNED.contains(&first) {
        return false;
    }
    let mut builder = GlobSetBuilder::new();
    for pattern in scope {
        let p = pattern.trim().trim_start_matches("./");
        if p.is_empty() {
            continue;
        }
        for variant in [p.to_string(), format!("{}/**", p.trim_end_matches('/'))] {
            let glob = GlobBuilder::new(&variant).literal_separator(true).build();
            if let Ok(g) = glob {
                builder.add(g);
            }
        }
    }
    builder.build().is_ok_and(|set| set.is_match(path))
}

/// The top directories no scope owns: git's, and waymark's state.
pub const NEVER_OWNED: [&str; 2] = [".git", crate::rewind::STATE_DIR];

/// The literal directory or file an `owned_scope` entry starts from: its components up to
/// the first one holding a glob character (`src/auth/**` → `src/auth`, `src/*.ts` → `src`,
/// `src/middleware/jwt.ts` → itself, `**/*.rs` → ``).
pub fn base(pattern: &str) -> String {
    let p = pattern
        .trim()
        .trim_start_matches("./")
        .trim_end_matches('/');
    p.split('/')
        .take_while(|c| !c.contains(['*', '?', '[', '{']))
        .collect::<Vec<_>>()
        .join("/")
}

/// The directory part of a root-relative path (`` for a file at the root).
pub fn dirname(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

/// "Near the boundary" (docs/design.md, Post-hooks): `path` lies in the parent directory
/// (`dirname`) of a mapped scope path, i.e. beside the place where the scope begins,
/// where the next file over may well be outside it. Returns the scope entry it sits
/// beside. The caller checks that the path is in scope at all.
pub fn near_boundary<'a>(scope: &'a [String], path: &str) -> Option<&'a str> {
    let dir = dirname(path);
    scope.iter().map(String::as_str).find(|entry| {
        let b = base(entry);
        !b.is_empty() && b != path && dirname(&b) == dir
    })
}

/// Where a path from an event lands (the application's `project` locates it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Located {
    /// Inside the root: the normalized root-relative path (`/`-separated).
    Inside(String),
    /// Outside the root (or escaping it with `..`): the normalized absolute path.
    Outside(String),
}

impl Located {
    /// The path as it should be recorded: root-relative inside, absolute outside.
    pub fn display(&self) -> &str {
        match self {
            Located::Inside(p) | Located::Outside(p) => p,
        }
    }

    pub fn inside(&self) -> Option<&str> {
        match self {
            Located::Inside(p) => Some(p),
            Located::Outside(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_and_directories() {
        let scope = vec![
            "src/auth/**".to_string(),
            "src/middleware/jwt.ts".into(),
            "docs".into(),
        ];
        assert!(in_scope(&scope, "src/auth/login.ts"));
        assert!(in_scope(&scope, "src/middleware/jwt.ts"));
        assert!(in_scope(&scope, "docs/a/b.md"));
        assert!(!in_scope(&scope, "src/main.rs"));
        assert!(!in_scope(&[], "x"));
        // Git's directory and waymark's state are in no scope, not even `**`.
        let all = vec!["**".to_string(), ".git/**".into()];
        assert!(in_scope(&all, "src/main.rs"));
        for never in [
            ".git/hooks/pre-commit",
            ".orchestration/hook.json",
            "./.git/config",
        ] {
            assert!(!in_scope(&all, never), "{never}");
        }
        assert!(in_scope(&all, ".github/workflows/ci.yml"));
    }

    /// `*` stays within a directory, as in a shell: `web/*.ts` owns `web/app.ts`, not
    /// what is below `web/admin/` (issue 32, item 5); `**` goes below.
    #[test]
    fn a_star_does_not_cross_a_directory() {
        let scope = vec!["web/*.ts".to_string(), "api/**/*.rs".into()];
        assert!(in_scope(&scope, "web/app.ts"));
        assert!(!in_scope(&scope, "web/admin/secrets/x.ts"));
        assert!(in_scope(&scope, "api/v1/users/get.rs"));
        assert!(in_scope(&scope, "api/main.rs"));
    }

    #[test]
    fn bases_and_the_boundary() {
        assert_eq!(base("src/auth/**"), "src/auth");
        assert_eq!(base("./src/*.ts"), "src");
        assert_eq!(base("src/middleware/jwt.ts"), "src/middleware/jwt.ts");
        assert_eq!(base("**/*.rs"), "");
        let scope = vec!["src/auth/**".to_string(), "src/session.ts".into()];
        // Beside src/auth, in src/: near the boundary.
        assert_eq!(near_boundary(&scope, "src/session.ts"), Some("src/auth/**"));
        // Deep inside the scope: not.
        assert_eq!(near_boundary(&scope, "src/auth/login.ts"), None);
        assert_eq!(near_boundary(&scope, "src/auth/jwt/keys.ts"), None);
        assert_eq!(dirname("a.rs"), "");
    }

    #[test]
    fn a_located_path_is_recorded_as_located() {
        let inside = Located::Inside("src/a.rs".into());
        let outside = Located::Outside("/etc/hosts".into());
        assert_eq!(
            (inside.display(), inside.inside()),
            ("src/a.rs", Some("src/a.rs"))
        );
        assert_eq!((outside.display(), outside.inside()), ("/etc/hosts", None));
    }
}
