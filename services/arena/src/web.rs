//! The browser client: the static files of `web/`, and `index.html` for
//! every address the client routes itself (a shared invite link, a game,
//! a profile), so a reload or a link opened cold lands in the app.

use std::path::{Path, PathBuf};

use actix_files::NamedFile;
use actix_web::http::header::{ACCEPT, CACHE_CONTROL, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::{HttpRequest, HttpResponse, ResponseError, web};
use mancala_platform::ApiError;
use mancala_proto::ErrorCode;

/// Addresses the client resolves itself; the server only hands it the page.
const CLIENT_ROUTES: &[&str] = &[
    "/",
    "/lobby",
    "/help",
    "/leaderboard",
    "/leaderboard/{variant}",
    "/invite/{code}",
    "/game/{id}",
    "/watch/{id}",
    "/player/{id}",
];

/// Where the client's files are.
#[derive(Clone, Debug, clap::Args)]
pub struct WebSettings {
    /// The browser client's folder (`web` of the repository, as
    /// `deploy/run.sh` runs from the checkout).
    #[arg(env = "APP_WEB_DIR", default_value = "web")]
    pub web_dir: PathBuf,
}

/// Mounts the client after the APIs, so `/v1/...` is never shadowed.
pub fn configure(config: &mut web::ServiceConfig, dir: &Path) {
    let index = dir.join("index.html");
    for route in CLIENT_ROUTES {
        let index = index.clone();
        config.route(
            route,
            web::get().to(move |request: HttpRequest| {
                let index = index.clone();
                async move { page(&request, &index, StatusCode::OK) }
            }),
        );
    }
    let dir = dir.to_path_buf();
    config.default_service(web::to(move |request: HttpRequest| {
        let dir = dir.clone();
        async move { asset(&request, &dir).await }
    }));
}

/// A file of the client, or the not-found answer. Only reads, only plain
/// names: no hidden files, no `..`, no percent-escapes (none of the
/// client's files need one) and no folders, so an answer never tells which
/// folders exist.
async fn asset(request: &HttpRequest, dir: &Path) -> HttpResponse {
    let readable = matches!(*request.method(), Method::GET | Method::HEAD);
    let file = readable
        .then(|| asset_path(request.path()))
        .flatten()
        .map(|relative| dir.join(relative))
        .filter(|path| path.is_file());
    let Some(file) = file else {
        return not_found(request, dir);
    };
    match NamedFile::open_async(&file).await {
        // No build step means no hashed names: an ETag alone, and no
        // Last-Modified, keeps browsers from caching a stale module by
        // heuristic freshness.
        Ok(file) => file
            .use_etag(true)
            .use_last_modified(false)
            .into_response(request),
        Err(_) => not_found(request, dir),
    }
}

/// The file a request path names inside the client's folder, if it is one
/// the client could have.
fn asset_path(path: &str) -> Option<PathBuf> {
    let relative = path.strip_prefix('/')?;
    let plain = |segment: &str| {
        !segment.is_empty()
            && !segment.starts_with('.')
            && segment
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    relative
        .split('/')
        .all(plain)
        .then(|| relative.split('/').collect())
}

/// Nothing here: the client's own not-found page for a browser asking for
/// a page (the app shows it for an address it does not know), the API's
/// JSON error for everything else and anything under `/v1/`.
fn not_found(request: &HttpRequest, dir: &Path) -> HttpResponse {
    let wants_page = !request.path().starts_with("/v1/")
        && request
            .headers()
            .get(ACCEPT)
            .and_then(|accept| accept.to_str().ok())
            .is_some_and(|accept| accept.contains("text/html"));
    if wants_page {
        return page(request, &dir.join("index.html"), StatusCode::NOT_FOUND);
    }
    ApiError::new(ErrorCode::NotFound, "nothing here").error_response()
}

fn page(request: &HttpRequest, index: &Path, status: StatusCode) -> HttpResponse {
    match NamedFile::open(index) {
        Ok(file) => {
            let mut response = file.into_response(request);
            *response.status_mut() = status;
            response
                .headers_mut()
                .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            response
        }
        Err(_) => HttpResponse::NotFound().body("the web client is not installed (APP_WEB_DIR)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_file_names_are_assets() {
        assert_eq!(asset_path("/app.js"), Some(PathBuf::from("app.js")));
        assert_eq!(
            asset_path("/match/model.js"),
            Some(PathBuf::from("match/model.js"))
        );
        for path in [
            "/",
            "/strings/",
            "/..%2fREADME.md",
            "/../README.md",
            "/.git/config",
            "/match//model.js",
            "/a b.js",
        ] {
            assert_eq!(asset_path(path), None, "{path}");
        }
    }
}
