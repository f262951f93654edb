//! Errors on the HTTP edge: every failure — the engine's, a malformed
//! request, a missing route, a timeout, a panic — answers with a status
//! and `{"error": {"code", "message", "hint"?}}`.

use axum::Json;
use axum::extract::rejection::{BytesRejection, JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ken_engine::{Edge, EngineError, ErrorKind, Principal};
use serde::de::DeserializeOwned;

use crate::calls::Call;
use crate::wire::ErrorBody;
use crate::work::{Failed, Workers};

/// An error answered as JSON.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub body: ErrorBody,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            body: ErrorBody::new(code, message, None),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    pub fn unauthorized(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
}

/// The status of each kind of engine error.
pub fn status_of(kind: ErrorKind) -> StatusCode {
    match kind {
        ErrorKind::BadInput => StatusCode::BAD_REQUEST,
        ErrorKind::NotFound => StatusCode::NOT_FOUND,
        ErrorKind::Forbidden => StatusCode::FORBIDDEN,
        ErrorKind::Busy => StatusCode::CONFLICT,
        ErrorKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> ApiError {
        ApiError {
            status: status_of(e.kind()),
            body: ErrorBody::from_engine(&e, Edge::Http),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = (self.status, Json(self.body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        r
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

fn rejection(status: StatusCode, text: String) -> ApiError {
    // a well-formed body of the wrong shape is as bad a request as any
    let status = if status == StatusCode::UNPROCESSABLE_ENTITY {
        StatusCode::BAD_REQUEST
    } else {
        status
    };
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        return ApiError::new(status, "bad_request", "the request body is too large");
    }
    if status.is_server_error() {
        return ApiError::internal(text);
    }
    ApiError::new(status, "bad_request", text)
}

/// `Query<T>` whose rejection is a JSON error.
pub struct Q<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Q<T> {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(v)) => Ok(Q(v)),
            Err(e) => Err(query_rejection(e)),
        }
    }
}

fn query_rejection(e: QueryRejection) -> ApiError {
    rejection(StatusCode::BAD_REQUEST, e.body_text())
}

/// `Path<T>` whose rejection is a JSON error.
pub struct P<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for P<T> {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(v)) => Ok(P(v)),
            Err(e) => Err(path_rejection(e)),
        }
    }
}

fn path_rejection(e: PathRejection) -> ApiError {
    rejection(e.status(), e.body_text())
}

/// `Json<T>` whose rejection is a JSON error.
pub struct J<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for J<T> {
    type Rejection = ApiError;
    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(v)) => Ok(J(v)),
            Err(e) => Err(json_rejection(e)),
        }
    }
}

fn json_rejection(e: JsonRejection) -> ApiError {
    rejection(e.status(), e.body_text())
}

/// The raw body, its rejection a JSON error (too large: 413).
pub struct RawBody(pub axum::body::Bytes);

impl<S: Send + Sync> FromRequest<S> for RawBody {
    type Rejection = ApiError;
    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::body::Bytes::from_request(req, state).await {
            Ok(b) => Ok(RawBody(b)),
            Err(e) => Err(bytes_rejection(e)),
        }
    }
}

fn bytes_rejection(e: BytesRejection) -> ApiError {
    rejection(e.status(), e.body_text())
}

/// Answer one capability's request for `who` (CPU-bound work waits for a
/// permit, see [`crate::work`]).
pub async fn call<C: Call>(app: &super::App, who: Principal, c: C) -> ApiResult<Json<C::Wire>> {
    app.work
        .call(app.engine.clone(), who, c)
        .await
        .map(Json)
        .map_err(ApiError::from)
}

/// Run engine work that mostly waits, without a permit.
pub async fn waiting<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, EngineError> + Send + 'static,
) -> ApiResult<T> {
    Workers::run_unlimited(f).await.map_err(ApiError::from)
}

impl From<Failed> for ApiError {
    fn from(f: Failed) -> ApiError {
        match f {
            Failed::Engine(e) => e.into(),
            Failed::Crashed => ApiError::internal("the request failed inside the engine"),
        }
    }
}
