//! The commands whose arguments name the files they write: `tee`, `touch`, `truncate`,
//! `dd of=`, `cp`/`mv`/`install`/`ln` (the destination; `mv`'s sources too, which it
//! removes), `sed -i`, `perl -i`/`ruby -i`, `sort -o`, `curl -o`, `wget -O`; and those
//! that run other code: `sh -c` scripts (read too), `find -exec` and `xargs` (writers of
//! files they name, which the text cannot), interpreters' inline code (python `-c`,
//! node/bun `-e`/`-p`, deno `eval`, perl and ruby `-e`, php `-r`, or a here-document fed to
//! them) when it looks like it writes.

use super::args::{Args, Found, glued, parse};
use super::command::{self, SHELLS, shell_scripts};
use super::lex::{Simple, Word};

/// What `simple` writes by its arguments (its redirections are the caller's); `depth`: how
/// many scripts deeper may still be read.
pub fn of(simple: &Simple, depth: usize) -> Vec<Found> {
    let texts: Vec<String> = simple.words.iter().map(|w| w.text.clone()).collect();
    if texts.is_empty() {
        return Vec::new();
    }
    let read = command::read(&texts);
    let mut found: Vec<Found> = read
        .writes
        .iter()
        .map(|&(w, from)| {
            let word = &simple.words[w];
            Found::File(glued(word, &word.text[from..]), None)
        })
        .collect();
    if let Some((script, rest)) = read.script {
        let rest = simple.words.get(rest..).unwrap_or_default();
        if rest.iter().any(|w| !w.literal) {
            let why = "a wrapper runs a command line holding words the shell changes";
            return vec![Found::Unreadable(why.into())];
        }
        found.push(Found::Script(script));
        return found;
    }
    // A program not named literally (`$EDITOR f`, `"$(which x)" f`) is unknown: what it
    // writes cannot be read from the text.
    if simple.words.get(read.at).is_some_and(|w| !w.literal) {
        let why = format!("the program `{}` is not named literally", texts[read.at]);
        found.push(Found::Unreadable(why));
        return found;
    }
    found.extend(by_arguments(simple, &texts[read.at..], read.at, depth));
    found
}

/// What the command at word `at` (its words from there, `texts`) writes by its arguments.
fn by_arguments(simple: &Simple, texts: &[String], at: usize, depth: usize) -> Vec<Found> {
    let args = &simple.words[at + 1..];
    let name = texts[0].rsplit('/').next().unwrap_or_default();
    let files = |a: Args| {
        a.operands
            .into_iter()
            .map(|w| Found::File(w.clone(), None))
            .collect()
    };
    match name {
        "tee" => files(parse(args, "", &[])),
        "touch" => files(parse(args, "drt", &["date", "reference"])),
        "truncate" => files(parse(args, "sr", &["size", "reference"])),
        "dd" => args
            .iter()
            .filter_map(|w| w.text.strip_prefix("of=").map(|f| glued(w, f)))
            .map(|f| Found::File(f, None))
            .collect(),
        "cp" | "mv" | "ln" | "install" => copy(name, args),
        "sort" => output(parse(args, "ko", &["output", "key"]), &["o", "output"]),
        "curl" => output(parse(args, "o", &["output"]), &["o", "output"]),
        "wget" => output(
            parse(args, "O", &["output-document"]),
            &["O", "output-document"],
        ),
        "sed" => sed(args),
        "cd" | "pushd" => vec![Found::Cd(
            parse(args, "", &[]).operands.first().map(|w| (*w).clone()),
        )],
        "find" => find(args, depth),
        "xargs" => xargs(args, depth),
        // An applet is the program it names (`busybox sed -i …`).
        // Each applet a level (`busybox busybox …` must not run the stack out).
        "busybox" | "toybox" if texts.len() > 1 => match depth.checked_sub(1).filter(|d| *d > 0) {
            Some(depth) => by_arguments(simple, &texts[1..], at + 1, depth),
            None => vec![Found::Unreadable(
                "its applets run applets nested too deep to read".into(),
            )],
        },
        // Codex CLI runs a patch from the shell as its apply_patch tool does.
        "apply_patch" | "applypatch" => patched(texts, &simple.heredocs),
        "git" => super::git_subcommand(texts)
            .and_then(super::editors::git)
            .unwrap_or_default(),
        n if SHELLS.contains(&n) => shell_scripts(args, &simple.heredocs)
            .into_iter()
            .map(Found::Script)
            .collect(),
        _ => super::editors::of(name, args)
            .unwrap_or_else(|| inline(name, args, &simple.heredocs).into_iter().collect()),
    }
}

/// The files a patch `apply_patch` is handed names (`super::patch`).
fn patched(texts: &[String], heredocs: &[String]) -> Vec<Found> {
    let patch = super::patch::of_command(texts, heredocs).unwrap_or_default();
    super::patch::files(&patch)
        .into_iter()
        .map(|(path, _)| Found::File(Word::new(path, true), None))
        .collect()
}

/// The file an option names for the output (`sort -o F`, `curl -o F`, `wget -O F`); `-`
/// is the standard output.
fn output(a: Args, names: &[&str]) -> Vec<Found> {
    let file = a.value(names).filter(|w| w.text != "-");
    file.map(|w| Found::File(w.clone(), None))
        .into_iter()
        .collect()
}

fn basename(w: &Word) -> &str {
    let t = w.text.trim_end_matches('/');
    t.rsplit('/').next().unwrap_or(t)
}

/// `dir/name-of-source`.
fn inside(dir: &Word, source: &Word) -> Word {
    let text = format!("{}/{}", dir.text.trim_end_matches('/'), basename(source));
    Word::new(text, dir.literal && source.literal)
}

/// `cp`, `mv`, `ln`, `install`: the destination (`-t DIR`, else the last operand; a file
/// in it when it is a directory), and `mv`'s sources.
fn copy(name: &str, args: &[Word]) -> Vec<Found> {
    let takes = if name == "install" { "gmoSt" } else { "St" };
    let long = ["target-directory", "suffix", "mode", "owner", "group"];
    let a = parse(args, takes, &long);
    let file = |w: &Word| Found::File(w.clone(), None);
    if name == "install" && a.has(&["d", "directory"]) {
        return a.operands.into_iter().map(file).collect();
    }
    let (sources, dest, into) = match (a.value(&["t", "target-directory"]), &a.operands[..]) {
        (Some(dir), all) => (all, dir, true),
        (None, [only]) if name == "ln" => {
            return vec![Found::File(glued(only, basename(only)), None)];
        }
        (None, [sources @ .., dest]) if !sources.is_empty() => (
            sources,
            *dest,
            sources.len() > 1 || dest.text.ends_with('/'),
        ),
        _ => return Vec::new(),
    };
    let mut found: Vec<Found> = Vec::new();
    if name == "ln" && a.has(&["s", "symbolic"]) {
        found.push(Found::Link(dest.clone()));
    }
    if name == "mv" {
        found.extend(sources.iter().map(|s| file(s)));
    }
    match (into, a.has(&["T", "no-target-directory"]), sources) {
        (_, true, _) => found.push(file(dest)),
        (true, _, _) => found.extend(sources.iter().map(|s| file(&inside(dest, s)))),
        (false, _, [source]) if !source.literal => found.push(file(&inside(dest, source))),
        (false, _, [source]) => {
            found.push(Found::File(dest.clone(), Some(basename(source).into())))
        }
        _ => {}
    }
    found
}

/// `sed -i` (`-i.bak`, `--in-place[=SUF]`, BSD's `-i ''`): its files, after the script
/// (the first operand, unless `-e`/`-f` gave it).
fn sed(args: &[Word]) -> Vec<Found> {
    let (mut in_place, mut script_given, mut operands) = (false, false, Vec::new());
    let mut it = args.iter().peekable();
    while let Some(w) = it.next() {
        let t = w.text.as_str();
        if t == "--" {
            operands.extend(it);
            break;
        }
        if let Some(l) = t.strip_prefix("--") {
            let (k, glued) = l.split_once('=').map_or((l, false), |(k, _)| (k, true));
            match k {
                "in-place" => in_place = true,
                "expression" | "file" => script_given = true,
                _ => {}
            }
            if !glued && ["expression", "file", "line-length"].contains(&k) {
                it.next();
            }
        } else if t.len() > 1 && t.starts_with('-') {
            for (i, c) in t[1..].char_indices() {
                let rest = &t[1 + i + c.len_utf8()..];
                match c {
                    'i' => {
                        in_place = true;
                        if rest.is_empty() && it.peek().is_some_and(|n| n.text.is_empty()) {
                            it.next();
                        }
                    }
                    'e' | 'f' => script_given = true,
                    'l' => {}
                    _ => continue,
                }
                if c != 'i' && rest.is_empty() {
                    it.next();
                }
                break;
            }
        } else {
            operands.push(w);
        }
    }
    let files = operands
        .get(usize::from(!script_given)..)
        .unwrap_or_default();
    let files = files.iter().filter(|_| in_place);
    files.map(|w| Found::File((*w).clone(), None)).collect()
}

/// `find … -exec CMD … ;`: a writer run on the files find names.
fn find(args: &[Word], depth: usize) -> Vec<Found> {
    let mut found = Vec::new();
    let mut it = args.iter();
    while let Some(w) = it.next() {
        if ["-exec", "-execdir", "-ok", "-okdir"].contains(&w.text.as_str()) {
            let words: Vec<Word> = it
                .by_ref()
                .take_while(|w| w.text != ";" && w.text != "+")
                .cloned()
                .collect();
            found.extend(nested("find -exec", words, depth));
        }
    }
    found
}

/// `xargs [options] CMD …`: a writer run on the words xargs reads.
fn xargs(args: &[Word], depth: usize) -> Vec<Found> {
    let mut it = args.iter();
    while let Some(w) = it.next() {
        let t = w.text.as_str();
        match t.strip_prefix('-') {
            Some(o) if o.len() == 1 && "adEILnPs".contains(o) => _ = it.next(),
            Some(_) => {}
            None => {
                // The words xargs reads go after the command's own.
                let read = Word::new("{}", false);
                let words = std::iter::once(w).chain(it).cloned().chain([read]);
                return nested("xargs", words.collect(), depth)
                    .into_iter()
                    .collect();
            }
        }
    }
    Vec::new()
}

/// A command run by `find` or `xargs`: if it writes anything, what it writes is named by
/// what they read, not by the text. Its scripts are read one level deeper than the caller.
fn nested(by: &str, words: Vec<Word>, depth: usize) -> Option<Found> {
    let program = words.first()?.text.clone();
    // `xargs xargs xargs …`: each one a level, bounded like scripts.
    let Some(depth) = depth.checked_sub(1).filter(|d| *d > 0) else {
        return Some(Found::Unreadable(format!(
            "`{by} {program}` runs commands nested too deep to read"
        )));
    };
    let simple = Simple {
        words,
        ..Simple::default()
    };
    let by = format!("{by} {program}");
    let found = of(&simple, depth);
    let writes = |f: &Found| matches!(f, Found::File(..) | Found::Unreadable(_) | Found::Link(_));
    if found.iter().any(writes) {
        return Some(Found::Unreadable(format!(
            "`{by}` writes files the text does not name"
        )));
    }
    // A script it runs (`find -exec sh -c '…'`), or one a command under it runs: the walker
    // reads it (`writes`), and asks when it writes.
    found.into_iter().find_map(|f| match f {
        Found::Script(script) => Some(Found::Nested {
            by: by.clone(),
            script,
            depth,
        }),
        nested @ Found::Nested { .. } => Some(nested),
        _ => None,
    })
}

/// Words in inline code that suggest it writes a file or runs a command that may.
const WRITE_MARKERS: &[&str] = &[
    "write",
    "append",
    "dump(",
    "rename",
    "unlink",
    "remove",
    "rmtree",
    "copy",
    "move",
    "mkdir",
    "truncate",
    "put_contents",
    "touch",
    "symlink",
    "system",
    "subprocess",
    "popen",
    "spawn",
    "exec",
    "'w'",
    "\"w\"",
    "'wb'",
    "\"wb\"",
    "'w+'",
    "\"w+\"",
    "'>",
    "\">",
];

/// An interpreter's inline code (or here-document), when it looks like it writes; `perl
/// -i`/`ruby -i`'s files.
fn inline(name: &str, args: &[Word], heredocs: &[String]) -> Vec<Found> {
    let family = [
        "python", "node", "nodejs", "bun", "deno", "perl", "ruby", "php",
    ]
    .into_iter()
    .find(|f| name == *f || (*f == "python" && name.starts_with("python")));
    let Some(family) = family else {
        return Vec::new();
    };
    let (code, mut found) = match family {
        "perl" | "ruby" => in_place(args),
        _ => (inline_code(family, args), Vec::new()),
    };
    let code = code.or_else(|| (!heredocs.is_empty()).then(|| heredocs.join("\n")));
    if let Some(marker) = code.as_deref().and_then(writes_in_code) {
        found.push(Found::Unreadable(format!(
            "`{name}` runs inline code that may write files (it says `{marker}`)"
        )));
    }
    found
}

/// The first marker of a write in `code`.
fn writes_in_code(code: &str) -> Option<&'static str> {
    let lower = code.to_lowercase();
    WRITE_MARKERS.iter().copied().find(|m| lower.contains(m))
}

/// The code given inline to python (`-c`), node/bun (`-e`, `-p`, `--eval`, `--print`),
/// deno (`eval`), php (`-r`); `None` for a script file.
fn inline_code(family: &str, args: &[Word]) -> Option<String> {
    let flags: &[&str] = match family {
        "python" => &["-c"],
        "php" => &["-r"],
        "deno" => &["eval"],
        _ => &["-e", "-p", "--eval", "--print", "eval"],
    };
    let mut it = args.iter();
    while let Some(w) = it.next() {
        let t = w.text.as_str();
        if flags.contains(&t) {
            return it.next().map(|c| c.text.clone());
        }
        if family == "python" && t.starts_with("-c") {
            return Some(t[2..].to_string());
        }
        if !t.starts_with('-') || (family == "python" && t == "-m") {
            return None;
        }
    }
    None
}

/// perl's and ruby's options: the inline code (`-e`/`-E`), and with `-i[EXT]` the files
/// edited in place (the operands after the script, a file when no `-e` gave it).
fn in_place(args: &[Word]) -> (Option<String>, Vec<Found>) {
    let (mut code, mut edit, mut operands) = (None::<String>, false, Vec::new());
    let mut it = args.iter();
    while let Some(w) = it.next() {
        let t = w.text.as_str();
        if t == "--" {
            operands.extend(it);
            break;
        }
        if t.len() < 2 || !t.starts_with('-') {
            operands.push(w);
            continue;
        }
        for (i, c) in t[1..].char_indices() {
            let rest = &t[1 + i + c.len_utf8()..];
            match c {
                'i' => edit = true,
                'e' | 'E' => {
                    let given = match rest {
                        "" => it.next().map(|c| c.text.clone()),
                        glued => Some(glued.into()),
                    };
                    code = Some(code.unwrap_or_default() + "\n" + &given.unwrap_or_default());
                }
                c if "IMmFCx0dDlV".contains(c) => {}
                _ => continue,
            }
            break;
        }
    }
    let files = operands
        .get(usize::from(code.is_none())..)
        .unwrap_or_default();
    let found = files
        .iter()
        .filter(|_| edit)
        .map(|w| Found::File((*w).clone(), None));
    (code, found.collect())
}
