//! The error answers many routes share, for their OpenAPI descriptions:
//! a route lists these types in `responses(...)` instead of writing the
//! same line again (what each code means is in `mancala_proto::ErrorCode`).

use mancala_proto::ErrorBody;
use utoipa::IntoResponses;

/// A JSON body the route could not take.
#[derive(IntoResponses)]
#[response(
    status = 400,
    description = "`invalid_input`, `malformed_json` or `unknown_field`"
)]
pub struct BadBody(pub ErrorBody);

/// A path or query the route could not take.
#[derive(IntoResponses)]
#[response(
    status = 400,
    description = "`invalid_input`: not an id, or a bad query"
)]
pub struct BadQuery(pub ErrorBody);

/// No bearer token, or one that is not good.
#[derive(IntoResponses)]
#[response(
    status = 401,
    description = "`unauthenticated`, `token_invalid` or `token_expired`"
)]
pub struct Unauthenticated(pub ErrorBody);

/// A moderators' route asked without the role.
#[derive(IntoResponses)]
#[response(
    status = 403,
    description = "`forbidden`: the token carries no moderator's role (or, for an admin's route, no admin's)"
)]
pub struct Forbidden(pub ErrorBody);

/// Nothing by that id.
#[derive(IntoResponses)]
#[response(status = 404, description = "`not_found`")]
pub struct NotFound(pub ErrorBody);

/// A body over the limit every JSON route has.
#[derive(IntoResponses)]
#[response(
    status = 413,
    description = "`payload_too_large`: the body exceeds 16 KiB"
)]
pub struct BodyTooLarge(pub ErrorBody);

/// Too many of these lately.
#[derive(IntoResponses)]
#[response(status = 429, description = "`rate_limited`, with `Retry-After`")]
pub struct RateLimited(pub ErrorBody);
