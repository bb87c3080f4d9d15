//! Every API answer the suite sees is held to the OpenAPI document: its status is one its
//! operation lists, its `error` code is among the codes that status names, and its body matches
//! that status's schema. So a route that answers what its document does not say fails the test
//! that saw it, whichever test that is.
//!
//! With `CONTRACT_COLLECT=<file>` the mismatches are appended to the file instead of failing,
//! to gather all of them from one run of the suite.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

struct Doc {
    json: Value,
    /// (method, path template split into segments, operation JSON pointer)
    ops: Vec<(String, Vec<String>, String)>,
}

fn doc() -> &'static Doc {
    static DOC: OnceLock<Doc> = OnceLock::new();
    DOC.get_or_init(|| {
        let json = serde_json::to_value(sellable::web::api::openapi()).expect("document");
        let mut ops = Vec::new();
        for (path, item) in json["paths"].as_object().expect("paths") {
            for method in ["get", "post", "patch", "put", "delete"] {
                if item.get(method).is_some() {
                    let segs = path.split('/').map(str::to_string).collect();
                    let pointer = format!(
                        "/paths/{}/{method}",
                        path.replace('~', "~0").replace('/', "~1")
                    );
                    ops.push((method.to_uppercase(), segs, pointer));
                }
            }
        }
        Doc { json, ops }
    })
}

/// The operation a request reached: the template whose literal segments match most.
fn operation(method: &str, path: &str) -> Option<&'static str> {
    let segs: Vec<&str> = path.split('/').collect();
    doc()
        .ops
        .iter()
        .filter(|(m, t, _)| {
            m == method
                && t.len() == segs.len()
                && t.iter()
                    .zip(&segs)
                    .all(|(t, s)| (t.starts_with('{') && !s.is_empty()) || t == s)
        })
        .max_by_key(|(_, t, _)| t.iter().filter(|s| !s.starts_with('{')).count())
        .map(|(_, _, p)| p.as_str())
}

fn validator(pointer: &str, status: u16) -> Option<&'static jsonschema::Validator> {
    type Cache = Mutex<HashMap<(String, u16), Option<&'static jsonschema::Validator>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap();
    *cache
        .entry((pointer.to_string(), status))
        .or_insert_with(|| {
            let d = &doc().json;
            let schema = d.pointer(pointer)?.pointer(&format!(
                "/responses/{status}/content/application~1json/schema"
            ))?;
            let root = serde_json::json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "components": d["components"],
                "allOf": [schema],
            });
            let v = jsonschema::validator_for(&root).unwrap_or_else(|e| {
                panic!("the schema of {pointer} {status} does not compile: {e}")
            });
            Some(&*Box::leak(Box::new(v)))
        })
}

fn mismatch(what: String) {
    match std::env::var("CONTRACT_COLLECT") {
        Ok(file) if !file.is_empty() => {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(file)
                .unwrap();
            writeln!(f, "{what}").unwrap();
        }
        _ => panic!("the API broke its OpenAPI document: {what}"),
    }
}

/// Holds one answer of `method path` (a query string allowed) to the document.
pub fn check(method: &str, path: &str, status: u16, body: &Value) {
    let path = path.split('?').next().unwrap_or("");
    if !path.starts_with("/api/v1/") {
        return;
    }
    let Some(pointer) = operation(method, path) else {
        // Not a route: the fallbacks answer 404 and 405 for every such request.
        if status != 404 && status != 405 {
            mismatch(format!(
                "{method} {path} answered {status} but is not in the document"
            ));
        }
        return;
    };
    let op = doc().json.pointer(pointer).unwrap();
    let Some(response) = op["responses"].get(status.to_string()) else {
        mismatch(format!(
            "{method} {pointer}: status {status} is not listed ({body})"
        ));
        return;
    };
    if status >= 400 {
        let code = body["error"].as_str().unwrap_or("");
        let description = response["description"].as_str().unwrap_or("");
        if !sellable::web::api::doc::listed_codes(description).contains(&code) {
            mismatch(format!(
                "{method} {pointer}: {status} `{code}` is not among the codes it lists ({description})"
            ));
        }
    }
    if let Some(v) = validator(pointer, status) {
        let errors: Vec<String> = v
            .iter_errors(body)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        if !errors.is_empty() {
            mismatch(format!(
                "{method} {pointer}: the {status} body breaks its schema: {} — body {body}",
                errors.join("; ")
            ));
        }
    }
}
