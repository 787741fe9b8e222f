//! The task's half of the host: carrying out the effects the state
//! returns (sockets, the Redis bus and lobby marks, the AI pool, room
//! rows) and answering its asks (commits, limits, admission, rematches,
//! rows read back). Nothing here decides anything about the game.

use bytestring::ByteString;
use mancala_platform::clock::timestamp;
use mancala_platform::ratelimit;
use mancala_platform::socket::error_body_text;
use mancala_proto::bus::{Route, names};
use mancala_proto::game::ServerMessage;
use mancala_proto::{ErrorBody, ErrorCode};
use tokio::sync::oneshot;

use super::state::{Answer, Ask, Counted, Effect, Marks, Reply};
use super::{Command, HintAnswer, Host, Joined, Outbound, Replier, Stop, commit, encode};
use crate::ai;
use crate::store;

impl Host {
    /// Carries out one effect; `Some` when the task is to stop.
    pub(super) async fn carry_out(
        &mut self,
        effect: Effect,
        replier: &mut Replier,
    ) -> Option<Stop> {
        match effect {
            Effect::Reply(reply) => self.reply(reply, std::mem::replace(replier, Replier::Nobody)),
            Effect::Emit { text, version } => {
                let _ = self.events.send(Outbound::Text(text.clone()));
                let route = match version {
                    Some(version) => Route::Event { version },
                    None => Route::Notice,
                };
                self.deps
                    .hub
                    .publish_event(self.id(), route, &text, self.followed_elsewhere)
                    .await;
            }
            Effect::Local(text) => {
                let _ = self.events.send(Outbound::Text(text));
            }
            Effect::Think {
                request,
                version,
                seat,
            } => {
                let own = self.own.clone();
                let cancel = self.deps.ai.think(request, move |outcome| async move {
                    let pit = match outcome {
                        ai::Outcome::Move { pit, .. } => Some(pit),
                        ai::Outcome::Nothing => None,
                    };
                    // The game may have unloaded meanwhile: nobody to tell.
                    let _ = own.send(Command::Thought { version, seat, pit }).await;
                });
                self.thinking = Some(cancel);
            }
            Effect::StopThinking => {
                if let Some(thinking) = &self.thinking {
                    thinking.cancel();
                }
            }
            Effect::Analyse => self.analyse(),
            Effect::WakeRatings => self.deps.hub.wake_ratings(self.id()).await,
            Effect::Mark(marks) => self.mark(marks).await,
            Effect::RoomIdle { room, since } => {
                let since = since.map(timestamp);
                if let Err(error) = store::set_room_idle(&self.deps.postgres, room, since).await {
                    tracing::warn!(%error, "recording a room's idleness");
                }
            }
            Effect::CloseExpiredRooms { now } => {
                let now = timestamp(now);
                if let Err(error) = store::close_expired_rooms(&self.deps.postgres, now, now).await
                {
                    tracing::warn!(%error, "closing a room");
                }
            }
            Effect::FreePlace => self.in_progress = None,
            Effect::Stop(code, reason) => return Some((code, reason)),
        }
        None
    }

    fn reply(&self, reply: Reply, replier: Replier) {
        let sent = match (reply, replier) {
            (Reply::Texts(texts), Replier::Texts(to)) => to.send(texts).is_ok(),
            (
                Reply::Joined {
                    state,
                    seats,
                    rating_change,
                },
                Replier::Join(to),
            ) => {
                // Subscribed before anything else is sent: the socket hears
                // every event after its snapshot, its own arrival first.
                let joined = Joined {
                    events: self.events.subscribe(),
                    state,
                    seats,
                    rating_change,
                };
                to.send(Ok(joined)).is_ok()
            }
            (Reply::Refused(refusal), Replier::Join(to)) => to.send(Err(refusal)).is_ok(),
            (Reply::SeatCheck(check), Replier::SeatCheck(to)) => to.send(check).is_ok(),
            (Reply::Hint(hint), Replier::Hint(to)) => {
                let answer = match hint {
                    Ok((ply, search)) => HintAnswer::Searching {
                        ply,
                        outcome: self.search_hint(search),
                    },
                    Err(refused) => HintAnswer::Refused(refused),
                };
                to.send(answer).is_ok()
            }
            (reply, _) => {
                tracing::error!(?reply, "a host reply for another question");
                false
            }
        };
        // The asker gave up (its socket closed): nothing to do.
        let _ = sent;
    }

    /// The outcome of an ask.
    pub(super) async fn answer(&mut self, ask: Ask) -> Answer {
        let deps = &self.deps;
        match ask {
            Ask::Commit(change) => Answer::Committed(
                commit::commit(&deps.writer, &deps.admission, self.id(), self.epoch, change).await,
            ),
            Ask::Limit { kind, player } => Answer::Limit(self.limited(kind, player).await),
            Ask::Admit { held } => {
                let admitted = if held {
                    deps.admission.admit_held("rematch")
                } else {
                    deps.admission.admit("rematch")
                };
                Answer::Admitted(admitted.map_err(|busy| error_body_text(&busy.body())))
            }
            Ask::CreateRematch => {
                let now = timestamp(self.now());
                let limit = deps.settings.rated_pair_limit;
                let info = self.state.live().info();
                let made = self.series.rematch(info, now, limit).await;
                Answer::RematchMade(made.map_err(|error| {
                    tracing::warn!(%error, "creating a rematch failed");
                }))
            }
            Ask::LeaveRoom { room, player } => {
                let now = timestamp(self.now());
                let left = store::leave_room(&deps.postgres, room, player, now).await;
                if let Err(error) = &left {
                    tracing::warn!(%error, %room, "leaving a room");
                }
                Answer::RoomLeft(left.is_ok())
            }
            Ask::RoomClosed { room } => {
                let closed = store::room_deadline(&deps.postgres, room).await;
                Answer::RoomClosed(closed.ok().flatten().is_some_and(|(_, closed)| closed))
            }
            Ask::RatingChange => {
                let players = self
                    .state
                    .live()
                    .info()
                    .seats
                    .clone()
                    .map(|seat| seat.player);
                match store::rating_changes(&deps.reads, self.id(), players).await {
                    Ok(changes) if !changes.is_empty() => {
                        Answer::RatingChange(Some(encode(&ServerMessage::RatingChange { changes })))
                    }
                    Ok(_) => Answer::RatingChange(None),
                    Err(error) => {
                        tracing::warn!(%error, "reading a game's rating change");
                        Answer::RatingChange(None)
                    }
                }
            }
        }
    }

    /// Starts a hint's search on the AI workers; its outcome goes to the
    /// socket that asked, not through the host (nobody else sees a hint).
    fn search_hint(&self, search: ai::Request) -> oneshot::Receiver<ai::Outcome> {
        let (tell, outcome) = oneshot::channel();
        self.deps.ai.think(search, move |found| async move {
            let _ = tell.send(found);
        });
        outcome
    }

    /// The refusal when `player` has undone or asked for hints too much
    /// lately, counted across instances. A Redis outage lets them through.
    async fn limited(&self, kind: Counted, player: uuid::Uuid) -> Option<ByteString> {
        let (kind, limit) = match kind {
            Counted::Undos => ("undos", self.deps.settings.undos),
            Counted::Hints => ("hints", self.deps.settings.hints),
        };
        let now = self.deps.clock.now_secs();
        let redis = &self.deps.redis;
        match ratelimit::hit(redis, kind, &player.to_string(), limit, now).await {
            Ok(ratelimit::Decision::Limited { retry_after }) => Some(error_body_text(&ErrorBody {
                retry_after: Some(retry_after),
                ..ErrorBody::new(
                    ErrorCode::RateLimited,
                    format!("too many {kind}; retry in {retry_after} s"),
                )
            })),
            Ok(ratelimit::Decision::Allowed { .. }) => None,
            Err(error) => {
                tracing::warn!(%error, kind, "counting");
                None
            }
        }
    }

    /// A watched game that just ended is analysed for its watchers, when
    /// the analysis place for it is free.
    fn analyse(&self) {
        let Some(started) = self.deps.ai.analyses().at_the_end() else {
            return;
        };
        let (ai, id, game) = (
            self.deps.ai.clone(),
            self.id(),
            self.state.live().rules_game().clone(),
        );
        tokio::spawn(async move {
            let _ = ai.analyse(id, game, crate::analysis::Asker::AtTheEnd).await;
            drop(started);
        });
    }

    /// Writes the lobby marks and who is connected (see
    /// `HostState::mark_players`): one command a key, sent as one batch
    /// (one round trip to one server; one a slot, together, to a cluster,
    /// where the lobby's keys and the game's live on different slots).
    async fn mark(&mut self, marks: Marks) {
        let until = self.now() + 30_000;
        let redis = &self.deps.redis;
        let mut writes: Vec<(String, redis::Cmd)> = Vec::new();
        let scored = |playing_only: bool| -> Vec<(u64, String)> {
            marks
                .here
                .iter()
                .filter(|(_, playing)| *playing || !playing_only)
                .map(|(player, _)| (until, player.to_string()))
                .collect()
        };
        let playing_key = redis.key(names::PLAYING);
        let online = scored(false);
        if !online.is_empty() {
            let key = redis.key(names::ONLINE);
            writes.push((key.clone(), redis::Cmd::zadd_multiple(key, &online)));
        }
        let playing = scored(true);
        if !playing.is_empty() {
            let write = redis::Cmd::zadd_multiple(&playing_key, &playing);
            writes.push((playing_key.clone(), write));
        }
        let not_playing: Vec<String> = marks
            .here
            .iter()
            .filter(|(_, playing)| !playing)
            .map(|(player, _)| *player)
            .chain(marks.gone.iter().copied())
            .map(|player| player.to_string())
            .collect();
        if !not_playing.is_empty() {
            let write = redis::Cmd::zrem(&playing_key, &not_playing);
            writes.push((playing_key.clone(), write));
        }
        let game = self.id().to_string();
        let occupied_key = redis.key(names::OCCUPIED);
        if marks.occupied {
            let write = redis::Cmd::zadd(&occupied_key, &game, until);
            writes.push((occupied_key, write));
        } else if self.listed {
            writes.push((occupied_key.clone(), redis::Cmd::zrem(&occupied_key, &game)));
        }
        if let Some(connected) = marks.presence {
            writes.push(self.deps.hub.presence_write(self.id(), connected));
        }
        if writes.is_empty() {
            return;
        }
        let marked = tokio::time::timeout(
            crate::lease::HOST_WAITS_FOR_REDIS,
            redis.batch::<redis::Value>(writes),
        )
        .await;
        match marked {
            Ok(Ok(_)) => self.listed = marks.occupied,
            Ok(Err(error)) => tracing::warn!(%error, "counting players online"),
            Err(_) => tracing::warn!("counting players online: Redis did not answer in time"),
        }
    }
}
