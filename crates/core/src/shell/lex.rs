//! A command line read the way the shell reads it, as far as classifying it and knowing
//! what it writes need: simple commands of words (quotes removed, each marked literal or
//! not), their output redirections and here-documents, subshell parentheses, and the
//! scripts inside `$(…)`, backquotes and `<(…)` / `>(…)`, which run too.

/// One word as the shell passes it on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word {
    /// The word with its quotes removed; an expansion is kept as written (`$OUT`).
    pub text: String,
    /// False when the shell would change the word before using it: a parameter or command
    /// substitution, a glob, a brace expansion, `~user`.
    pub literal: bool,
    /// A process substitution (`>(gzip > f)`): a pipe, not a file.
    pub pipe: bool,
}

impl Word {
    /// A word that is no pipe.
    pub fn new(text: impl Into<String>, literal: bool) -> Word {
        let text = text.into();
        Word {
            text,
            literal,
            pipe: false,
        }
    }
}

/// A simple command: its words, the files its redirections open for writing, and the
/// bodies of its here-documents.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Simple {
    pub words: Vec<Word>,
    pub writes: Vec<Word>,
    pub heredocs: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Command(Simple),
    /// `(`: a subshell begins; what it changes (its `cd`) ends at its `)`.
    Open,
    Close,
}

/// A command line read: its items in order, and the scripts run inside its words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Line {
    pub items: Vec<Item>,
    pub inner: Vec<String>,
    /// Not read whole: it is longer than [`MAX_LEN`], or its `$(…)`, `<(…)` or `((…))`
    /// nest deeper than [`NESTING`] (the rest of the line, from the one too deep, is one
    /// word). What it runs or writes cannot be told from what was read.
    pub unread: Option<Unread>,
}

/// Why a command line was not read whole ([`Line::unread`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unread {
    #[error("it is longer than {} KiB", MAX_LEN >> 10)]
    TooLong,
    #[error("its `$(…)` nest deeper than {} levels", NESTING)]
    TooDeep,
}

/// How deep `$(…)`, `<(…)` and `((…))` are read inside one another: each level is a
/// reader of its own on the stack, so the bound keeps a crafted line (10,000 `$(`) from
/// overflowing it. Scripts nest far less than this.
pub const NESTING: usize = 32;

/// Lines longer than this (in bytes) are not read: a command of a few MiB (the hook's input
/// may be 64) would cost more than the hook's deadline. Not a command anyone types; a
/// here-document of a large file, at most.
pub const MAX_LEN: usize = 1 << 20;

/// Reads `command`.
pub fn read(command: &str) -> Line {
    if command.len() > MAX_LEN {
        return Line {
            unread: Some(Unread::TooLong),
            ..Line::default()
        };
    }
    let mut lexer = Lexer::new(command.chars().collect(), 0, false);
    lexer.run();
    lexer.line
}

struct Lexer {
    chars: Vec<char>,
    at: usize,
    line: Line,
    current: Simple,
    /// Here-documents whose bodies begin after the next newline: (item index, delimiter,
    /// leading tabs stripped).
    heredocs: Vec<(usize, String, bool)>,
    /// Reading inside `$(` or `<(`: a `)` with no `(` open ends it.
    nested: bool,
    /// Subshells open.
    depth: usize,
    /// How many `$(…)`, `<(…)` or `((…))` this reader is inside ([`NESTING`] at most).
    level: usize,
}

impl Lexer {
    fn new(chars: Vec<char>, at: usize, nested: bool) -> Lexer {
        Lexer {
            chars,
            at,
            line: Line::default(),
            current: Simple::default(),
            heredocs: Vec::new(),
            nested,
            depth: 0,
            level: 0,
        }
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn run(&mut self) {
        let mut last_end = usize::MAX;
        while let Some(c) = self.peek(0) {
            match c {
                '\n' => {
                    self.at += 1;
                    self.end_command();
                    self.read_heredoc_bodies();
                }
                c if c.is_whitespace() => self.at += 1,
                '#' => self.skip_comment(),
                // `&>` is a redirection.
                ';' | '|' | '&' if c != '&' || self.peek(1) != Some('>') => {
                    self.at += 1;
                    self.end_command();
                }
                // `(( a > b ))` is arithmetic: no command, no redirection.
                '(' if self.peek(1) == Some('(') && self.current.words.is_empty() => {
                    self.at += 1;
                    self.balanced();
                }
                ')' if self.nested && self.depth == 0 => {
                    self.at += 1;
                    // Closed: the caller's sign that the `)` was found.
                    self.nested = false;
                    break;
                }
                '(' | ')' => self.subshell(c == '('),
                // `[[ a > b ]]` compares: no redirection.
                '<' | '>' if self.in_test() => {
                    self.at += 1;
                    self.current.words.push(Word::new(c, true));
                }
                '<' | '>' | '&' => {
                    if last_end == self.at && self.last_word_is_fd() {
                        self.current.words.pop();
                    }
                    self.redirection();
                }
                _ => {
                    let word = self.word();
                    last_end = self.at;
                    self.current.words.push(word);
                }
            }
        }
        self.end_command();
    }

    /// At a subshell's `(` (`open`) or `)`.
    fn subshell(&mut self, open: bool) {
        self.at += 1;
        self.end_command();
        if open {
            self.depth += 1;
            self.line.items.push(Item::Open);
        } else {
            self.depth = self.depth.saturating_sub(1);
            self.line.items.push(Item::Close);
        }
    }

    fn last_word_is_fd(&self) -> bool {
        self.current.words.last().is_some_and(|w| {
            w.literal && !w.text.is_empty() && w.text.bytes().all(|b| b.is_ascii_digit())
        })
    }

    /// Inside `[[ … ]]`.
    fn in_test(&self) -> bool {
        let words = &self.current.words;
        words.first().is_some_and(|w| w.text == "[[") && !words.iter().any(|w| w.text == "]]")
    }

    fn skip_comment(&mut self) {
        while self.peek(0).is_some_and(|c| c != '\n') {
            self.at += 1;
        }
    }

    fn end_command(&mut self) {
        let simple = std::mem::take(&mut self.current);
        if !simple.words.is_empty() || !simple.writes.is_empty() {
            self.line.items.push(Item::Command(simple));
        }
    }

    /// At `<`, `>` or `&>`: the operator and its operand.
    fn redirection(&mut self) {
        let op: String = self.chars[self.at..].iter().take(3).collect();
        let (len, kind) = match () {
            _ if op.starts_with("&>>") => (3, Op::Write),
            _ if op.starts_with("&>") || op.starts_with(">>") || op.starts_with(">|") => {
                (2, Op::Write)
            }
            _ if op.starts_with("<<<") => (3, Op::Read),
            _ if op.starts_with("<<") => (2, Op::Heredoc),
            _ if op.starts_with("<>") => (2, Op::Write),
            _ if op.starts_with(">&") || op.starts_with("<&") => (2, Op::Dup),
            _ if op.starts_with(">(") || op.starts_with("<(") => (0, Op::Process),
            _ if op.starts_with('>') => (1, Op::Write),
            _ => (1, Op::Read),
        };
        self.at += len;
        if kind == Op::Process {
            let word = self.word();
            self.current.words.push(word);
            return;
        }
        let strip_tabs = kind == Op::Heredoc && self.peek(0) == Some('-');
        if strip_tabs {
            self.at += 1;
        }
        while self.peek(0).is_some_and(|c| c == ' ' || c == '\t') {
            self.at += 1;
        }
        if self.peek(0).is_none_or(|c| "\n;|&()<>".contains(c)) {
            return;
        }
        let operand = self.word();
        match kind {
            Op::Write => self.current.writes.push(operand),
            // `>&file` (not a descriptor, not `-`) is `&>file`.
            Op::Dup
                if !(operand.text == "-" || operand.text.bytes().all(|b| b.is_ascii_digit())) =>
            {
                self.current.writes.push(operand);
            }
            Op::Heredoc => {
                let index = self.line.items.len();
                self.heredocs.push((index, operand.text, strip_tabs));
            }
            _ => {}
        }
    }

    /// After a newline: the bodies of the here-documents opened on the line before, each
    /// up to its delimiter, given to the command that opened it.
    fn read_heredoc_bodies(&mut self) {
        for (index, delimiter, strip_tabs) in std::mem::take(&mut self.heredocs) {
            let mut body = Vec::new();
            while self.at < self.chars.len() {
                let end = self.chars[self.at..]
                    .iter()
                    .position(|&c| c == '\n')
                    .map_or(self.chars.len(), |n| self.at + n);
                let line: String = self.chars[self.at..end].iter().collect();
                self.at = (end + 1).min(self.chars.len());
                let line = if strip_tabs {
                    line.trim_start_matches('\t').to_string()
                } else {
                    line
                };
                if line == delimiter {
                    break;
                }
                body.push(line);
            }
            if let Some(Item::Command(simple)) = self.line.items.get_mut(index) {
                simple.heredocs.push(body.join("\n"));
            }
        }
    }

    /// One word, from here up to white space or an operator outside quotes.
    fn word(&mut self) -> Word {
        let mut w = Word::new("", true);
        let start = self.at;
        while let Some(c) = self.peek(0) {
            match c {
                '\'' => {
                    self.at += 1;
                    while let Some(q) = self.peek(0) {
                        self.at += 1;
                        if q == '\'' {
                            break;
                        }
                        w.text.push(q);
                    }
                }
                '"' => self.double_quoted(&mut w),
                '\\' => {
                    self.at += 1;
                    if let Some(n) = self.peek(0) {
                        w.text.push(n);
                        self.at += 1;
                    }
                }
                '$' | '`' => self.expansion(&mut w),
                '<' | '>' if self.at == start && self.peek(1) == Some('(') => {
                    self.at += 1;
                    let inner = self.balanced();
                    w.text = format!("{c}({inner})");
                    w.pipe = true;
                    self.line.inner.push(inner);
                }
                c if c.is_whitespace() || "\n;|&()<>".contains(c) => break,
                c => {
                    let changed = match c {
                        '*' | '?' => true,
                        // A bracket is a pattern only when it closes in the word: `[`, `[[`
                        // and `[ -f x ]` are words as typed.
                        '[' => self.rest_of_word().contains(']'),
                        '{' => self.brace_expansion(),
                        // `~` and `~/…` are the home directory (the caller knows it);
                        // `~user` is not read.
                        '~' => {
                            let name = |n: char| n.is_alphanumeric() || "_-+".contains(n);
                            self.at == start && self.peek(1).is_some_and(name)
                        }
                        _ => false,
                    };
                    w.literal &= !changed;
                    w.text.push(c);
                    self.at += 1;
                }
            }
        }
        w
    }

    fn double_quoted(&mut self, w: &mut Word) {
        self.at += 1;
        while let Some(q) = self.peek(0) {
            match q {
                '"' => {
                    self.at += 1;
                    return;
                }
                '\\' => {
                    self.at += 1;
                    if let Some(n) = self.peek(0) {
                        if !"$`\"\\\n".contains(n) {
                            w.text.push('\\');
                        }
                        w.text.push(n);
                        self.at += 1;
                    }
                }
                '$' | '`' => self.expansion(w),
                _ => {
                    w.text.push(q);
                    self.at += 1;
                }
            }
        }
    }

    /// At `$` or a backquote: a parameter, an arithmetic or a command substitution, kept
    /// as written; a command substitution's script is read as well.
    fn expansion(&mut self, w: &mut Word) {
        let c = self.chars[self.at];
        let next = self.peek(1);
        let expands = |n: char| {
            n == '(' || n == '{' || n == '_' || n.is_alphanumeric() || "@*#?$!-".contains(n)
        };
        if c == '$' && !next.is_some_and(expands) {
            w.text.push(c);
            self.at += 1;
            return;
        }
        w.literal = false;
        if c == '`' {
            self.backquoted(w);
            return;
        }
        self.at += 1;
        if next == Some('(') {
            let arithmetic = self.peek(1) == Some('(');
            let inner = self.balanced();
            w.text.push_str(&format!("$({inner})"));
            if !arithmetic {
                self.line.inner.push(inner);
            }
            return;
        }
        // `${…}` up to its `}`, else a name (or one character: `$?`).
        let rest = &self.chars[self.at..];
        let end = match next {
            Some('{') => rest
                .iter()
                .position(|&c| c == '}')
                .map_or(rest.len(), |n| n + 1),
            _ => rest
                .iter()
                .take_while(|c| c.is_alphanumeric() || **c == '_')
                .count()
                .max(1)
                .min(rest.len()),
        };
        w.text.push('$');
        w.text.extend(&rest[..end]);
        self.at += end;
    }

    /// At a backquote: the command substitution up to the next one.
    fn backquoted(&mut self, w: &mut Word) {
        self.at += 1;
        let mut inner = String::new();
        while let Some(q) = self.peek(0) {
            self.at += 1;
            match q {
                '`' => break,
                '\\' => {
                    if let Some(n) = self.peek(0) {
                        inner.push(n);
                        self.at += 1;
                    }
                }
                _ => inner.push(q),
            }
        }
        w.text.push_str(&format!("`{inner}`"));
        self.line.inner.push(inner);
    }

    /// At `(`: the text up to the matching `)`, which is skipped too. The text is read as
    /// commands to find that `)`: one in quotes or in a here-document's body
    /// (`$(cat <<'EOF'` with a `don't (yet)` in it) does not end it.
    /// Past [`NESTING`] levels, the rest of the line is the text and is not read.
    fn balanced(&mut self) -> String {
        self.at += 1;
        let start = self.at.min(self.chars.len());
        if self.level >= NESTING {
            self.line.unread = Some(Unread::TooDeep);
            self.at = self.chars.len();
            return self.chars[start..].iter().collect();
        }
        let mut sub = Lexer::new(std::mem::take(&mut self.chars), start, true);
        sub.level = self.level + 1;
        sub.run();
        self.line.unread = self.line.unread.or(sub.line.unread);
        self.chars = std::mem::take(&mut sub.chars);
        self.at = sub.at.min(self.chars.len());
        let end = if sub.nested { self.at } else { self.at - 1 };
        self.chars[start..end].iter().collect()
    }

    /// What is left of the word from here, as typed (up to a blank or an operator).
    fn rest_of_word(&self) -> String {
        self.chars[self.at..]
            .iter()
            .take_while(|c| !c.is_whitespace() && !"\n;|&()<>".contains(**c))
            .collect()
    }

    /// At an unquoted `{`: a brace expansion (`{a,b}`, `{1..3}`) before the word ends.
    fn brace_expansion(&self) -> bool {
        let rest = self.rest_of_word();
        rest.find('}')
            .is_some_and(|end| rest[..end].contains(',') || rest[..end].contains(".."))
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Write,
    Read,
    Dup,
    Heredoc,
    Process,
}
