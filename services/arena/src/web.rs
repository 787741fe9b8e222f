//! The browser client: the static files of `web/`, and `index.html` for
//! every address the client routes itself (a shared invite link, a game,
//! a profile), so a reload or a link opened cold lands in the app.
//!
//! A page address answers exactly what `/index.html` answers: the same
//! validators and cache headers, 304 to a browser revalidating its copy,
//! and HEAD as GET without the body. (It once forced 200 onto the 304 of a
//! revalidation: every reload by a returning player showed a blank page.)

use std::path::{Path, PathBuf};

use actix_files::NamedFile;
use actix_web::http::Method;
use actix_web::http::header::{
    ACCEPT, ACCEPT_ENCODING, CACHE_CONTROL, ContentEncoding, ContentType, HeaderValue, VARY,
};
use actix_web::{HttpRequest, HttpResponse, ResponseError, guard, web};
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
    "/tournaments",
    "/tournament/{id}",
    "/mod",
    "/mod/live",
    "/mod/log",
    "/mod/player/{id}",
];

/// With no build step there are no hashed file names, so nothing may be
/// fresh without asking: the browser revalidates every file (a 304 when
/// it has not changed) and never runs a stale module beside a new one.
/// Saying so outright also rules out heuristic freshness, which would
/// otherwise follow from `Last-Modified`.
const REVALIDATE: HeaderValue = HeaderValue::from_static("no-cache");

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
            web::route()
                .guard(guard::Any(guard::Get()).or(guard::Head()))
                .to(move |request: HttpRequest| {
                    let index = index.clone();
                    async move { page(&request, &index).await }
                }),
        );
    }
    let dir = dir.to_path_buf();
    config.default_service(web::to(move |request: HttpRequest| {
        let dir = dir.clone();
        async move { asset(&request, &dir).await }
    }));
}

/// The client's page at one of its own addresses.
async fn page(request: &HttpRequest, index: &Path) -> HttpResponse {
    match served(request, index).await {
        Some(response) => response,
        None => not_installed(),
    }
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
    let served = match file {
        Some(file) => served(request, &file).await,
        None => None,
    };
    match served {
        Some(response) => response,
        None => not_found(request, dir).await,
    }
}

/// The one way a file goes out, whatever address named it: the file
/// service's answer (conditional requests, ranges, HEAD) with an ETag and
/// `Last-Modified` for browsers to revalidate with, and `no-cache`.
/// `None` when the file cannot be opened.
async fn served(request: &HttpRequest, file: &Path) -> Option<HttpResponse> {
    let compressed = gzipped_copy(file);
    let named = match compressed.as_ref().filter(|_| accepts_gzip(request)) {
        Some(gz) => NamedFile::open_async(gz).await.ok().map(|named| {
            let extension = file.extension().and_then(|e| e.to_str()).unwrap_or("");
            named
                .set_content_type(actix_files::file_extension_to_mime(extension))
                .set_content_encoding(ContentEncoding::Gzip)
        }),
        None => NamedFile::open_async(file).await.ok(),
    }?;
    let mut response = named
        .use_etag(true)
        .use_last_modified(true)
        .into_response(request);
    let headers = response.headers_mut();
    headers.insert(CACHE_CONTROL, REVALIDATE);
    if compressed.is_some() {
        headers.insert(VARY, HeaderValue::from_static("accept-encoding"));
    }
    Some(response)
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
async fn not_found(request: &HttpRequest, dir: &Path) -> HttpResponse {
    let wants_page = !request.path().starts_with("/v1/")
        && request
            .headers()
            .get(ACCEPT)
            .and_then(|accept| accept.to_str().ok())
            .is_some_and(|accept| accept.contains("text/html"));
    if !wants_page {
        return ApiError::new(ErrorCode::NotFound, "nothing here").error_response();
    }
    // The whole page, with no validators: a missing page is never "not
    // modified", whatever copy the browser holds.
    match tokio::fs::read(dir.join("index.html")).await {
        Ok(page) => HttpResponse::NotFound()
            .content_type(ContentType::html())
            .insert_header((CACHE_CONTROL, REVALIDATE))
            .body(page),
        Err(_) => not_installed(),
    }
}

fn not_installed() -> HttpResponse {
    HttpResponse::NotFound().body("the web client is not installed (APP_WEB_DIR)")
}

#[cfg(test)]
mod tests {
    use actix_web::App;
    use actix_web::http::StatusCode;
    use actix_web::http::header::CONTENT_TYPE;
    use actix_web::test as actix_test;

    use super::*;

    /// A client folder of its own for one test.
    fn client_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("arena-web-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    const PAGE: &str = "<!doctype html><title>Mancala Arena</title>";

    fn page_dir(name: &str) -> PathBuf {
        let dir = client_dir(name);
        std::fs::write(dir.join("index.html"), PAGE).unwrap();
        std::fs::write(dir.join("app.js"), "export {};").unwrap();
        dir
    }

    /// Every page address, as a browser would type it.
    const PAGE_ADDRESSES: &[&str] = &[
        "/",
        "/index.html",
        "/lobby",
        "/help",
        "/leaderboard",
        "/leaderboard/kalah",
        "/invite/abc",
        "/game/0190d2d4-0000-7000-8000-000000000000",
        "/watch/0190d2d4-0000-7000-8000-000000000000",
        "/player/0190d2d4-0000-7000-8000-000000000000",
        "/tournaments",
        "/tournament/0190d2d4-0000-7000-8000-000000000000",
        "/mod",
        "/mod/log",
        "/mod/player/0190d2d4-0000-7000-8000-000000000000",
    ];

    fn header(response: &actix_web::dev::ServiceResponse, name: &str) -> Option<String> {
        response
            .headers()
            .get(name)
            .map(|value| value.to_str().unwrap().to_owned())
    }

    #[actix_web::test]
    async fn every_page_address_answers_as_the_page_file_does() {
        let dir = page_dir("pages");
        let app =
            actix_test::init_service(App::new().configure(|config| configure(config, &dir))).await;
        let first = actix_test::call_service(
            &app,
            actix_test::TestRequest::get()
                .uri("/index.html")
                .to_request(),
        )
        .await;
        let etag = header(&first, "etag").expect("an ETag");
        let modified = header(&first, "last-modified").expect("a Last-Modified");
        for &address in PAGE_ADDRESSES {
            // A first visit: the page, whole, with what it takes to
            // revalidate it later.
            let fresh = actix_test::call_service(
                &app,
                actix_test::TestRequest::get().uri(address).to_request(),
            )
            .await;
            assert_eq!(fresh.status(), StatusCode::OK, "{address}");
            assert_eq!(header(&fresh, "etag").as_ref(), Some(&etag), "{address}");
            assert_eq!(header(&fresh, "last-modified").as_ref(), Some(&modified));
            assert_eq!(header(&fresh, "cache-control").as_deref(), Some("no-cache"));
            assert!(
                header(&fresh, "content-type")
                    .unwrap()
                    .starts_with("text/html")
            );
            assert_eq!(
                actix_test::read_body(fresh).await,
                PAGE.as_bytes(),
                "{address}"
            );
            // A reload or a revisit: the browser's copy is current.
            for (name, value) in [("if-none-match", &etag), ("if-modified-since", &modified)] {
                let again = actix_test::call_service(
                    &app,
                    actix_test::TestRequest::get()
                        .uri(address)
                        .insert_header((name, value.as_str()))
                        .to_request(),
                )
                .await;
                assert_eq!(again.status(), StatusCode::NOT_MODIFIED, "{address} {name}");
                assert_eq!(header(&again, "etag").as_ref(), Some(&etag));
                assert_eq!(header(&again, "cache-control").as_deref(), Some("no-cache"));
                assert!(actix_test::read_body(again).await.is_empty(), "{address}");
            }
            // A copy from before the page changed: the new page.
            let stale = actix_test::call_service(
                &app,
                actix_test::TestRequest::get()
                    .uri(address)
                    .insert_header(("if-none-match", "\"an-older-page\""))
                    .to_request(),
            )
            .await;
            assert_eq!(stale.status(), StatusCode::OK, "{address}");
            assert_eq!(actix_test::read_body(stale).await, PAGE.as_bytes());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[actix_web::test]
    async fn a_missing_page_is_never_not_modified_and_a_missing_api_is_json() {
        let dir = page_dir("missing");
        let app =
            actix_test::init_service(App::new().configure(|config| configure(config, &dir))).await;
        let current =
            actix_test::call_service(&app, actix_test::TestRequest::get().uri("/").to_request())
                .await;
        let etag = header(&current, "etag").unwrap();
        let missing = actix_test::call_service(
            &app,
            actix_test::TestRequest::get()
                .uri("/no/such/page")
                .insert_header((ACCEPT, "text/html,*/*"))
                .insert_header(("if-none-match", etag.as_str()))
                .to_request(),
        )
        .await;
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
        assert_eq!(actix_test::read_body(missing).await, PAGE.as_bytes());
        let api = actix_test::call_service(
            &app,
            actix_test::TestRequest::get()
                .uri("/v1/nothing")
                .insert_header((ACCEPT, "text/html"))
                .to_request(),
        )
        .await;
        assert_eq!(api.status(), StatusCode::NOT_FOUND);
        assert!(header(&api, "content-type").unwrap().contains("json"));
        // Only reads: a form posted to a page address changes nothing and
        // is not answered with the page as if it were.
        let posted = actix_test::call_service(
            &app,
            actix_test::TestRequest::post().uri("/lobby").to_request(),
        )
        .await;
        assert_eq!(posted.status(), StatusCode::NOT_FOUND);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// HEAD over a real connection: the body is left out on the wire, so
    /// only a server shows it.
    #[actix_web::test]
    async fn head_is_get_without_the_body_on_every_page_address() {
        let dir = page_dir("head");
        let served_dir = dir.clone();
        let server = actix_web::HttpServer::new(move || {
            let dir = served_dir.clone();
            App::new().configure(move |config| configure(config, &dir))
        })
        .workers(1)
        .bind(("127.0.0.1", 0))
        .unwrap();
        let address = server.addrs()[0];
        let running = server.run();
        let handle = running.handle();
        actix_web::rt::spawn(running);
        let client = awc::Client::default();
        for &path in PAGE_ADDRESSES {
            let url = format!("http://{address}{path}");
            let mut got = client.get(&url).send().await.unwrap();
            let body = got.body().await.unwrap();
            let mut head = client.head(&url).send().await.unwrap();
            assert_eq!(head.status(), StatusCode::OK, "{path}");
            assert_eq!(
                head.headers().get("content-length").unwrap(),
                &body.len().to_string(),
                "{path}"
            );
            assert_eq!(head.headers().get("etag"), got.headers().get("etag"));
            assert_eq!(
                head.headers().get("cache-control"),
                got.headers().get("cache-control")
            );
            assert!(head.body().await.unwrap().is_empty(), "{path}");
        }
        handle.stop(true).await;
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[actix_web::test]
    async fn a_precompressed_copy_goes_to_clients_that_take_gzip_and_only_to_them() {
        let dir = client_dir("gzip");
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
