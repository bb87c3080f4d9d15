//! The OpenAPI document: every route of the router under /api/v1 is in it with every method it
//! answers, it validates against the OpenAPI 3.1 schema, and the reference page is served from
//! the binary. (That each answer matches the document is checked on every call the suite makes:
//! see `contract.rs`.)

use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::Value;

use crate::both;

fn document() -> Value {
    serde_json::to_value(sellable::web::api::openapi()).unwrap()
}

both!(
    every_api_route_and_method_of_the_router_is_in_the_openapi_document,
    |app| {
        let served: Value = reqwest::get(app.url("/api/openapi.json"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(served, document(), "the served document is the built one");
        let router = sellable::web::router(app.state.clone());
        let routes: BTreeSet<String> = sellable::web::route_paths(&router)
            .into_iter()
            .filter(|p| p.starts_with("/api/v1"))
            .collect();
        let documented: BTreeSet<String> = served["paths"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert!(routes.len() >= 40, "{routes:?}");
        assert_eq!(
            routes, documented,
            "every /api/v1 route is documented, and nothing else is"
        );
        // The methods: a method a route answers (anything but the 405 fallback) is documented,
        // and a documented one is answered.
        let key = app.acme_api().await.key;
        let http = reqwest::Client::new();
        let mut wrong = Vec::new();
        for path in &routes {
            let filled: String = path
                .split('/')
                .map(|s| if s.starts_with('{') { "1" } else { s })
                .collect::<Vec<_>>()
                .join("/");
            for method in [
                Method::GET,
                Method::POST,
                Method::PATCH,
                Method::PUT,
                Method::DELETE,
            ] {
                let r = http
                    .request(method.clone(), app.url(&filled))
                    .bearer_auth(&key)
                    .header("content-type", "application/json")
                    .body("{}")
                    .send()
                    .await
                    .unwrap();
                let answered = r.status() != 405;
                let listed = served["paths"][path]
                    .get(method.as_str().to_ascii_lowercase())
                    .is_some();
                if answered != listed {
                    wrong.push(format!(
                        "{method} {path}: answered {}, documented {listed}",
                        r.status()
                    ));
                }
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
    }
);

#[test]
fn the_openapi_document_validates_against_the_openapi_3_1_schema() {
    let doc = document();
    assert_eq!(doc["openapi"], "3.1.0");
    // The OpenAPI Initiative's schema of 3.1 documents (from openapi-spec-validator's copy).
    let meta: Value =
        serde_json::from_str(include_str!("../fixtures/openapi-3.1-schema.json")).unwrap();
    let validator = jsonschema::validator_for(&meta).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // Every schema in it is a valid JSON Schema (2020-12, OpenAPI 3.1's dialect).
    for (name, schema) in doc["components"]["schemas"].as_object().unwrap() {
        let mut s = schema.clone();
        s["$schema"] = "https://json-schema.org/draft/2020-12/schema".into();
        if let Err(e) = jsonschema::meta::validate(&s) {
            panic!("schema {name}: {e}");
        }
    }
    // Every reference resolves.
    let text = doc.to_string();
    for piece in text.split("\"$ref\":\"").skip(1) {
        let target = piece.split('"').next().unwrap();
        let pointer = target.trim_start_matches('#');
        assert!(doc.pointer(pointer).is_some(), "{target} resolves");
    }
}

#[test]
fn every_operation_says_what_it_answers_and_how_it_refuses() {
    let doc = document();
    let mut ids = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let name = format!("{method} {path}");
            assert!(
                ids.insert(op["operationId"].as_str().unwrap_or("").to_string()),
                "{name}: its operationId is unique"
            );
            assert!(op["summary"].is_string(), "{name} has a summary");
            assert!(op["tags"].is_array(), "{name} has a tag");
            let responses = op["responses"].as_object().unwrap();
            assert!(
                responses.keys().any(|s| s.starts_with('2')),
                "{name} documents its success"
            );
            for status in ["400", "401", "404"] {
                assert!(responses.contains_key(status), "{name} lists {status}");
            }
            for (status, r) in responses {
                if status.starts_with('2') {
                    continue;
                }
                let codes =
                    sellable::web::api::doc::listed_codes(r["description"].as_str().unwrap_or(""));
                assert!(!codes.is_empty(), "{name} {status} names its error codes");
                assert_eq!(
                    r["content"]["application/json"]["schema"]["$ref"],
                    "#/components/schemas/Error",
                    "{name} {status} answers the error body"
                );
            }
            // Each {param} of the path is declared.
            for seg in path.split('/').filter(|s| s.starts_with('{')) {
                let p = seg.trim_matches(|c| c == '{' || c == '}');
                assert!(
                    op["parameters"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|x| x["name"] == p && x["in"] == "path"),
                    "{name} declares its path parameter {p}"
                );
            }
        }
    }
}

both!(
    the_api_reference_page_and_its_assets_come_from_the_binary,
    |app| {
        let r = reqwest::get(app.url("/api/docs/")).await.unwrap();
        assert_eq!(r.status(), 200);
        let html = r.text().await.unwrap();
        assert!(html.contains("swagger-ui-bundle.js"), "{html}");
        assert!(
            !html.contains("//unpkg") && !html.contains("cdn"),
            "no CDN: {html}"
        );
        for asset in [
            "swagger-ui-bundle.js",
            "swagger-ui.css",
            "swagger-initializer.js",
        ] {
            let r = reqwest::get(app.url(&format!("/api/docs/{asset}")))
                .await
                .unwrap();
            assert_eq!(r.status(), 200, "{asset}");
            let body = r.text().await.unwrap();
            assert!(body.len() > 100, "{asset}");
            if asset == "swagger-initializer.js" {
                assert!(body.contains("/api/openapi.json"), "{body}");
            }
        }
    }
);
