-- Arena tournaments. A tournament's standings are not stored: they are
-- folded from its finished games (games.tournament_id) in the order they
-- ended, so a crash loses no point and counts none twice.

CREATE TABLE tournaments (
    id UUID PRIMARY KEY,
    name TEXT NOT NULL CHECK (char_length(name) BETWEEN 1 AND 60),
    -- A scheduled arena: its rule and start ("Hourly Kalah@2026-12-06T20:00:00Z"),
    -- unique so that every instance may plan and each arena is made once.
    schedule_key TEXT UNIQUE,
    -- A private arena: joined with this code, made by a registered player.
    code TEXT UNIQUE,
    created_by UUID REFERENCES players (id),
    CHECK ((schedule_key IS NULL) <> (code IS NULL)),
    variant TEXT NOT NULL CHECK (variant IN ('kalah', 'oware', 'mangala')),
    initial_secs INTEGER NOT NULL CHECK (initial_secs > 0),
    increment_secs INTEGER NOT NULL CHECK (increment_secs >= 0),
    starts_at TIMESTAMPTZ NOT NULL,
    ends_at TIMESTAMPTZ NOT NULL,
    CHECK (ends_at > starts_at),
    rated BOOLEAN NOT NULL,
    min_rating INTEGER,
    max_rating INTEGER,
    max_players INTEGER CHECK (max_players > 0),
    created_at TIMESTAMPTZ NOT NULL
);
-- "On now and next": by end, then start.
CREATE INDEX tournaments_by_time ON tournaments (ends_at, starts_at);

CREATE TABLE tournament_players (
    tournament_id UUID NOT NULL REFERENCES tournaments (id),
    player_id UUID NOT NULL REFERENCES players (id),
    joined_at TIMESTAMPTZ NOT NULL,
    -- The rating the player joined with (the band is checked against it,
    -- and it breaks the last ties).
    rating DOUBLE PRECISION NOT NULL,
    -- Not paired while paused (left the page, a no-start, or asked);
    -- joining again unpauses. A withdrawn player keeps their games' points.
    paused BOOLEAN NOT NULL DEFAULT false,
    withdrawn BOOLEAN NOT NULL DEFAULT false,
    -- The game the player was last seated in: taking both seats of a new
    -- pair is one UPDATE that needs this game over, so two instances (a
    -- lease changing hands) cannot seat a player twice.
    current_game UUID,
    -- The last opponent (never the same twice in a row while another
    -- waits) and the first-move balance, as the pairing wants them.
    last_opponent UUID,
    first_balance INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tournament_id, player_id)
);

ALTER TABLE games
    ADD COLUMN tournament_id UUID REFERENCES tournaments (id),
    -- A seat that went berserk: half its clock, no increment.
    ADD COLUMN berserk0 BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN berserk1 BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX games_by_tournament ON games (tournament_id, ended_at)
    WHERE tournament_id IS NOT NULL;
