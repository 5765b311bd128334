//! `.orchestration/intent_map.md`'s text: which files each intent was seen changing.
//!
//! A Markdown section per intent (`## INT-001: name`) with one `- path` line per file.
//! ScopeDrift reads it to tell a "scope expansion" (a file in scope that no one mapped yet)
//! and adds the file. The user may edit it; entries may also be directories or globs
//! (`- src/auth/`, `` - `src/auth/**` ``, as the forks write them), which cover what they match.

const HEADER: &str =
    "# Intent map\n\nFiles each intent was seen changing, kept by waymark (edit freely).\n";

/// The entries listed under intent `id`'s section.
pub fn entries(text: &str, id: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            inside = heading_names(h, id);
            continue;
        }
        if line.starts_with("# ") {
            inside = false;
            continue;
        }
        if inside {
            out.extend(entry(line));
        }
    }
    out
}

/// True when `path` is listed for `id`, itself or under a listed directory or glob.
pub fn is_mapped(text: &str, id: &str, path: &str) -> bool {
    let listed = entries(text, id);
    listed.iter().any(|e| e == path) || crate::governance::scope::in_scope(&listed, path)
}

/// The map with `path` added to `id`'s section (created at the end if missing, with the
/// file's header if the map is empty). `None` when the path is already mapped.
pub fn with_path(text: &str, id: &str, name: &str, path: &str) -> Option<String> {
    if is_mapped(text, id, path) {
        return None;
    }
    let line = format!("- {path}\n");
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let heading = lines
        .iter()
        .position(|l| l.strip_prefix("## ").is_some_and(|h| heading_names(h, id)));
    let Some(h) = heading else {
        let mut out = if text.trim().is_empty() {
            HEADER.to_string()
        } else {
            text.to_string()
        };
        if !out.ends_with('\n') {
            out.push('\n');
        }
        let title = if name.trim().is_empty() {
            id.to_string()
        } else {
            format!("{id}: {}", crate::text::one_line(name))
        };
        out.push_str(&format!("\n## {title}\n\n{line}"));
        return Some(out);
    };
    // After the section's last entry (or its heading), before the next heading.
    let end = (h + 1..lines.len())
        .find(|&n| lines[n].starts_with("# ") || lines[n].starts_with("## "))
        .unwrap_or(lines.len());
    let section = &lines[h + 1..end];
    let entries = section.iter().rposition(|l| entry(l).is_some());
    let at = h + 1 + entries.map_or(0, |i| i + 1);
    let mut out = lines[..at].concat();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    if at == h + 1 {
        out.push('\n');
    }
    out.push_str(&line);
    out.push_str(&lines[at..].concat());
    Some(out)
}

/// True when a `## …` heading names intent `id` (`INT-001: name`, `INT-001 — name`,
/// `Intent INT-001`).
fn heading_names(heading: &str, id: &str) -> bool {
    heading
        .split(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .any(|tok| tok == id)
}

/// The path of a `- path` / `* path` / `` - `path` — note `` line.
fn entry(line: &str) -> Option<String> {
    let t = line.trim_start();
    let rest = t
        .strip_prefix("- ")
        .or_else(|| t.strip_prefix("* "))?
        .trim();
    let path = match rest.strip_prefix('`') {
        Some(r) => r.split('`').next()?,
        None => rest.split_whitespace().next()?,
    };
    let path = path.trim_start_matches("./");
    (!path.is_empty()).then(|| path.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_sections_and_never_duplicates() {
        let t1 = with_path("", "INT-001", "JWT auth", "src/auth/a.ts").unwrap();
        assert!(t1.starts_with("# Intent map"));
        assert!(t1.ends_with("## INT-001: JWT auth\n\n- src/auth/a.ts\n"));
        assert_eq!(with_path(&t1, "INT-001", "JWT auth", "src/auth/a.ts"), None);
        let t2 = with_path(&t1, "INT-002", "Docs", "docs/x.md").unwrap();
        let t3 = with_path(&t2, "INT-001", "JWT auth", "src/auth/b.ts").unwrap();
        assert_eq!(
            entries(&t3, "INT-001"),
            vec!["src/auth/a.ts", "src/auth/b.ts"]
        );
        assert_eq!(entries(&t3, "INT-002"), vec!["docs/x.md"]);
        // The rest of the file is untouched.
        assert_eq!(t3.replace("- src/auth/b.ts\n", ""), t2);
    }

    #[test]
    fn the_forks_entries_cover_what_they_match() {
        let text =
            "# Map\n\n## INT-001 — JWT\n- `src/auth/` — auth module\n* src/middleware/jwt.ts\n";
        assert!(is_mapped(text, "INT-001", "src/auth/login.ts"));
        assert!(is_mapped(text, "INT-001", "src/middleware/jwt.ts"));
        assert!(!is_mapped(text, "INT-001", "src/other.ts"));
        assert!(!is_mapped(text, "INT-00", "src/auth/login.ts"));
    }

    #[test]
    fn a_new_section_stands_apart_at_the_end() {
        // (map, intent name, the map with `b.rs` added for A)
        let cases = [
            ("", "x", format!("{HEADER}\n## A: x\n\n- b.rs\n")),
            ("# Map", "x", "# Map\n\n## A: x\n\n- b.rs\n".into()),
            ("# Map\n", "", "# Map\n\n## A\n\n- b.rs\n".into()),
            (
                "# Map\n\n## B\n- c.rs\n",
                "two\nlines",
                "# Map\n\n## B\n- c.rs\n\n## A: two lines\n\n- b.rs\n".into(),
            ),
        ];
        for (map, name, want) in cases {
            assert_eq!(with_path(map, "A", name, "b.rs"), Some(want), "{map:?}");
        }
    }

    #[test]
    fn an_entry_joins_its_own_section() {
        // (map, the map with `src/long/path/b.rs` added for A)
        let cases = [
            ("## A\n", "## A\n\n- src/long/path/b.rs\n"),
            (
                "# Map\n\n## A: x\n",
                "# Map\n\n## A: x\n\n- src/long/path/b.rs\n",
            ),
            (
                "## B\n- c.rs\n## A\n",
                "## B\n- c.rs\n## A\n\n- src/long/path/b.rs\n",
            ),
            ("## A\n- a.rs", "## A\n- a.rs\n- src/long/path/b.rs\n"),
            (
                "## A\n- a.rs\n\nnotes\n## B\n- c.rs\n",
                "## A\n- a.rs\n- src/long/path/b.rs\n\nnotes\n## B\n- c.rs\n",
            ),
        ];
        for (map, want) in cases {
            let got = with_path(map, "A", "x", "src/long/path/b.rs");
            assert_eq!(got.as_deref(), Some(want), "{map:?}");
        }
    }
}
