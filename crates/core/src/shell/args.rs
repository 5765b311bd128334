//! What a command's words are read as: its arguments the getopt way, and what they say it
//! writes ([`Found`]), shared by the common writers (`writers`) and the other editors
//! (`editors`).

use super::lex::Word;

/// What one simple command's words say it writes, or does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A file written, and the name it gets when the path is a directory.
    File(Word, Option<String>),
    /// Something written that the text cannot name: why.
    Unreadable(String),
    /// A script the command runs (`bash -c SCRIPT`), to be read in turn.
    Script(String),
    /// `cd DIR` (`None`: home).
    Cd(Option<Word>),
    /// A symbolic link made (`ln -s TARGET LINK`): a write through it lands where the link
    /// points, which the text does not say.
    Link(Word),
    /// A script run by `find -exec` or `xargs` (`by`), to be read `depth` levels deep: if
    /// it writes, what it writes is named by what they read, not by the text.
    Nested {
        by: String,
        script: String,
        depth: usize,
    },
}

/// A command's arguments read the getopt way: options, with their values (a short option in
/// `takes`, or a long one in `long`, takes the next word when none is glued to it), and
/// operands, wherever they stand.
pub(super) struct Args<'a> {
    pub(super) operands: Vec<&'a Word>,
    options: Vec<(String, Option<Word>)>,
}

impl Args<'_> {
    pub(super) fn value(&self, names: &[&str]) -> Option<&Word> {
        self.options
            .iter()
            .find(|(k, _)| names.contains(&k.as_str()))
            .and_then(|(_, v)| v.as_ref())
    }

    pub(super) fn has(&self, names: &[&str]) -> bool {
        self.options
            .iter()
            .any(|(k, _)| names.contains(&k.as_str()))
    }
}

pub(super) fn parse<'a>(args: &'a [Word], takes: &str, long: &[&str]) -> Args<'a> {
    let mut out = Args {
        operands: Vec::new(),
        options: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(w) = it.next() {
        let t = w.text.as_str();
        if t == "--" {
            out.operands.extend(it);
            break;
        }
        if let Some(l) = t.strip_prefix("--") {
            let option = match l.split_once('=') {
                Some((k, v)) => (k.to_string(), Some(glued(w, v))),
                None if long.contains(&l) => (l.to_string(), it.next().cloned()),
                None => (l.to_string(), None),
            };
            out.options.push(option);
        } else if t.len() > 1 && t.starts_with('-') {
            for (i, c) in t[1..].char_indices() {
                if !takes.contains(c) {
                    out.options.push((c.to_string(), None));
                    continue;
                }
                let rest = &t[1 + i + c.len_utf8()..];
                let value = match rest {
                    "" => it.next().cloned(),
                    r => Some(glued(w, r)),
                };
                out.options.push((c.to_string(), value));
                break;
            }
        } else {
            out.operands.push(w);
        }
    }
    out
}

/// A part of `w`'s text, as literal as `w`.
pub(super) fn glued(w: &Word, text: &str) -> Word {
    Word::new(text, w.literal)
}
