//! `mancala-admin`: roles from the command line, for whoever holds the
//! services' settings (the first admin has nobody to grant it on the
//! site, and no default password stands in):
//!
//!     mancala-admin grant alice admin --reason "the site's owner"
//!     mancala-admin staff
//!
//! It reads the same `DATABASE_URL`, `REDIS_URL` and `APP_*` settings as
//! the services. A grant is logged in the moderation log with no actor
//! (the command line) and ends the account's sessions, as a role changed
//! on the site does, so no token keeps a role it no longer has.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use mancala_platform::process::connect_stores;
use mancala_platform::revocation::Revocations;
use mancala_platform::{Clock, Settings};
use mancala_proto::moderation::Role;

#[derive(Parser)]
#[command(
    name = "mancala-admin",
    about = "Mancala Arena's roles, from the command line"
)]
struct Cli {
    #[command(flatten)]
    settings: Settings,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Gives a registered account a role: `player`, `moderator` or `admin`.
    Grant {
        username: String,
        role: String,
        /// Why, for the moderation log.
        #[arg(long)]
        reason: String,
    },
    /// Lists the moderators and admins.
    Staff,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli).await {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("mancala-admin: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> Result<String, String> {
    let (postgres, redis) = connect_stores(&cli.settings, 1)
        .await
        .map_err(|error| format!("cannot reach the stores: {error}"))?;
    match cli.command {
        Command::Grant {
            username,
            role,
            reason,
        } => {
            let role = Role::parse(&role)
                .ok_or_else(|| format!("{role:?} is not a role (player, moderator, admin)"))?;
            let reason = mancala_proto::moderation::REASON
                .clean(&reason)
                .map_err(|error| format!("--reason: {error}"))?;
            let reason = reason.as_str();
            let clock = Clock::system();
            let sessions = mancala_matchmaking::grant_role(
                &postgres,
                &username,
                role,
                reason,
                clock.now_utc(),
            )
            .await
            .map_err(|error| error.to_string())?;
            let now = clock.now_secs();
            let until = now + cli.settings.access_token_ttl.as_secs() + 60;
            for session in &sessions {
                Revocations::default()
                    .revoke(&redis, &session.to_string(), until, now)
                    .await
                    .map_err(|error| format!("ending a session: {error}"))?;
            }
            Ok(format!(
                "{username} is now {}; {} session(s) ended",
                role.as_str(),
                sessions.len()
            ))
        }
        Command::Staff => {
            let staff = mancala_matchmaking::staff(&postgres)
                .await
                .map_err(|error| error.to_string())?;
            Ok(staff
                .into_iter()
                .map(|(name, role)| format!("{}\t{name}", role.as_str()))
                .collect::<Vec<_>>()
                .join("\n"))
        }
    }
}
