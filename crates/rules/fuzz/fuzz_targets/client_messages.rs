//! Arbitrary bytes as WebSocket text frames, through the decoders the game
//! and lobby sockets use. Whatever arrives, decoding must not panic, and a
//! message that decodes must encode to JSON that decodes to the same
//! message (so what the server logs or echoes is what it understood).

#![no_main]

use libfuzzer_sys::fuzz_target;
use mancala_proto::ClientMessage;
use mancala_proto::lobby::LobbyClientMessage;

fn round_trips<T>(text: &str)
where
    T: serde::de::DeserializeOwned + serde::Serialize + PartialEq,
{
    if let Ok(message) = serde_json::from_str::<T>(text) {
        let encoded = serde_json::to_string(&message).unwrap();
        let decoded: T = serde_json::from_str(&encoded).unwrap();
        assert!(decoded == message, "{text} -> {encoded}");
    }
}

fuzz_target!(|bytes: &[u8]| {
    // Frames are text: the sockets refuse binary ones before decoding.
    let Ok(text) = std::str::from_utf8(bytes) else { return };
    round_trips::<ClientMessage>(text);
    round_trips::<LobbyClientMessage>(text);
});
