//! JSON Schemas of the socket messages, committed under `proto/schema/`
//! (a test fails when they are stale) for client authors and tooling.

use schemars::schema_for;

use crate::game::{ClientMessage, ServerMessage};
use crate::lobby::{LobbyClientMessage, LobbyServerMessage};
use crate::tournament::{TournamentClientMessage, TournamentServerMessage};

/// The schema of every message a client may send, as pretty JSON.
pub fn client_messages() -> String {
    pretty(serde_json::to_value(schema_for!(ClientMessage)))
}

/// The schema of every message the server sends, as pretty JSON.
pub fn server_messages() -> String {
    pretty(serde_json::to_value(schema_for!(ServerMessage)))
}

/// The lobby socket's client messages.
pub fn lobby_client_messages() -> String {
    pretty(serde_json::to_value(schema_for!(LobbyClientMessage)))
}

/// The lobby socket's server messages.
pub fn lobby_server_messages() -> String {
    pretty(serde_json::to_value(schema_for!(LobbyServerMessage)))
}

/// The tournament standings socket's client messages.
pub fn tournament_client_messages() -> String {
    pretty(serde_json::to_value(schema_for!(TournamentClientMessage)))
}

/// The tournament standings socket's server messages.
pub fn tournament_server_messages() -> String {
    pretty(serde_json::to_value(schema_for!(TournamentServerMessage)))
}

fn pretty(value: Result<serde_json::Value, serde_json::Error>) -> String {
    let mut text = value
        .and_then(|value| serde_json::to_string_pretty(&value))
        .unwrap_or_else(|_| "{}".to_owned());
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// Regenerate with `UPDATE_SCHEMA=1 cargo test -p mancala-proto schema`.
    #[test]
    fn committed_schemas_are_current() {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema");
        for (file, generated) in [
            ("ws-client.json", client_messages()),
            ("ws-server.json", server_messages()),
            ("lobby-client.json", lobby_client_messages()),
            ("lobby-server.json", lobby_server_messages()),
            ("tournament-client.json", tournament_client_messages()),
            ("tournament-server.json", tournament_server_messages()),
        ] {
            let path = folder.join(file);
            if std::env::var_os("UPDATE_SCHEMA").is_some() {
                std::fs::write(&path, &generated).unwrap();
            }
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                committed == generated,
                "proto/schema/{file} is stale: rerun with UPDATE_SCHEMA=1"
            );
        }
    }
}
