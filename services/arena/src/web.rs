//! The browser client: the static files of `web/`, and `index.html` for
//! every address the client routes itself (a shared invite link, a game,
//! a profile), so a reload or a link opened cold lands in the app.

use std::path::{Path, PathBuf};

use actix_files::NamedFile;
use actix_web::http::header::{
    ACCEPT, ACCEPT_ENCODING, CACHE_CONTROL, ContentEncoding, HeaderValue, VARY,
};
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
    let compressed = gzipped_copy(&file);
    let opened = match compressed.as_ref().filter(|_| accepts_gzip(request)) {
        Some(gz) => NamedFile::open_async(gz).await.map(|named| {
            let extension = file.extension().and_then(|e| e.to_str()).unwrap_or("");
            named
                .set_content_type(actix_files::file_extension_to_mime(extension))
                .set_content_encoding(ContentEncoding::Gzip)
        }),
        None => NamedFile::open_async(&file).await,
    };
    match opened {
        // No build step means no hashed names: an ETag alone, and no
        // Last-Modified, keeps browsers from caching a stale module by
        // heuristic freshness.
        Ok(named) => {
            let mut response = named
                .use_etag(true)
                .use_last_modified(false)
                .into_response(request);
            if compressed.is_some() {
                response
                    .headers_mut()
                    .insert(VARY, HeaderValue::from_static("accept-encoding"));
            }
            response
        }
        Err(_) => not_found(request, dir),
    }
}

/// The precompressed copy beside a file (`name.gz`, made by the script
/// that vendors it), if there is one: the 690 KB three.js module goes out
/// as 175 KB with no compressor in the server.
fn gzipped_copy(file: &Path) -> Option<PathBuf> {
    let mut name = file.as_os_str().to_owned();
    name.push(".gz");
    let copy = PathBuf::from(name);
    copy.is_file().then_some(copy)
}

/// Whether the client takes gzip (and has not refused it with `q=0`).
fn accepts_gzip(request: &HttpRequest) -> bool {
    request
        .headers()
        .get(ACCEPT_ENCODING)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            value.split(',').any(|coding| {
                let mut parts = coding.split(';').map(str::trim);
                parts.next() == Some("gzip")
                    && parts.all(|parameter| parameter.replace(' ', "") != "q=0")
            })
        })
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
    use actix_web::App;
    use actix_web::http::header::CONTENT_TYPE;
    use actix_web::test as actix_test;

    use super::*;

    #[actix_web::test]
    async fn a_precompressed_copy_goes_to_clients_that_take_gzip_and_only_to_them() {
        let dir = std::env::temp_dir().join(format!("arena-web-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("big.js"), "export const plain = 1;").unwrap();
        std::fs::write(dir.join("big.js.gz"), b"\x1f\x8bstand-in").unwrap();
        std::fs::write(dir.join("small.js"), "export const small = 1;").unwrap();
        let app =
            actix_test::init_service(App::new().configure(|config| configure(config, &dir))).await;
        let get = |path: &str, encoding: Option<&str>| {
            let mut request = actix_test::TestRequest::get().uri(path);
            if let Some(encoding) = encoding {
                request = request.insert_header((ACCEPT_ENCODING, encoding));
            }
            request.to_request()
        };
        for (encoding, gzipped) in [
            (Some("gzip, deflate, br"), true),
            (Some("br;q=1.0, gzip;q=0.5"), true),
            (Some("gzip;q=0"), false),
            (Some("br"), false),
            (None, false),
        ] {
            let response = actix_test::call_service(&app, get("/big.js", encoding)).await;
            let headers = response.headers().clone();
            assert_eq!(
                headers
                    .get("content-encoding")
                    .map(|v| v.to_str().unwrap().to_owned()),
                gzipped.then(|| "gzip".to_owned()),
                "{encoding:?}"
            );
            assert!(
                headers
                    .get(CONTENT_TYPE)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .contains("javascript"),
                "{encoding:?}"
            );
            assert_eq!(headers.get(VARY).unwrap(), "accept-encoding");
            let body = actix_test::read_body(response).await;
            assert_eq!(body.starts_with(b"\x1f\x8b"), gzipped, "{encoding:?}");
        }
        // A file without a copy goes out as it is, with nothing to vary on.
        let response = actix_test::call_service(&app, get("/small.js", Some("gzip"))).await;
        assert!(response.headers().get("content-encoding").is_none());
        assert!(response.headers().get(VARY).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

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
