-- One live ranked game at a time (issue 40): before a player joins a
-- ranked queue or accepts a rated invite, their live rated game, if any,
-- is looked up by seat. Live games are few beside finished ones, so these
-- partial indexes stay small however long the history grows.
-- Never edit this file once applied: add a new migration instead.
CREATE INDEX games_live_rated_seat0 ON games (seat0_player) WHERE status = 'live' AND rated;
CREATE INDEX games_live_rated_seat1 ON games (seat1_player) WHERE status = 'live' AND rated;
