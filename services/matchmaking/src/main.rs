//! `matchmaking`: accounts, queues, invites and the lobby, on its own port.

use mancala_matchmaking::{AccountSettings, Application, MatchSettings};

mancala_platform::service_main!(
    "matchmaking",
    mancala_matchmaking::declaration(),
    |parsed| Ok((
        parsed.get::<AccountSettings>()?,
        parsed.get::<MatchSettings>()?
    )),
    |settings, (accounts, matching), clock| Application::build(settings, accounts, matching, clock),
);
