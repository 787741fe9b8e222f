//! What a moderator does to an account, and its lifting. Each action is one
//! transaction that writes what it changes and its line in the audit log
//! (so there is never one without the other), and closes the open reports
//! it answers; what must follow outside Postgres comes after the commit:
//! sessions ended, queue tickets dropped, open lobbies told, the rating
//! workers woken for a recompute.

use mancala_platform::{ApiError, Moderator};
use mancala_proto::ErrorCode;
use mancala_proto::bus::names;
use mancala_proto::lobby::LobbyServerMessage;
use mancala_proto::moderation::{self, ActionDone, Answers, ModAction, Role, SanctionKind};
use serde_json::json;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use super::store::{self, LogLine, NewSanction};
use crate::accounts::Accounts;
use crate::context::Context;
use crate::pairer::player_channel;
use crate::queue::store as queues;

/// The longest ranked ban a moderator can give at once: a year.
const MAX_BAN_HOURS: u32 = 24 * 365;

/// What has to happen once the action is committed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Follow {
    /// Drop the player's queue tickets (ranked play closed).
    leave_queues: bool,
    /// Send the player's open lobbies their standing.
    tell_lobby: bool,
    /// End every session (closed account, role changed).
    end_sessions: bool,
    /// Wake the rating workers (a recompute was asked for).
    wake_ratings: bool,
}

/// A reason as the log keeps it: 1 to 500 characters of clean text.
pub(crate) fn reason(text: &str) -> Result<String, ApiError> {
    Ok(moderation::REASON.clean(text)?)
}

fn parse_time(text: &str) -> Result<OffsetDateTime, ApiError> {
    OffsetDateTime::parse(text, &Rfc3339)
        .map_err(|_| ApiError::new(ErrorCode::InvalidInput, "`since` must be an RFC 3339 time"))
}

fn not_allowed(message: &str) -> ApiError {
    ApiError::new(ErrorCode::NotAllowed, message)
}

fn no_player() -> ApiError {
    ApiError::new(ErrorCode::NotFound, "no such player")
}

/// Moderators act on players; on a moderator or an admin only an admin
/// acts, and nobody on themself.
fn may_act_on(actor: &Moderator, target: Uuid, role: Role) -> Result<(), ApiError> {
    if actor.player_id == target {
        return Err(not_allowed("not on your own account"));
    }
    if role.moderates() && actor.role != Role::Admin {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            "only an admin acts on a moderator or an admin",
        ));
    }
    Ok(())
}

/// Does `action` to `player` for `actor`.
pub(crate) async fn act(
    deps: &Context,
    accounts: &Accounts,
    actor: Moderator,
    player: Uuid,
    action: ModAction,
) -> Result<ActionDone, ApiError> {
    let why = reason(action.reason())?;
    let now = deps.clock.now_utc();
    let mut tx = deps.postgres.begin().await?;
    let (role, closed) = store::lock_account(&mut tx, player)
        .await?
        .ok_or_else(no_player)?;
    may_act_on(&actor, player, role)?;
    let by = Some(actor.player_id);
    let mut follow = Follow::default();
    let mut sanction = None;
    let mut recompute = None;
    let details = match &action {
        ModAction::Warn { .. } => {
            let new = NewSanction {
                player,
                kind: SanctionKind::Warning,
                reason: &why,
                by,
                until: None,
                covers_from: None,
            };
            sanction = Some(store::insert_sanction(&mut tx, new, now).await?);
            follow.tell_lobby = true;
            json!({})
        }
        ModAction::BanRanked { hours, .. } => {
            if !(1..=MAX_BAN_HOURS).contains(hours) {
                return Err(ApiError::new(
                    ErrorCode::InvalidInput,
                    format!("`hours` must be 1 to {MAX_BAN_HOURS}"),
                ));
            }
            let until = now + time::Duration::hours(i64::from(*hours));
            let new = NewSanction {
                player,
                kind: SanctionKind::RankedBan,
                reason: &why,
                by,
                until: Some(until),
                covers_from: None,
            };
            sanction = Some(store::insert_sanction(&mut tx, new, now).await?);
            follow.leave_queues = true;
            follow.tell_lobby = true;
            json!({ "hours": hours })
        }
        ModAction::Close { .. } => {
            if closed {
                return Err(not_allowed("the account is closed already"));
            }
            store::set_closed(&mut tx, player, Some(now)).await?;
            recompute = Some(store::request_recompute(&mut tx, player, None, now).await?);
            follow = Follow {
                leave_queues: true,
                end_sessions: true,
                wake_ratings: true,
                ..follow
            };
            json!({})
        }
        ModAction::Reopen { .. } => {
            if !closed {
                return Err(not_allowed("the account is open"));
            }
            store::set_closed(&mut tx, player, None).await?;
            recompute = Some(store::request_recompute(&mut tx, player, None, now).await?);
            follow.wake_ratings = true;
            json!({})
        }
        ModAction::Rename { name, .. } => {
            let name = &moderation::DISPLAY_NAME.clean(name)?;
            let old = match store::rename(&mut tx, player, name).await {
                Ok(old) => old,
                Err(error) if crate::accounts::store::is_unique_violation(&error) => {
                    return Err(ApiError::new(
                        ErrorCode::UsernameTaken,
                        format!("the name {name:?} is taken"),
                    ));
                }
                Err(error) => return Err(error.into()),
            };
            json!({ "from": old, "to": name })
        }
        ModAction::Mark { mark, since, .. } => {
            let covers_from = match since {
                Some(text) => parse_time(text)?,
                // Every rated game the account ever played.
                None => OffsetDateTime::UNIX_EPOCH,
            };
            let kind = SanctionKind::mark(*mark);
            let new = NewSanction {
                player,
                kind,
                reason: &why,
                by,
                until: None,
                covers_from: Some(covers_from),
            };
            let id = store::insert_sanction(&mut tx, new, now).await?;
            sanction = Some(id);
            recompute = Some(store::request_recompute(&mut tx, player, Some(id), now).await?);
            follow = Follow {
                leave_queues: true,
                tell_lobby: true,
                wake_ratings: true,
                ..follow
            };
            json!({ "mark": mark, "since": since })
        }
        ModAction::SetRole { role: new_role, .. } => {
            actor.admin()?;
            if *new_role == role {
                return Err(not_allowed("the account has this role already"));
            }
            store::set_role(&mut tx, player, *new_role).await?;
            follow.end_sessions = true;
            json!({ "from": role, "to": new_role })
        }
    };
    let answered = match action.answers() {
        Answers::None => 0,
        Answers::Reason(reason) => {
            store::close_reports_about(&mut tx, player, Some(reason), by, now).await?
        }
        Answers::All => store::close_reports_about(&mut tx, player, None, by, now).await?,
    };
    let mut details = details;
    if let (Some(object), true) = (details.as_object_mut(), answered > 0) {
        object.insert("reports_closed".into(), json!(answered));
    }
    if let Some(id) = sanction {
        details["sanction"] = json!(id);
    }
    let line = LogLine {
        actor: by,
        action: action.name(),
        player: Some(player),
        reason: &why,
        details,
    };
    let log_id = store::log(&mut tx, line, now).await?;
    tx.commit().await?;
    carry_out(deps, accounts, player, follow).await;
    let sanction = match sanction {
        Some(id) => store::sanctions(&deps.postgres, player, now)
            .await?
            .into_iter()
            .find(|sanction| sanction.id == id),
        None => None,
    };
    Ok(ActionDone {
        log_id,
        sanction,
        recompute,
    })
}

/// Lifts sanction `id` for `actor`.
pub(crate) async fn lift(
    deps: &Context,
    accounts: &Accounts,
    actor: Moderator,
    id: i64,
    why: &str,
) -> Result<ActionDone, ApiError> {
    let why = &reason(why)?;
    let now = deps.clock.now_utc();
    let mut tx = deps.postgres.begin().await?;
    let gone = || ApiError::new(ErrorCode::NotFound, "no such sanction standing");
    let (player, kind) = store::lift_sanction(&mut tx, id, Some(actor.player_id), now)
        .await?
        .ok_or_else(gone)?;
    let (role, _) = store::lock_account(&mut tx, player)
        .await?
        .ok_or_else(no_player)?;
    may_act_on(&actor, player, role)?;
    let mut follow = Follow {
        tell_lobby: true,
        ..Follow::default()
    };
    let mut recompute = None;
    if matches!(kind, SanctionKind::Booster | SanctionKind::Engine) {
        recompute = Some(store::request_recompute(&mut tx, player, Some(id), now).await?);
        follow.wake_ratings = true;
    }
    let line = LogLine {
        actor: Some(actor.player_id),
        action: "lift",
        player: Some(player),
        reason: why,
        details: json!({ "sanction": id, "kind": kind }),
    };
    let log_id = store::log(&mut tx, line, now).await?;
    tx.commit().await?;
    carry_out(deps, accounts, player, follow).await;
    let sanction = store::sanctions(&deps.postgres, player, now)
        .await?
        .into_iter()
        .find(|sanction| sanction.id == id);
    Ok(ActionDone {
        log_id,
        sanction,
        recompute,
    })
}

/// What follows an account's closing, once committed.
pub(crate) async fn after_closing(deps: &Context, accounts: &Accounts, player: Uuid) {
    let follow = Follow {
        leave_queues: true,
        end_sessions: true,
        wake_ratings: true,
        tell_lobby: false,
    };
    carry_out(deps, accounts, player, follow).await;
}

/// What follows a committed action outside Postgres. Each step is retried
/// by what it feeds (a token is refused at its next use, a ticket at the
/// next pairing, a lobby at its next message), so a failure is logged,
/// not returned: the action itself stands.
async fn carry_out(deps: &Context, accounts: &Accounts, player: Uuid, follow: Follow) {
    if follow.end_sessions
        && let Err(error) = accounts.end_all_sessions(player).await
    {
        tracing::warn!(?error, %player, "ending the sessions of a sanctioned account");
    }
    if follow.leave_queues
        && let Err(error) = queues::leave(&deps.redis, player, None).await
    {
        tracing::warn!(%error, %player, "dropping a sanctioned player's queue tickets");
    }
    if follow.tell_lobby || follow.leave_queues {
        tell_lobby(deps, player).await;
    }
    if follow.wake_ratings {
        deps.pubsub
            .publish(names::RATINGS_CHANNEL, "recompute")
            .await;
    }
}

/// Sends the player's open lobbies their standing as it is now (a ban, a
/// warning, a mark) and that they wait in no queue.
pub(crate) async fn tell_lobby(deps: &Context, player: Uuid) {
    match crate::fair_play::standing(deps, player).await {
        Ok(standing) => {
            let message = LobbyServerMessage::FairPlay(standing);
            if let Ok(text) = serde_json::to_string(&message) {
                deps.pubsub.publish(&player_channel(player), text).await;
            }
        }
        Err(error) => tracing::warn!(%error, %player, "reading a standing to tell a lobby"),
    }
}
