//! The other programs that change files, beyond the common writers (`writers`): those
//! that edit the files named on their command line (`ed`, `ex`, `awk -i inplace`,
//! `rsync`'s destination), and those that write what their input names, which the text
//! cannot say (`patch`, `git apply`, `tar -x`, `unzip`, `cpio -i`), or run a command line
//! built at run time (`eval`, `source`). Deny mode judges the first by their files and asks
//! about the rest (docs/governance.md).

use super::args::{Found, parse};
use super::lex::Word;

/// What `name` (a program, its words after it `args`) writes, when it is one of these;
/// `None` for any other program.
pub fn of(name: &str, args: &[Word]) -> Option<Vec<Found>> {
    let files = |ws: &[&Word]| ws.iter().map(|w| Found::File((*w).clone(), None)).collect();
    let unreadable = |why: String| Some(vec![Found::Unreadable(why)]);
    match name {
        "ed" | "red" => Some(files(&parse(args, "p", &["prompt"]).operands)),
        "ex" => Some(files(&parse(args, "cSuTiwW", &[]).operands)),
        "awk" | "gawk" => {
            let long = ["assign", "field-separator", "include", "file", "source"];
            let a = parse(args, "vFife", &long);
            let inplace = a
                .value(&["i", "include"])
                .is_some_and(|w| w.text == "inplace");
            // The program text is the first operand, unless -f or -e gave it.
            let skip = usize::from(!a.has(&["f", "file", "e", "source"]));
            let edited = a.operands.get(skip..).filter(|_| inplace);
            Some(files(edited.unwrap_or_default()))
        }
        "rsync" => {
            let long = [
                "rsh",
                "exclude",
                "include",
                "filter",
                "files-from",
                "rsync-path",
            ];
            let a = parse(args, "eBfT", &long);
            let dest = a.operands.last().filter(|w| !w.text.contains(':'));
            Some(files(dest.map(std::slice::from_ref).unwrap_or_default()))
        }
        "patch" => match parse(args, "opdiDrBbFVYzgs", &["output"]).value(&["o", "output"]) {
            Some(out) => Some(files(&[out])),
            None => unreadable("`patch` writes the files its patch names".into()),
        },
        "tar" | "bsdtar" if extracts(args) => {
            unreadable(format!("`{name}` extracts the files its archive holds"))
        }
        "unzip" | "cpio" => unreadable(format!("`{name}` writes the files its archive holds")),
        "eval" | "source" | "." => {
            unreadable(format!("`{name}` runs a command line built at run time"))
        }
        _ => None,
    }
}

/// `git apply` and `git am` write the files their patch names.
pub fn git(sub: &str) -> Option<Vec<Found>> {
    matches!(sub, "apply" | "am").then(|| {
        vec![Found::Unreadable(format!(
            "`git {sub}` writes the files its patch names"
        ))]
    })
}

/// Whether `tar`'s words ask it to extract (`-x`, `x` in the first word's bundle,
/// `--extract`, `--get`).
fn extracts(args: &[Word]) -> bool {
    args.iter().enumerate().any(|(i, w)| {
        let t = w.text.as_str();
        t == "--extract"
            || t == "--get"
            || (t.starts_with('-') && !t.starts_with("--") && t.contains('x'))
            || (i == 0 && !t.starts_with('-') && t.contains('x'))
    })
}
