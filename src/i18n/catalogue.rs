//! The catalogues agree: every message exists in every language, with the same placeholders,
//! and every file parses. Read from `locales/` as Fluent's own parser sees it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use fluent_syntax::ast::{Entry, Expression, InlineExpression, Pattern, PatternElement};

use super::Lang;

type Messages = BTreeMap<String, BTreeSet<String>>;

fn vars_of_inline(e: &InlineExpression<&str>, out: &mut BTreeSet<String>) {
    match e {
        InlineExpression::VariableReference { id } => {
            out.insert(id.name.to_string());
        }
        InlineExpression::Placeable { expression } => vars_of_expr(expression, out),
        InlineExpression::FunctionReference { arguments, .. } => {
            for a in &arguments.positional {
                vars_of_inline(a, out);
            }
            for a in &arguments.named {
                vars_of_inline(&a.value, out);
            }
        }
        _ => {}
    }
}

fn vars_of_expr(e: &Expression<&str>, out: &mut BTreeSet<String>) {
    match e {
        Expression::Inline(i) => vars_of_inline(i, out),
        Expression::Select { selector, variants } => {
            vars_of_inline(selector, out);
            for v in variants {
                vars_of_pattern(&v.value, out);
            }
        }
    }
}

fn vars_of_pattern(p: &Pattern<&str>, out: &mut BTreeSet<String>) {
    for el in &p.elements {
        if let PatternElement::Placeable { expression } = el {
            vars_of_expr(expression, out);
        }
    }
}

/// Every message of a language (and each of its attributes as `id.attr`) with its placeholders.
fn messages(lang: Lang) -> Messages {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("locales")
        .join(lang.tag());
    let mut out = Messages::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ftl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no catalogue in {}", dir.display());
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let res = fluent_syntax::parser::parse(text.as_str())
            .unwrap_or_else(|(_, errs)| panic!("{} does not parse: {errs:?}", f.display()));
        for entry in &res.body {
            match entry {
                Entry::Message(m) => {
                    let mut vars = BTreeSet::new();
                    if let Some(v) = &m.value {
                        vars_of_pattern(v, &mut vars);
                    }
                    let id = m.id.name.to_string();
                    assert!(
                        out.insert(id.clone(), vars).is_none(),
                        "{} defines {id} twice",
                        f.display()
                    );
                    for a in &m.attributes {
                        let mut vars = BTreeSet::new();
                        vars_of_pattern(&a.value, &mut vars);
                        out.insert(format!("{id}.{}", a.id.name), vars);
                    }
                }
                Entry::Junk { content } => panic!("{}: junk {content:?}", f.display()),
                _ => {}
            }
        }
    }
    out
}

#[test]
fn every_message_exists_in_both_languages_with_the_same_placeholders() {
    let zh = messages(Lang::ZhCn);
    let en = messages(Lang::En);
    let only_en: Vec<_> = en.keys().filter(|k| !zh.contains_key(*k)).collect();
    let only_zh: Vec<_> = zh.keys().filter(|k| !en.contains_key(*k)).collect();
    assert!(only_en.is_empty(), "missing in zh-CN: {only_en:?}");
    assert!(only_zh.is_empty(), "missing in en: {only_zh:?}");
    let differ: Vec<_> = en
        .iter()
        .filter(|(k, v)| zh.get(*k) != Some(v))
        .map(|(k, v)| (k, v, &zh[k]))
        .collect();
    assert!(
        differ.is_empty(),
        "placeholders differ (en, zh-CN): {differ:?}"
    );
    assert!(en.len() > 50, "{} messages", en.len());
}

#[test]
fn every_message_resolves_in_both_languages_without_a_fallback() {
    for lang in Lang::ALL {
        for (key, vars) in messages(lang) {
            if key.contains('.') || !vars.is_empty() {
                continue;
            }
            let text = lang.t(&key);
            assert!(!text.is_empty() && text != key, "{lang} {key}: {text:?}");
        }
    }
}

/// Words a page may show as they are, in every language: the brand and the formats people type.
const LITERAL_OK: &[&str] = &["sellable"];

/// The user-visible English words of a template: text between tags and the values of attributes
/// people read (title, aria-label, placeholder, alt, confirmations), outside askama's tags.
fn english_in(template: &str) -> Vec<String> {
    let mut s = template.to_string();
    for (open, close) in [("{#", "#}"), ("{{", "}}"), ("{%", "%}")] {
        while let Some(a) = s.find(open) {
            let b = s[a..].find(close).map_or(s.len(), |b| a + b + close.len());
            s.replace_range(a..b, " ");
        }
    }
    // Scripts and styles are code; `<code>` holds commands and codes, which the command line and
    // the data keep in one language.
    for (open, close) in [
        ("<script", "</script>"),
        ("<style", "</style>"),
        ("<code", "</code>"),
    ] {
        while let Some(a) = s.find(open) {
            let b = s[a..].find(close).map_or(s.len(), |b| a + b + close.len());
            s.replace_range(a..b, " ");
        }
    }
    let mut visible = String::new();
    let mut rest = s.as_str();
    while let Some(a) = rest.find('<') {
        visible.push_str(&rest[..a]);
        visible.push(' ');
        let b = rest[a..].find('>').map_or(rest.len(), |b| a + b + 1);
        let tag = &rest[a..b];
        for attr in [
            "title=\"",
            "aria-label=\"",
            "placeholder=\"",
            "alt=\"",
            "hx-confirm=\"",
            "data-confirm=\"",
        ] {
            let mut t = tag;
            while let Some(i) = t.find(attr) {
                let v = &t[i + attr.len()..];
                let end = v.find('"').unwrap_or(v.len());
                visible.push_str(&v[..end]);
                visible.push(' ');
                t = &v[end..];
            }
        }
        rest = &rest[b..];
    }
    visible.push_str(rest);
    visible
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| w.len() >= 2 && !LITERAL_OK.contains(w))
        .map(str::to_string)
        .collect()
}

/// Every template, the back office's and the booking pages', asks the catalogue for its sentences
/// (issue 16: the weekly schedule was the last to move).
#[test]
fn translated_templates_hold_no_english_outside_the_catalogue() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
    let mut stack = vec![root.clone()];
    let mut checked = 0;
    let mut found = Vec::new();
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let rel = p
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            checked += 1;
            let words = english_in(&std::fs::read_to_string(&p).unwrap());
            if !words.is_empty() {
                found.push((rel, words));
            }
        }
    }
    assert!(checked >= 8, "{checked} templates checked");
    assert!(found.is_empty(), "English outside the catalogue: {found:?}");
}

#[test]
fn the_template_check_sees_text_and_readable_attributes_but_not_code() {
    assert_eq!(english_in("<p>Book now</p>"), ["Book", "now"]);
    assert_eq!(
        english_in(r#"<a title="Close it" href="/x">{{ lang.t("k") }}</a>"#),
        ["Close", "it"]
    );
    assert!(
        english_in(r#"<p class="empty" id="x">{{ a }} · {% if b %}{% endif %}</p>"#).is_empty()
    );
    assert!(english_in("<script>let x = 1;</script>").is_empty());
    assert!(english_in("<p>{{ a }} <code>sellable store add</code></p>").is_empty());
}
