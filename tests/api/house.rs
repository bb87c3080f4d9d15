//! The house test: the layout DESIGN §2 promises, checked by reading `src/` (no tool, no build).
//!
//! It builds the module graph from every `use` and every `crate::`/`super::`/`self::` path, and
//! fails, in words a newcomer can act on, on:
//! - a top-level folder of `src/domain` that is not one of the rooms below;
//! - an import against the order kernel ← trail ← tenancy ← catalog ← {stock | slots | codes} ←
//!   orders ← reconcile ← sellable (integration reads kernel, trail and tenancy; demo reads all),
//!   which also rules out every cycle between rooms, and stock, slots and codes importing each
//!   other;
//! - a write of a table outside its one author: `UPDATE codes` outside `codes/code.rs`,
//!   `INSERT INTO events` or `audit_log` (or numbering events) outside `trail/`, a write of
//!   `stock_balances` outside `stock/`, of `slots.booked` outside `slots/`;
//! - SQL in `src/web`;
//! - in `src/web`: the kit (and `view`) importing a feature or the edge; one feature area (an
//!   `admin/` or `api/` folder, `public`, `signin`) importing another; anything outside `web`
//!   importing `web` (only `lib.rs`, `main.rs` and the binaries start it);
//! - a file over 1,200 lines, a function over 150 lines.
//!
//! What is still owed is listed in [`OWED`], each entry by name: the test also fails when an entry
//! is paid (so the list only shrinks) or names something that is not there.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The rooms of `src/domain`, lowest first. A room may import the rooms of lower rank; stock,
/// slots, codes and supply share a rank, so none of them may import another.
const ROOMS: &[(&str, u8)] = &[
    ("kernel", 0),
    ("trail", 1),
    ("tenancy", 2),
    ("catalog", 3),
    ("stock", 4),
    ("slots", 4),
    ("codes", 4),
    // Supplier-managed stock (DESIGN §1): a fourth model beside the three.
    ("supply", 4),
    ("orders", 5),
    ("reconcile", 6),
    ("sellable", 7),
];

/// Rooms outside the order, with what each may import.
const SIDE_ROOMS: &[(&str, &[&str])] = &[
    // Webhooks and alerts read what happened (trail) for whom (tenancy), and nothing else.
    ("integration", &["kernel", "trail", "tenancy"]),
    // The demo data set builds a merchant through every room's front door.
    (
        "demo",
        &[
            "kernel",
            "trail",
            "tenancy",
            "catalog",
            "stock",
            "slots",
            "codes",
            "orders",
            "reconcile",
            "sellable",
            "integration",
        ],
    ),
];

const MAX_FILE_LINES: usize = 1_200;
const MAX_FN_LINES: usize = 150;

/// Exceptions that stay, each with its reason.
const EXCEPTIONS: &[(&str, &str, &str)] = &[(
    "long-fn",
    "src/web/admin/mod.rs::routes",
    "the route table: one line a route, read top to bottom; splitting it hides the map",
)];

/// What issue 53 still owes, by name. Each entry fails the test once it is paid: strike it.
/// Nothing, since the second part: every rule above holds for the whole tree.
const OWED: &[(&str, &str)] = &[];

fn main_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// One source file: its path from the crate root, its module path, and its text with comments
/// removed (`code`) and also with string contents blanked (`bare`), line for line.
struct Source {
    path: String,
    module: Vec<String>,
    code: String,
    bare: String,
}

fn sources() -> Vec<Source> {
    let mut out = Vec::new();
    let mut stack = vec![main_dir().join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                let rel = p
                    .strip_prefix(main_dir())
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                let text = std::fs::read_to_string(&p).unwrap();
                let (code, bare) = strip(&text);
                out.push(Source {
                    module: module_of(&rel),
                    path: rel,
                    code,
                    bare,
                });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// `src/domain/stock/holds.rs` → `domain::stock::holds`; `mod.rs` names its folder; `lib.rs`,
/// `main.rs` and binaries are roots.
fn module_of(rel: &str) -> Vec<String> {
    let inner = rel.trim_start_matches("src/").trim_end_matches(".rs");
    if inner == "lib" || inner == "main" || inner.starts_with("bin/") {
        return Vec::new();
    }
    let mut parts: Vec<String> = inner.split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    parts
}

/// The text without comments, and the same with the insides of string and char literals turned
/// to spaces. Newlines are kept, so line numbers stay true.
fn strip(text: &str) -> (String, String) {
    let b: Vec<char> = text.chars().collect();
    let (mut code, mut bare) = (String::new(), String::new());
    let mut i = 0;
    let push = |c: char, in_str: bool, code: &mut String, bare: &mut String| {
        code.push(c);
        bare.push(if in_str && c != '\n' { ' ' } else { c });
    };
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if b[i] == '\n' {
                        push('\n', false, &mut code, &mut bare);
                    }
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !b
                .get(i.wrapping_sub(1))
                .is_some_and(|p| p.is_alphanumeric() || *p == '_')
        {
            // A raw string: r"…" or r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                push(c, false, &mut code, &mut bare);
                i += 1;
                continue;
            }
            for &ch in &b[i..=j] {
                push(ch, false, &mut code, &mut bare);
            }
            i = j + 1;
            while i < b.len() {
                if b[i] == '"' && (0..hashes).all(|h| b.get(i + 1 + h) == Some(&'#')) {
                    for &ch in &b[i..=i + hashes] {
                        push(ch, false, &mut code, &mut bare);
                    }
                    i += hashes + 1;
                    break;
                }
                push(b[i], true, &mut code, &mut bare);
                i += 1;
            }
        } else if c == '"' {
            push(c, false, &mut code, &mut bare);
            i += 1;
            while i < b.len() {
                if b[i] == '\\' {
                    push(b[i], true, &mut code, &mut bare);
                    if let Some(&e) = b.get(i + 1) {
                        push(e, true, &mut code, &mut bare);
                    }
                    i += 2;
                    continue;
                }
                if b[i] == '"' {
                    push('"', false, &mut code, &mut bare);
                    i += 1;
                    break;
                }
                push(b[i], true, &mut code, &mut bare);
                i += 1;
            }
        } else if c == '\'' {
            // A char literal ('x', '\n', '\''), or a lifetime ('a), which is left as it is.
            let close = if next == Some('\\') {
                (i + 2..b.len().min(i + 12)).find(|&k| b[k] == '\'')
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match close {
                Some(end) => {
                    push('\'', false, &mut code, &mut bare);
                    for &ch in &b[i + 1..end] {
                        push(ch, true, &mut code, &mut bare);
                    }
                    push('\'', false, &mut code, &mut bare);
                    i = end + 1;
                }
                None => {
                    push(c, false, &mut code, &mut bare);
                    i += 1;
                }
            }
        } else {
            push(c, false, &mut code, &mut bare);
            i += 1;
        }
    }
    (code, bare)
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Every path a file names, expanded from `use` trees, with the line it is on.
fn paths_named(bare: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let chars: Vec<char> = bare.chars().collect();
    let line_at = |pos: usize| chars[..pos].iter().filter(|&&c| c == '\n').count() + 1;
    let mut i = 0;
    while i < chars.len() {
        let word_start = i == 0 || !is_ident(chars[i - 1]);
        if word_start && chars[i..].starts_with(&['u', 's', 'e', ' ']) {
            let end = (i..chars.len())
                .find(|&k| chars[k] == ';')
                .unwrap_or(chars.len());
            let tree: String = chars[i + 4..end].iter().collect();
            for p in expand_use(&tree) {
                out.push((line_at(i), p));
            }
            i = end;
            continue;
        }
        if word_start
            && ["crate::", "super::", "self::"]
                .iter()
                .any(|s| chars[i..].starts_with(&s.chars().collect::<Vec<_>>()))
        {
            let mut j = i;
            let mut segs = Vec::new();
            loop {
                let s = j;
                while j < chars.len() && is_ident(chars[j]) {
                    j += 1;
                }
                if s == j {
                    break;
                }
                segs.push(chars[s..j].iter().collect::<String>());
                if chars[j..].starts_with(&[':', ':']) {
                    j += 2;
                } else {
                    break;
                }
            }
            out.push((line_at(i), segs));
            i = j;
            continue;
        }
        i += 1;
    }
    out
}

/// `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e`.
fn expand_use(tree: &str) -> Vec<Vec<String>> {
    let tokens: Vec<String> = {
        let mut t = Vec::new();
        let cs: Vec<char> = tree.chars().collect();
        let mut i = 0;
        while i < cs.len() {
            if is_ident(cs[i]) {
                let s = i;
                while i < cs.len() && is_ident(cs[i]) {
                    i += 1;
                }
                t.push(cs[s..i].iter().collect());
            } else if cs[i] == ':' && cs.get(i + 1) == Some(&':') {
                t.push("::".into());
                i += 2;
            } else if "{},*".contains(cs[i]) {
                t.push(cs[i].to_string());
                i += 1;
            } else {
                i += 1;
            }
        }
        t
    };
    fn walk(t: &[String], i: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
        let mut path = prefix.to_vec();
        while *i < t.len() {
            match t[*i].as_str() {
                "::" => *i += 1,
                "{" => {
                    *i += 1;
                    loop {
                        walk(t, i, &path, out);
                        match t.get(*i).map(String::as_str) {
                            Some(",") => *i += 1,
                            Some("}") => {
                                *i += 1;
                                break;
                            }
                            _ => break,
                        }
                    }
                    return;
                }
                "," | "}" => break,
                "*" => *i += 1,
                "as" => {
                    *i += 2;
                }
                w => {
                    path.push(w.to_string());
                    *i += 1;
                }
            }
        }
        if path.len() > prefix.len() {
            out.push(path);
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        walk(&tokens, &mut i, &[], &mut out);
        i += 1;
    }
    out
}

/// Where a path points from a module, from the crate root (`None`: outside the crate).
/// `super` in `x/mod.rs` is the parent of `x`; in `x/y.rs` the parent of `x::y`, which is `x`:
/// module paths already say which.
fn resolve(from: &[String], path: &[String], known: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let mut here = from.to_vec();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            here.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                here.pop();
                rest = &rest[1..];
            }
        }
        Some(first) => {
            let mut child = here.clone();
            child.push(first.to_string());
            if !known.contains(&child) {
                return None;
            }
        }
        None => return None,
    }
    here.extend(rest.iter().cloned());
    Some(here)
}

/// The room of a module under `domain`, or None outside it (or at its root).
fn room(module: &[String]) -> Option<&str> {
    (module.first().is_some_and(|m| m == "domain") && module.len() >= 2).then(|| module[1].as_str())
}

fn rank(room: &str) -> Option<u8> {
    ROOMS.iter().find(|(r, _)| *r == room).map(|(_, k)| *k)
}

fn may_import(from: &str, to: &str) -> bool {
    if from == to {
        return true;
    }
    if let Some((_, allowed)) = SIDE_ROOMS.iter().find(|(r, _)| *r == from) {
        return allowed.contains(&to);
    }
    match (rank(from), rank(to)) {
        (Some(a), Some(b)) => b < a,
        _ => false,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Finding {
    kind: &'static str,
    /// What the finding is about, stable across edits (no line numbers): the key of [`OWED`].
    key: String,
    /// What to tell a newcomer, with the line.
    say: String,
}

fn findings() -> Vec<Finding> {
    let files = sources();
    let known: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    let mut out: BTreeMap<(&'static str, String), Finding> = BTreeMap::new();
    let mut add = |f: Finding| {
        out.entry((f.kind, f.key.clone())).or_insert(f);
    };
    let rooms: BTreeSet<&str> = ROOMS
        .iter()
        .map(|(r, _)| *r)
        .chain(SIDE_ROOMS.iter().map(|(r, _)| *r))
        .collect();

    for f in &files {
        let from_room = room(&f.module);
        if let Some(r) = from_room {
            if !rooms.contains(r) {
                add(Finding {
                    kind: "room",
                    key: format!("src/domain/{r}"),
                    say: format!(
                        "{}: `domain::{r}` is not one of the rooms ({}). Put it in the room of \
                         the model it serves, or in kernel if every room needs it.",
                        f.path,
                        rooms.iter().copied().collect::<Vec<_>>().join(", ")
                    ),
                });
            }
        }
        // Imports between rooms.
        if let Some(from) = from_room.filter(|r| rooms.contains(r)) {
            let mut seen = BTreeSet::new();
            for (line, p) in paths_named(&f.bare) {
                let Some(to_mod) = resolve(&f.module, &p, &known) else {
                    continue;
                };
                let Some(to) = room(&to_mod).filter(|r| rooms.contains(r)) else {
                    continue;
                };
                if !may_import(from, to) && seen.insert(to.to_string()) {
                    add(Finding {
                        kind: "import",
                        key: format!("{} -> {to}", f.path),
                        say: format!(
                            "{}:{line}: `{from}` imports `{}` from `{to}`. {}",
                            f.path,
                            p.join("::"),
                            why_not(from, to)
                        ),
                    });
                }
            }
        }
        // The web's own house.
        for (line, p) in paths_named(&f.bare) {
            let Some(mut to) = resolve(&f.module, &p, &known) else {
                continue;
            };
            // The module the path names, not the item (`web::AppState` is in `web`).
            while !to.is_empty() && !known.contains(&to) {
                to.pop();
            }
            if let Some((kind, key, say)) = web_edge(&f.module, &to) {
                add(Finding {
                    kind,
                    key: format!("{} -> {key}", f.path),
                    say: format!("{}:{line}: imports `{}`. {say}", f.path, p.join("::")),
                });
            }
        }
        // SQL in web.
        if f.path.starts_with("src/web/") {
            if let Some(line) = first_line(&f.bare, "sqlx::") {
                add(Finding {
                    kind: "web-sql",
                    key: f.path.clone(),
                    say: format!(
                        "{}:{line}: a page or an API handler runs SQL. Call a domain function \
                         that says what it reads instead; web only turns requests into calls \
                         and answers into pages.",
                        f.path
                    ),
                });
            }
        }
        // One author per table.
        for (table, pattern, owner, who) in AUTHORS {
            if f.path.starts_with(owner) {
                continue;
            }
            if let Some(line) = first_sql(&f.code, pattern) {
                add(Finding {
                    kind: "author",
                    key: format!("{} {table}", f.path),
                    say: format!(
                        "{}:{line}: writes `{table}` ({pattern}); only {who} ({owner}) may. Call \
                         the function there that names the change.",
                        f.path
                    ),
                });
            }
        }
        // Sizes.
        let lines = f.code.lines().count();
        if lines > MAX_FILE_LINES {
            add(Finding {
                kind: "long-file",
                key: f.path.clone(),
                say: format!(
                    "{} has {lines} lines (at most {MAX_FILE_LINES}): split it along the jobs it does.",
                    f.path
                ),
            });
        }
        for (name, line, n) in functions(&f.bare) {
            if n > MAX_FN_LINES {
                add(Finding {
                    kind: "long-fn",
                    key: format!("{}::{name}", f.path),
                    say: format!(
                        "{}:{line}: fn {name} has {n} lines (at most {MAX_FN_LINES}): split it \
                         along its steps.",
                        f.path
                    ),
                });
            }
        }
    }
    out.into_values().collect()
}

/// The area of a module under `web`: `kit`, `view`, `edge`, `admin::goods`, `api::services`,
/// `public`, `signin`, … (`admin` and `api` themselves, whose route tables gather every area,
/// have none); `None` outside `web`.
fn web_area(module: &[String]) -> Option<String> {
    if module.first().is_none_or(|m| m != "web") {
        return None;
    }
    match module.get(1).map(String::as_str) {
        None => Some(String::new()),
        Some(top @ ("admin" | "api")) => Some(match module.get(2) {
            // A file of its own (`admin/orders.rs`) is an area as much as a folder is.
            Some(area) => format!("{top}::{area}"),
            None => top.to_string(),
        }),
        Some(other) => Some(other.to_string()),
    }
}

/// Whether an import from `from` to `to` breaks the web's house rules: (kind, key, advice).
fn web_edge(from: &[String], to: &[String]) -> Option<(&'static str, String, String)> {
    let to_area = web_area(to)?;
    let Some(from_area) = web_area(from) else {
        // Outside `web`: only the roots (lib, main, the binaries) start the server.
        return (!from.is_empty()).then(|| {
            (
                "web-import",
                to_area.clone(),
                "Nothing below the web imports it: the domain and infra know no page and no \
                 route. Move what both need down (to infra or the domain)."
                    .to_string(),
            )
        });
    };
    let shared = |a: &str| matches!(a, "kit" | "view");
    let roots = |a: &str| a.is_empty() || a == "admin" || a == "api";
    // The API's own kit: its extractors and error answer (`api`), the document's shared
    // schemas (`api::doc`) and the per-key limits, for every API area.
    let api_kit = from_area.starts_with("api::") && matches!(to_area.as_str(), "api" | "api::doc");
    if from_area == to_area || shared(&to_area) || roots(&from_area) || api_kit {
        return None;
    }
    if to_area.is_empty() {
        // `web::AppState` and the router's types are for everyone.
        return None;
    }
    if shared(&from_area) {
        return Some((
            "web-kit",
            to_area.clone(),
            format!(
                "The kit and the views serve every page and import no feature (`{to_area}` is \
                 one) and not the edge: pass what they need in, or move it into the kit."
            ),
        ));
    }
    if to_area == "edge" {
        return None;
    }
    Some((
        "web-feature",
        to_area.clone(),
        format!(
            "One feature (`{from_area}`) imports another (`{to_area}`): pages and handlers of \
             different areas share only the kit, the views and the domain. Move what both use \
             into the kit or the domain."
        ),
    ))
}

fn why_not(from: &str, to: &str) -> String {
    if rank(from).is_some() && rank(from) == rank(to) {
        return "Stock, slots, codes and supply are models that never meet inside the domain; \
                what needs two of them lives in orders (or sellable, to read)."
            .into();
    }
    if let Some((_, allowed)) = SIDE_ROOMS.iter().find(|(r, _)| *r == from) {
        return format!("`{from}` may import only {}.", allowed.join(", "));
    }
    format!(
        "Imports go down the order kernel ← trail ← tenancy ← catalog ← stock|slots|codes ← \
         orders ← reconcile ← sellable; `{to}` is not below `{from}`. Move what both need down \
         (to `{from}`'s level or lower), or let `{to}` call `{from}`."
    )
}

/// The tables with one author each: table, what a write looks like, the owner's path, its name.
const AUTHORS: &[(&str, &str, &str, &str)] = &[
    (
        "codes",
        "UPDATE codes",
        "src/domain/codes/code.rs",
        "the code state machine",
    ),
    (
        "events",
        "INSERT INTO events",
        "src/domain/trail/",
        "the trail",
    ),
    (
        "audit_log",
        "INSERT INTO audit_log",
        "src/domain/trail/",
        "the trail",
    ),
    (
        "event_sequence",
        "UPDATE event_sequence",
        "src/domain/trail/",
        "the trail",
    ),
    (
        "stock_balances",
        "UPDATE stock_balances",
        "src/domain/stock/",
        "stock",
    ),
    (
        "stock_balances",
        "INSERT INTO stock_balances",
        "src/domain/stock/",
        "stock",
    ),
    (
        "slots.booked",
        "booked = booked",
        "src/domain/slots/",
        "slots",
    ),
];

fn first_line(text: &str, needle: &str) -> Option<usize> {
    text.lines().position(|l| l.contains(needle)).map(|i| i + 1)
}

/// The line where `pattern` (words separated by any whitespace, any case) first appears.
fn first_sql(code: &str, pattern: &str) -> Option<usize> {
    let want: Vec<String> = pattern.split_whitespace().map(str::to_lowercase).collect();
    let words: Vec<(usize, String)> = code
        .lines()
        .enumerate()
        .flat_map(|(n, l)| {
            l.split(|c: char| c.is_whitespace() || c == '(' || c == '"')
                .filter(|w| !w.is_empty())
                .map(move |w| (n + 1, w.to_lowercase()))
                .collect::<Vec<_>>()
        })
        .collect();
    words
        .windows(want.len())
        .find(|w| w.iter().zip(&want).all(|((_, a), b)| a == b))
        .map(|w| w[0].0)
}

/// Every function with a body: its name, first line, and length in lines.
fn functions(bare: &str) -> Vec<(String, usize, usize)> {
    let chars: Vec<char> = bare.chars().collect();
    let line_at = |pos: usize| chars[..pos].iter().filter(|&&c| c == '\n').count() + 1;
    let mut out = Vec::new();
    let mut i = 0;
    while i + 3 < chars.len() {
        let word_start = i == 0 || !is_ident(chars[i - 1]);
        if word_start && chars[i..].starts_with(&['f', 'n', ' ']) {
            let s = i + 3;
            let mut e = s;
            while e < chars.len() && is_ident(chars[e]) {
                e += 1;
            }
            let name: String = chars[s..e].iter().collect();
            // The body starts at the first `{` outside parentheses, unless a `;` comes first.
            let mut k = e;
            let mut paren = 0i32;
            let mut body = None;
            while k < chars.len() {
                match chars[k] {
                    '(' | '[' => paren += 1,
                    ')' | ']' => paren -= 1,
                    ';' if paren == 0 => break,
                    '{' if paren == 0 => {
                        body = Some(k);
                        break;
                    }
                    _ => {}
                }
                k += 1;
            }
            if let (Some(open), false) = (body, name.is_empty()) {
                let mut depth = 0;
                let mut close = open;
                for (j, &c) in chars.iter().enumerate().skip(open) {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                close = j;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                let first = line_at(i);
                out.push((name, first, line_at(close) - first + 1));
            }
            i = e;
            continue;
        }
        i += 1;
    }
    out
}

#[test]
fn the_domain_is_three_models_in_rooms_that_import_only_downwards_and_each_table_has_one_author() {
    let found = findings();
    let excepted = |f: &Finding| {
        EXCEPTIONS
            .iter()
            .any(|(kind, key, _)| *kind == f.kind && *key == f.key)
    };
    let owed = |f: &Finding| {
        OWED.iter()
            .any(|(kind, key)| *kind == f.kind && *key == f.key)
    };
    let new: Vec<&Finding> = found.iter().filter(|f| !excepted(f) && !owed(f)).collect();
    let paid: Vec<&(&str, &str)> = OWED
        .iter()
        .filter(|(kind, key)| !found.iter().any(|f| f.kind == *kind && f.key == *key))
        .collect();
    let mut by_kind: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for f in &new {
        by_kind.entry(f.kind).or_default().push(&f.say);
    }
    let mut report = String::new();
    for (kind, says) in &by_kind {
        report.push_str(&format!("\n[{kind}]\n"));
        for s in says {
            report.push_str(&format!("  - {s}\n"));
        }
    }
    assert!(
        new.is_empty(),
        "The house rules (tests/api/house.rs) found {} thing(s) out of place:{report}\n\
         Lines to paste into OWED if this is a step of a larger move:\n{}",
        new.len(),
        new.iter()
            .map(|f| format!("    (\"{}\", \"{}\"),", f.kind, f.key))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        paid.is_empty(),
        "These entries of OWED are paid or gone; strike them from the list: {paid:?}"
    );
}

#[test]
fn the_house_test_sees_a_wrong_way_import_a_loop_a_stray_write_and_a_long_function() {
    // The readers themselves, on text written to break each rule.
    let (code, bare) = strip(
        "use crate::domain::{orders::read::read::read::reserve::{self, Line}, kernel::ids::SkuId as S};\n\
         // use crate::domain::sellable::x;\n\
         fn f() { let s = \"use crate::domain::sellable::y; } {\"; super::super::trail::audit::record(); }\n",
    );
    let paths: Vec<String> = paths_named(&bare)
        .into_iter()
        .map(|(_, p)| p.join("::"))
        .collect();
    assert_eq!(
        paths,
        [
            "crate::domain::orders::read::read::read::reserve::self",
            "crate::domain::orders::read::read::read::reserve::Line",
            "crate::domain::kernel::ids::SkuId",
            "super::super::trail::audit::record"
        ],
        "comments and strings name nothing"
    );
    assert_eq!(first_sql(&code, "update codes"), None);
    assert_eq!(
        first_sql(
            "x\nsqlx::query(\"UPDATE\n   codes SET status\")",
            "UPDATE codes"
        ),
        Some(2)
    );
    assert_eq!(functions(&bare), vec![("f".to_string(), 3, 1)]);
    let long = format!("fn g() {{\n{}}}\n", "  x();\n".repeat(200));
    assert_eq!(functions(&strip(&long).1)[0].2, 202);
    let stock = vec![
        "domain".to_string(),
        "stock".to_string(),
        "holds".to_string(),
    ];
    let known = BTreeSet::from([
        vec!["domain".to_string(), "stock".to_string()],
        stock.clone(),
    ]);
    assert_eq!(
        resolve(
            &stock,
            &["super".into(), "super".into(), "slots".into()],
            &known
        ),
        Some(vec!["domain".to_string(), "slots".to_string()])
    );
    assert!(!may_import("stock", "slots"), "three models never meet");
    assert!(!may_import("catalog", "orders"), "no import upwards");
    assert!(may_import("orders", "codes"));
    assert!(!may_import("integration", "stock"));
    assert!(may_import("demo", "slots"));
    let m = |s: &str| s.split("::").map(str::to_string).collect::<Vec<_>>();
    assert_eq!(
        web_edge(&m("web::kit::layout"), &m("web::admin::goods")).map(|e| e.0),
        Some("web-kit"),
        "the kit imports no feature"
    );
    assert_eq!(
        web_edge(
            &m("web::admin::goods::report"),
            &m("web::admin::services::slots")
        )
        .map(|e| e.0),
        Some("web-feature"),
        "one area does not import another"
    );
    assert_eq!(
        web_edge(&m("web::public"), &m("web::api")).map(|e| e.0),
        Some("web-feature")
    );
    assert_eq!(
        web_edge(&m("domain::stock"), &m("web::kit::page")).map(|e| e.0),
        Some("web-import"),
        "nothing below the web imports it"
    );
    assert_eq!(web_edge(&m("web::api::goods"), &m("web::api::doc")), None);
    assert_eq!(
        web_edge(&m("web::admin::goods"), &m("web::view::pager")),
        None
    );
    assert_eq!(web_edge(&m("web::admin"), &m("web::admin::goods")), None);
    assert_eq!(web_edge(&Vec::new(), &m("web::edge::server")), None);
}
