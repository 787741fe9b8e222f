//! The game sockets on the platform's one WebSocket stack
//! (`mancala_platform::socket`), with game-room's limits.

use actix_web::HttpRequest;
use mancala_platform::Clock;
use mancala_platform::socket::SocketLimits;
use mancala_proto::ClientMessage;

use crate::config::GameRoomSettings;

pub(crate) use mancala_platform::socket::Inbound as Frame;

/// A play or watch socket: clients send [`ClientMessage`]s.
pub(crate) type Socket = mancala_platform::socket::Socket<ClientMessage>;

/// What a game socket's client did.
pub(crate) type Inbound = Frame<ClientMessage>;

/// Opens a game socket with game-room's limits.
pub(crate) fn open(
    session: actix_ws::Session,
    stream: actix_ws::MessageStream,
    settings: &GameRoomSettings,
    clock: Clock,
) -> Socket {
    Socket::new(session, stream, limits(settings), clock)
}

fn limits(settings: &GameRoomSettings) -> SocketLimits {
    settings.sockets.limits(
        settings.max_frame_bytes,
        settings.message_rate.burst,
        settings.message_rate.per_second,
    )
}

/// Whether a browser on `Origin` may open a socket (see the platform's).
pub(crate) fn origin_allowed(request: &HttpRequest, settings: &GameRoomSettings) -> bool {
    mancala_platform::http::origin_allowed(request, &settings.sockets.allowed_origins)
}
