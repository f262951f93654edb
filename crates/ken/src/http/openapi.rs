//! The OpenAPI 3.1 document, generated from the handlers themselves: the
//! same `routes!` registration adds a route to the router and its
//! operation to the document, so the two cannot drift apart. Error
//! responses and the bearer requirement are added to every operation here.

use axum::Router;
use utoipa::openapi::path::Operation;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{Content, OpenApi as Doc, Ref, RefOr};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{App, api, hooks};
use crate::wire;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Kenning",
        description = "Answers questions about codebases: ranked code, answers with checked citations, people, structure, index jobs. Every route under /api/v1 and /mcp needs `Authorization: Bearer TOKEN` (`ken token create`).",
    ),
    components(schemas(wire::ErrorBody, wire::ErrorDetail, api::ModeParam)),
    modifiers(&Bearer),
    tags(
        (name = "code", description = "Search, answers, definitions"),
        (name = "people", description = "Who knows what; history"),
        (name = "structure", description = "Callers, callees, impact, references"),
        (name = "repos", description = "Repositories, files, index jobs"),
        (name = "webhooks", description = "Push webhooks (signed, no token)"),
        (name = "server", description = "Liveness"),
    )
)]
struct ApiDoc;

struct Bearer;

impl Modify for Bearer {
    fn modify(&self, doc: &mut Doc) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("a token from `ken token create`"))
                    .build(),
            ),
        );
    }
}

/// The token-guarded API routes and the whole document (open routes
/// included, their handlers registered by the caller).
pub fn routes() -> (Router<App>, Doc) {
    let (api, mut doc) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(api::search))
        .routes(routes!(api::ask))
        .routes(routes!(api::who))
        .routes(routes!(api::people))
        .routes(routes!(api::log))
        .routes(routes!(api::callers))
        .routes(routes!(api::callees))
        .routes(routes!(api::references))
        .routes(routes!(api::impact))
        .routes(routes!(api::symbols))
        .routes(routes!(api::repos))
        .routes(routes!(api::repo))
        .routes(routes!(api::file))
        .routes(routes!(api::blame))
        .routes(routes!(api::report))
        .routes(routes!(api::person))
        .routes(routes!(api::index))
        .routes(routes!(api::jobs))
        .routes(routes!(api::job))
        .split_for_parts();
    // the open routes are served by `super::router`; documented here
    let (_, open) = OpenApiRouter::<App>::new()
        .routes(routes!(api::healthz))
        .routes(routes!(hooks::github))
        .routes(routes!(hooks::gitlab))
        .split_for_parts();
    doc.merge(open);
    finish(&mut doc);
    (api, doc)
}

/// Every operation: its error responses, and the bearer requirement
/// unless it is open.
fn finish(doc: &mut Doc) {
    let error = |what: &str| {
        RefOr::T(
            ResponseBuilder::new()
                .description(what)
                .content(
                    "application/json",
                    Content::new(Some(Ref::from_schema_name("ErrorBody"))),
                )
                .build(),
        )
    };
    let names: Vec<String> = ken_core::Language::names()
        .map(|n| n.replace('+', "\\+"))
        .collect();
    // comma-separated names; blanks between commas are ignored
    let langs = format!("^ *({0})? *(, *({0})? *)*$", names.join("|"));
    for (path, item) in doc.paths.paths.iter_mut() {
        let open = path == "/healthz" || path.starts_with("/hooks/");
        let ops: [&mut Option<Operation>; 4] = [
            &mut item.get,
            &mut item.post,
            &mut item.put,
            &mut item.delete,
        ];
        for op in ops.into_iter().flatten() {
            for p in op.parameters.iter_mut().flatten() {
                if let RefOr::T(p) = p
                    && p.name == "lang"
                {
                    p.schema = Some(RefOr::T(
                        ObjectBuilder::new()
                            .schema_type(Type::String)
                            .pattern(Some(langs.clone()))
                            .into(),
                    ));
                }
            }
            if op.request_body.is_some() {
                op.responses
                    .responses
                    .entry("415".into())
                    .or_insert_with(|| {
                        error("the body is not application/json (code `bad_request`)")
                    });
            }
            // each Server-Sent Event carries one JSON object
            for r in op.responses.responses.values_mut() {
                if let RefOr::T(r) = r
                    && let Some(RefOr::T(c)) = r.content.get_mut("text/event-stream")
                {
                    c.schema = Some(RefOr::T(
                        ObjectBuilder::new().schema_type(Type::Object).into(),
                    ));
                }
            }
            let r = &mut op.responses.responses;
            let mut add = |code: &str, what: &str| {
                r.entry(code.to_string()).or_insert_with(|| error(what));
            };
            if path != "/healthz" {
                add("400", "bad request (code `bad_request`)");
                add(
                    "404",
                    "not found, or not visible to this token (code `not_found`)",
                );
                add("405", "method not allowed (code `bad_request`)");
                add("413", "request body too large (code `bad_request`)");
                add("500", "internal error (code `internal`)");
                add(
                    "503",
                    "unavailable, or the request took too long (code `unavailable`)",
                );
                add("401", "missing or bad credentials (code `unauthorized`)");
            }
            if !open {
                add(
                    "403",
                    "the token's scope does not allow this (code `unauthorized`)",
                );
                add("409", "the index is busy with another writer (code `busy`)");
                op.security = Some(vec![SecurityRequirement::new(
                    "bearer",
                    Vec::<String>::new(),
                )]);
            }
        }
    }
}

/// The document alone (for tests and `/openapi.json`).
#[cfg(test)]
pub fn document() -> Doc {
    routes().1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_is_openapi_3_1_and_lists_every_route() {
        let doc = serde_json::to_value(document()).unwrap();
        assert!(
            doc["openapi"].as_str().unwrap().starts_with("3.1"),
            "{}",
            doc["openapi"]
        );
        let paths: Vec<&String> = doc["paths"].as_object().unwrap().keys().collect();
        for p in [
            "/api/v1/search",
            "/api/v1/ask",
            "/api/v1/who",
            "/api/v1/people",
            "/api/v1/log",
            "/api/v1/callers",
            "/api/v1/callees",
            "/api/v1/references",
            "/api/v1/impact",
            "/api/v1/symbols",
            "/api/v1/repos",
            "/api/v1/repos/{name}",
            "/api/v1/repos/{name}/file",
            "/api/v1/repos/{name}/index",
            "/api/v1/repos/{name}/blame",
            "/api/v1/people/{id}",
            "/api/v1/jobs",
            "/api/v1/jobs/{id}",
            "/healthz",
            "/hooks/github",
            "/hooks/gitlab",
        ] {
            assert!(paths.iter().any(|x| *x == p), "{p} missing from {paths:?}");
        }
        let search = &doc["paths"]["/api/v1/search"]["get"];
        assert_eq!(search["security"], serde_json::json!([{"bearer": []}]));
        assert!(search["responses"]["401"].is_object());
        assert!(doc["paths"]["/healthz"]["get"]["security"].is_null());
        assert!(doc["components"]["schemas"]["Search"].is_object());
        // every reference resolves (an unresolved one hides a parameter from clients)
        fn refs(v: &serde_json::Value, out: &mut Vec<String>) {
            match v {
                serde_json::Value::Object(m) => {
                    if let Some(r) = m.get("$ref").and_then(|r| r.as_str()) {
                        out.push(r.to_string());
                    }
                    m.values().for_each(|x| refs(x, out));
                }
                serde_json::Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
                _ => {}
            }
        }
        let mut all = Vec::new();
        refs(&doc, &mut all);
        assert!(!all.is_empty());
        for r in all {
            let name = r.trim_start_matches("#/components/schemas/");
            assert!(
                doc["components"]["schemas"][name].is_object(),
                "{r} does not resolve"
            );
        }
    }
}
