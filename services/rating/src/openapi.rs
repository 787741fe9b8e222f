//! The rating service's REST description.

use utoipa::OpenApi;

use crate::routes;

#[derive(OpenApi)]
#[openapi(
    paths(routes::board, routes::my_rank, routes::profile, routes::history),
    tags((name = "ratings", description = "Leaderboards, profiles and rating history"))
)]
pub struct ApiDoc;
