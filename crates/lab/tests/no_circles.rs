//! The house rule "no import circles", checked on the source of every
//! workspace crate.
//!
//! A circle is defined per module directory: for every module of a crate,
//! the graph among its direct child modules (the `mod x;` files and folders,
//! not inline `mod x { }` blocks), with an edge a -> b when something in a
//! (a's file, its own children, its inline modules) names something under b,
//! through `use crate::…`, `super::…`, `self::…` or the same paths written
//! out in expressions and types. A reference to one of a module's own
//! ancestors (`use super::*`, `super::Thing` defined in the parent) is not an
//! edge. Two children that reach each other, directly or through siblings,
//! are a circle.
//!
//! `import_circles` is reusable: give it a crate's root file (src/lib.rs or
//! src/main.rs). Run: `cargo test --release -p blklab-lab --test no_circles`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Crates whose source is not checked yet (directory names under crates/).
const NOT_CHECKED: &[&str] = &[];

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// A string literal's contents (only needed for `#[path = "…"]`).
    Str(String),
    /// `::`
    PathSep,
    Punct(char),
}

/// The tokens of Rust source with comments, char literals and lifetimes
/// dropped, and the line each token starts on.
fn tokens(src: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0usize, 1usize);
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            // block comments nest in Rust
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if c[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if ch == '"' || ((ch == 'r' || ch == 'b') && matches!(at(i + 1), '"' | '#' | 'r')) {
            // (raw) (byte) string: r"…", r#"…"#, b"…", br#"…"#
            let start_line = line;
            let mut j = i;
            if c[j] == 'b' {
                j += 1;
            }
            let raw = at(j) == 'r';
            if raw {
                j += 1;
            }
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            if at(j) != '"' {
                // an identifier starting with r or b
                let mut k = i;
                while k < c.len() && (c[k].is_alphanumeric() || c[k] == '_') {
                    k += 1;
                }
                out.push((Tok::Ident(c[i..k].iter().collect()), line));
                i = k;
                continue;
            }
            j += 1;
            let mut text = String::new();
            loop {
                if j >= c.len() {
                    break;
                }
                if c[j] == '\n' {
                    line += 1;
                }
                if !raw && c[j] == '\\' {
                    text.push(c[j]);
                    text.push(at(j + 1));
                    if at(j + 1) == '\n' {
                        line += 1;
                    }
                    j += 2;
                    continue;
                }
                if c[j] == '"' && (0..hashes).all(|h| at(j + 1 + h) == '#') {
                    j += 1 + hashes;
                    break;
                }
                text.push(c[j]);
                j += 1;
            }
            out.push((Tok::Str(text), start_line));
            i = j;
        } else if ch == '\'' {
            // a char literal ('x', '\n', '\u{1F600}') or a lifetime ('a)
            if at(i + 1) == '\\' {
                let mut j = i + 2;
                while j < c.len() && c[j] != '\'' {
                    j += 1;
                }
                i = j + 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
            }
        } else if ch.is_alphabetic() || ch == '_' {
            let mut k = i;
            while k < c.len() && (c[k].is_alphanumeric() || c[k] == '_') {
                k += 1;
            }
            out.push((Tok::Ident(c[i..k].iter().collect()), line));
            i = k;
        } else if ch == ':' && at(i + 1) == ':' {
            out.push((Tok::PathSep, line));
            i += 2;
        } else {
            out.push((Tok::Punct(ch), line));
            i += 1;
        }
    }
    out
}

fn ident(t: Option<&(Tok, usize)>) -> Option<&str> {
    match t {
        Some((Tok::Ident(s), _)) => Some(s),
        _ => None,
    }
}

fn is(t: Option<&(Tok, usize)>, p: char) -> bool {
    matches!(t, Some((Tok::Punct(q), _)) if *q == p)
}

/// A module backed by a file.
#[derive(Debug)]
struct Module {
    path: Vec<String>,
    file: PathBuf,
}

/// One reference from a module to an absolute path of the crate.
struct Reference {
    from: Vec<String>,
    to: Vec<String>,
    file: PathBuf,
    line: usize,
    text: String,
}

/// Expand the path starting at `toks[i]` (`crate`, `super` or `self`, then
/// `::`) into the absolute paths it names (several for a `{…}` group).
/// `here` is the module the path is written in.
fn paths_at(toks: &[(Tok, usize)], i: usize, here: &[String]) -> Vec<Vec<String>> {
    let mut base: Vec<String> = match ident(toks.get(i)) {
        Some("crate") => Vec::new(),
        Some("self") => here.to_vec(),
        Some("super") => here[..here.len().saturating_sub(1)].to_vec(),
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    let mut j = i + 1;
    // `super::super::…` and `self::super::…`
    while toks.get(j).map(|t| &t.0) == Some(&Tok::PathSep)
        && ident(toks.get(j + 1)) == Some("super")
    {
        base.pop();
        j += 2;
    }
    tail(toks, j, base, &mut out);
    out
}

/// The rest of a path after `base`: `::name…`, `::{a, b::c}`, `::*`.
fn tail(
    toks: &[(Tok, usize)],
    mut j: usize,
    mut segs: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    while toks.get(j).map(|t| &t.0) == Some(&Tok::PathSep) {
        j += 1;
        if is(toks.get(j), '{') {
            j += 1;
            while j < toks.len() && !is(toks.get(j), '}') {
                j = group_item(toks, j, segs.clone(), out);
                if is(toks.get(j), ',') {
                    j += 1;
                }
            }
            return j + 1;
        }
        match ident(toks.get(j)) {
            Some("super") => {
                segs.pop();
                j += 1;
            }
            Some(name) => {
                segs.push(name.to_string());
                j += 1;
            }
            // `::*`, `::<T>`: the path so far
            None => break,
        }
    }
    out.push(segs);
    j
}

/// One item of a `{…}` group: `name…`, `self`, `{…}`, `*`, with `as x`.
fn group_item(
    toks: &[(Tok, usize)],
    j: usize,
    segs: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    let mut j = j;
    match ident(toks.get(j)) {
        Some("self") => {
            out.push(segs);
            j += 1;
        }
        Some(name) => {
            let mut s = segs;
            if name == "super" {
                s.pop();
            } else {
                s.push(name.to_string());
            }
            j = tail(toks, j + 1, s, out);
        }
        None if is(toks.get(j), '{') => {
            // a nested group without a prefix: treat as `::{…}`
            let mut k = j + 1;
            while k < toks.len() && !is(toks.get(k), '}') {
                k = group_item(toks, k, segs.clone(), out);
                if is(toks.get(k), ',') {
                    k += 1;
                }
            }
            j = k + 1;
        }
        None => {
            out.push(segs);
            j += 1;
        }
    }
    if ident(toks.get(j)) == Some("as") {
        j += 2;
    }
    j
}

/// Where the files of `m`'s `mod x;` children live.
fn child_dir(m: &Module) -> PathBuf {
    let dir = m.file.parent().unwrap_or(Path::new("")).to_path_buf();
    let stem = m.file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if m.path.is_empty() || stem == "mod" {
        dir
    } else {
        dir.join(stem)
    }
}

/// Read `m`'s file: its references, and its `mod x;` children (queued).
fn scan(m: &Module, queue: &mut Vec<Module>, refs: &mut Vec<Reference>) -> Result<(), String> {
    let src = std::fs::read_to_string(&m.file).map_err(|e| format!("{}: {e}", m.file.display()))?;
    let toks = tokens(&src);
    let lines: Vec<&str> = src.lines().collect();
    // inline `mod x {` blocks: (name, brace depth inside it)
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut path_attr: Option<String> = None;
    let mut i = 0;
    while i < toks.len() {
        let here: Vec<String> = m
            .path
            .iter()
            .cloned()
            .chain(inline.iter().map(|(n, _)| n.clone()))
            .collect();
        match &toks[i].0 {
            Tok::Punct('{') => {
                // an attribute applies to the next item only
                path_attr = None;
                depth += 1;
            }
            Tok::Punct(';') => path_attr = None,
            Tok::Punct('}') => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Tok::Punct('#') => {
                // #[path = "file.rs"] before a `mod x;`
                if let (Some((Tok::Ident(a), _)), Some((Tok::Str(p), _))) =
                    (toks.get(i + 2), toks.get(i + 4))
                {
                    if a == "path" && is(toks.get(i + 3), '=') {
                        path_attr = Some(p.clone());
                    }
                }
            }
            Tok::Ident(k) if k == "mod" => {
                if let Some(name) = ident(toks.get(i + 1)) {
                    if is(toks.get(i + 2), ';') {
                        let mut dir = child_dir(m);
                        for (n, _) in &inline {
                            dir = dir.join(n);
                        }
                        let file = match path_attr.take() {
                            Some(p) => m.file.parent().unwrap_or(Path::new("")).join(p),
                            None if dir.join(format!("{name}.rs")).exists() => {
                                dir.join(format!("{name}.rs"))
                            }
                            None => dir.join(name).join("mod.rs"),
                        };
                        let mut path = here.clone();
                        path.push(name.to_string());
                        queue.push(Module { path, file });
                    } else if is(toks.get(i + 2), '{') {
                        inline.push((name.to_string(), depth + 1));
                    }
                }
            }
            Tok::Ident(k) if k == "crate" || k == "super" || k == "self" => {
                let prev = i.checked_sub(1).and_then(|p| toks.get(p));
                let after_sep = prev.map(|t| &t.0) == Some(&Tok::PathSep);
                let macro_var = is(prev, '$');
                if !after_sep && !macro_var && toks.get(i + 1).map(|t| &t.0) == Some(&Tok::PathSep)
                {
                    let line = toks[i].1;
                    for to in paths_at(&toks, i, &here) {
                        refs.push(Reference {
                            from: here.clone(),
                            to,
                            file: m.file.clone(),
                            line,
                            text: lines.get(line - 1).unwrap_or(&"").trim().to_string(),
                        });
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// The import circles of the crate whose root file is `root`
/// (src/lib.rs or src/main.rs), each as a readable paragraph.
pub fn import_circles(root: &Path) -> Result<Vec<String>, String> {
    let mut modules: Vec<Module> = Vec::new();
    let mut refs = Vec::new();
    let mut queue = vec![Module {
        path: Vec::new(),
        file: root.to_path_buf(),
    }];
    while let Some(m) = queue.pop() {
        scan(&m, &mut queue, &mut refs)?;
        modules.push(m);
    }
    let known: BTreeSet<Vec<String>> = modules.iter().map(|m| m.path.clone()).collect();
    // per parent module: edges among its children, with one example each
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<(String, String), String>> = BTreeMap::new();
    for r in &refs {
        // the deepest module both sides are strictly under
        let common = r.from.iter().zip(&r.to).take_while(|(a, b)| a == b).count();
        if common >= r.from.len() || common >= r.to.len() {
            // one side is the other's ancestor (or the same module)
            continue;
        }
        let parent = r.from[..common].to_vec();
        let (a, b) = (&r.from[common], &r.to[common]);
        let mut b_mod = parent.clone();
        b_mod.push(b.clone());
        if !known.contains(&b_mod) {
            // an item of the parent (or an inline module of it), not a sibling
            continue;
        }
        let root_dir = root.parent().unwrap_or(Path::new(""));
        let file = r.file.strip_prefix(root_dir).unwrap_or(&r.file);
        graphs
            .entry(parent)
            .or_default()
            .entry((a.clone(), b.clone()))
            .or_insert_with(|| format!("{}:{}: {}", file.display(), r.line, r.text));
    }
    let mut found = Vec::new();
    for (parent, edges) in &graphs {
        for comp in strongly_connected(edges) {
            if comp.len() < 2 {
                continue;
            }
            let cycle = cycle_in(&comp, edges);
            let mut s = format!(
                "in {} ({}): {}",
                root.parent().unwrap_or(Path::new("")).display(),
                if parent.is_empty() {
                    "the crate root".to_string()
                } else {
                    format!("module {}", parent.join("::"))
                },
                cycle.join(" -> ")
            );
            for w in cycle.windows(2) {
                let why = &edges[&(w[0].clone(), w[1].clone())];
                s.push_str(&format!("\n    {} -> {}: {why}", w[0], w[1]));
            }
            found.push(s);
        }
    }
    Ok(found)
}

/// Tarjan's strongly connected components of the edge set.
fn strongly_connected(edges: &BTreeMap<(String, String), String>) -> Vec<Vec<String>> {
    let mut nodes: BTreeSet<&String> = BTreeSet::new();
    for (a, b) in edges.keys() {
        nodes.insert(a);
        nodes.insert(b);
    }
    let succ = |n: &String| -> Vec<&String> {
        edges
            .keys()
            .filter(|(a, _)| a == n)
            .map(|(_, b)| b)
            .collect()
    };
    struct St<'a> {
        index: BTreeMap<&'a String, usize>,
        low: BTreeMap<&'a String, usize>,
        stack: Vec<&'a String>,
        on: BTreeSet<&'a String>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(v: &'a String, st: &mut St<'a>, succ: &dyn Fn(&String) -> Vec<&'a String>) {
        st.index.insert(v, st.next);
        st.low.insert(v, st.next);
        st.next += 1;
        st.stack.push(v);
        st.on.insert(v);
        for w in succ(v) {
            if !st.index.contains_key(w) {
                visit(w, st, succ);
                let lw = st.low[w];
                let lv = st.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if st.on.contains(w) {
                let iw = st.index[w];
                let lv = st.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if st.low[v] == st.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = st.stack.pop() {
                st.on.remove(w);
                comp.push(w.clone());
                if w == v {
                    break;
                }
            }
            comp.sort();
            st.out.push(comp);
        }
    }
    let mut st = St {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for n in nodes {
        if !st.index.contains_key(n) {
            visit(n, &mut st, &succ);
        }
    }
    st.out
}

/// One cycle through the component's first node: a -> … -> a.
fn cycle_in(comp: &[String], edges: &BTreeMap<(String, String), String>) -> Vec<String> {
    let inside: BTreeSet<&String> = comp.iter().collect();
    let start = &comp[0];
    // breadth-first from start back to start, inside the component
    let mut prev: BTreeMap<&String, &String> = BTreeMap::new();
    let mut frontier = vec![start];
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for n in frontier {
            for (a, b) in edges.keys() {
                if a == n && inside.contains(b) && !prev.contains_key(b) {
                    prev.insert(b, n);
                    if b == start {
                        let mut path = vec![start.clone()];
                        let mut cur = n;
                        while cur != start {
                            path.push(cur.clone());
                            cur = prev[cur];
                        }
                        path.push(start.clone());
                        path.reverse();
                        return path;
                    }
                    next.push(b);
                }
            }
        }
        frontier = next;
    }
    comp.to_vec()
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The root files of every checked crate.
fn crate_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(workspace().join("crates"))
        .expect("crates/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("Cargo.toml").exists())
        .collect();
    dirs.sort();
    for d in dirs {
        let name = d.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if NOT_CHECKED.contains(&name) {
            continue;
        }
        for f in ["src/lib.rs", "src/main.rs"] {
            if d.join(f).exists() {
                roots.push(d.join(f));
            }
        }
    }
    roots
}

#[test]
fn no_import_circles_in_the_workspace() {
    let roots = crate_roots();
    assert!(roots.len() >= 4, "found the crates: {roots:?}");
    let mut all = Vec::new();
    for r in &roots {
        all.extend(import_circles(r).unwrap_or_else(|e| panic!("{e}")));
    }
    assert!(
        all.is_empty(),
        "import circles (house rule: none):\n{}",
        all.join("\n")
    );
}

/// The checker itself: a small tree with a circle through a sibling, an
/// ancestor reference that is not an edge, and a nested folder.
#[test]
fn the_checker_finds_a_circle_and_names_it() {
    let d = std::env::temp_dir().join(format!("blklab-no-circles-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("src/c")).unwrap();
    let w = |p: &str, s: &str| std::fs::write(d.join(p), s).unwrap();
    w(
        "src/lib.rs",
        "pub mod a;\npub mod b;\npub mod c;\npub struct Top;\n",
    );
    w(
        "src/a.rs",
        "use crate::b::B;\nuse super::Top;\npub struct A;\n",
    );
    w(
        "src/b.rs",
        "pub struct B;\nfn f() -> crate::c::x::X { todo!() }\n#[cfg(test)]\nmod tests { use super::*; }\n",
    );
    w("src/c/mod.rs", "pub mod x;\npub mod y;\n");
    w(
        "src/c/x.rs",
        "use super::{y::Y, super::a::A};\npub struct X;\n",
    );
    w("src/c/y.rs", "// crate::c::x::X in a comment is no edge\npub struct Y(&'static str);\nconst S: &str = \"super::x::X\";\n");
    let found = import_circles(&d.join("src/lib.rs")).unwrap();
    let _ = std::fs::remove_dir_all(&d);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].contains("the crate root"), "{}", found[0]);
    assert!(found[0].contains("a -> b -> c -> a"), "{}", found[0]);
    assert!(found[0].contains("c/x.rs:1"), "{}", found[0]);
}
