//! The browser client: the static files of `web/`, and `index.html` for
//! every address the client routes itself (a shared invite link, a game,
//! a profile), so a reload or a link opened cold lands in the app.

use std::path::{Path, PathBuf};

use actix_files::{Files, NamedFile};
use actix_web::http::header::{CACHE_CONTROL, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};

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
                async move { page(&request, &index) }
            }),
        );
    }
    config.service(
        Files::new("/", dir)
            // Only reads; anything else is the app's 404.
            .guard(actix_web::guard::Any(actix_web::guard::Get()).or(actix_web::guard::Head()))
            // No build step means no hashed names: an ETag alone, and no
            // Last-Modified, keeps browsers from caching a stale module by
            // heuristic freshness.
            .use_etag(true)
            .use_last_modified(false)
            .default_handler(web::to(mancala_platform::http::not_found)),
    );
}

fn page(request: &HttpRequest, index: &Path) -> HttpResponse {
    match NamedFile::open(index) {
        Ok(file) => {
            let mut response = file.into_response(request);
            response
                .headers_mut()
                .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            response
        }
        Err(_) => HttpResponse::NotFound().body("the web client is not installed (APP_WEB_DIR)"),
    }
}
