//! The files a Bash command line writes, as far as its text says (scope enforcement's deny
//! mode judges them like a Write's path): output redirections, and the commands whose
//! arguments name what they write ([`writers`]), through `bash -c` scripts, `$(…)`,
//! pipelines and lists, and after a `cd`.
//!
//! What the text cannot say is reported, not guessed: a target that is not a literal path
//! (`> "$OUT"`, `> *.log`), a writer run by `find -exec` or `xargs`, inline code of an
//! interpreter that looks like it writes ([`writers::inline_code`]). A program that writes
//! files itself (`cargo build` into `target/`, `npm install` into `node_modules/`, `git
//! commit` into `.git/`) is not judged: its outputs are its own business.

use super::args::Found;
use super::command::DEPTH;
use super::lex::{self, Item, Line, Simple, Word};
use super::writers;

/// What a command line writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Writes {
    /// The files it names, as it names them: absolute, `~/…`, or relative to the
    /// directory it starts in (a `cd` before is applied).
    pub targets: Vec<Target>,
    /// Why some of what it writes cannot be named, one reason a case.
    pub unreadable: Vec<String>,
    /// The symbolic links it makes (as [`Target::path`] says a path): a write under one
    /// is unreadable, since it lands where the link points (already applied to the
    /// targets when [`of`] returns).
    pub links: Vec<String>,
}

/// A file written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub path: String,
    /// When `path` is a directory, the name the file gets in it (`cp a.rs dir` writes
    /// `dir/a.rs`); only the file system can tell.
    pub in_dir: Option<String>,
}

/// What `command` writes.
pub fn of(command: &str) -> Writes {
    within(command, DEPTH)
}

/// What `command` writes, its scripts read `depth` levels deep at most.
pub(super) fn within(command: &str, depth: usize) -> Writes {
    let mut out = Writes::default();
    walk(command, &Dir::Here, depth, &mut out);
    through_links(&mut out);
    out.targets.dedup();
    out.unreadable.dedup();
    out
}

/// Where relative paths start from at a point of the line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Dir {
    /// Where the command line runs.
    Here,
    /// After `cd DIR` (as written).
    At(String),
    /// After a `cd` to somewhere not named: why.
    Unknown(String),
}

fn walk(command: &str, start: &Dir, depth: usize, out: &mut Writes) {
    if depth == 0 {
        out.unreadable
            .push("its scripts nest too deep to read".to_string());
        return;
    }
    let Line {
        items,
        inner,
        unread,
    } = lex::read(command);
    // A line not read whole is not read again inside (see `shell::gather`).
    if let Some(why) = unread {
        out.unreadable.push(why.to_string());
    } else {
        for script in inner {
            walk(&script, start, depth - 1, out);
        }
    }
    let mut dir = start.clone();
    let mut saved = Vec::new();
    for item in items {
        match item {
            Item::Open => saved.push(dir.clone()),
            Item::Close => dir = saved.pop().unwrap_or_else(|| start.clone()),
            Item::Command(simple) => simple_command(&simple, &mut dir, depth, out),
        }
    }
}

fn simple_command(simple: &Simple, dir: &mut Dir, depth: usize, out: &mut Writes) {
    for w in &simple.writes {
        target(w, None, dir, out);
    }
    for found in writers::of(simple, depth) {
        match found {
            Found::File(w, in_dir) => target(&w, in_dir, dir, out),
            Found::Unreadable(why) => out.unreadable.push(why),
            Found::Script(script) => walk(&script, dir, depth - 1, out),
            Found::Cd(to) => *dir = cd(dir, to.as_ref()),
            Found::Link(w) => out.links.extend(join(dir, &w.text)),
            Found::Nested { by, script, depth } => {
                let w = within(&script, depth);
                if !w.targets.is_empty() || !w.unreadable.is_empty() {
                    let why = format!("`{by}` writes files the text does not name");
                    out.unreadable.push(why);
                }
            }
        }
    }
}

/// A target under a link the same command line makes is written through it: where it
/// lands cannot be told from the text (`ln -s /etc x && echo > x/passwd`).
fn through_links(out: &mut Writes) {
    let under = |t: &Target, link: &String| {
        let link = link.trim_end_matches('/');
        t.path
            .strip_prefix(link)
            .is_some_and(|rest| rest.starts_with('/'))
    };
    // The link itself is written once by the `ln` that makes it; a later write to it (`ln
    // -s docs/a src/l && cp x src/l`) lands where it points.
    let is_link = |t: &Target, l: &String| t.path == l.trim_end_matches('/');
    let mut made: Vec<&String> = Vec::new();
    let mut through_it = |t: &Target| match out.links.iter().find(|l| is_link(t, l)) {
        Some(l) if made.contains(&l) => true,
        Some(l) => {
            made.push(l);
            false
        }
        None => false,
    };
    let (through, kept): (Vec<Target>, Vec<Target>) = std::mem::take(&mut out.targets)
        .into_iter()
        .partition(|t| out.links.iter().any(|l| under(t, l)) || through_it(t));
    out.targets = kept;
    for t in through {
        out.unreadable.push(format!(
            "`{}` is written through a link the same command makes",
            t.path
        ));
    }
}

/// The directory after `cd TO` from `dir`.
fn cd(dir: &Dir, to: Option<&Word>) -> Dir {
    match to {
        None => Dir::At("~".into()),
        Some(w) if !w.literal || w.text == "-" => {
            Dir::Unknown(format!("it changes directory to `{}` first", w.text))
        }
        Some(w) => match (dir, join(dir, &w.text)) {
            (Dir::Unknown(why), None) => Dir::Unknown(why.clone()),
            (_, Some(path)) => Dir::At(path),
            (_, None) => Dir::Unknown(format!("it changes directory to `{}` first", w.text)),
        },
    }
}

/// `path` from `dir`: `None` when `dir` is not known.
fn join(dir: &Dir, path: &str) -> Option<String> {
    if path.starts_with('/') || path == "~" || path.starts_with("~/") {
        return Some(path.to_string());
    }
    match dir {
        Dir::Here => Some(path.to_string()),
        Dir::At(d) => Some(format!("{}/{path}", d.trim_end_matches('/'))),
        Dir::Unknown(_) => None,
    }
}

fn target(w: &Word, in_dir: Option<String>, dir: &Dir, out: &mut Writes) {
    if w.pipe || is_device(&w.text) {
        return;
    }
    if !w.literal {
        out.unreadable
            .push(format!("`{}` is not a literal path", w.text));
        return;
    }
    match (join(dir, &w.text), dir) {
        (Some(path), _) => out.targets.push(Target { path, in_dir }),
        (None, Dir::Unknown(why)) => out.unreadable.push(why.clone()),
        (None, _) => {}
    }
}

/// The devices a command writes to that are no file: `/dev/null`, the standard streams,
/// the terminal, a descriptor.
fn is_device(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/zero"
    ) || path.starts_with("/dev/fd/")
}

#[cfg(test)]
mod tests;
