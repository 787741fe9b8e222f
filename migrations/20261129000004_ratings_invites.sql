-- Ratings as matchmaking reads them, and friend invites (issue 7).
-- Never edit this file once applied: add a new migration instead.

-- One Glicko-2 rating per player and variant. The rating service (issue 8)
-- writes it; matchmaking reads it to pair players and snapshot ratings into
-- new games. A player without a row has the defaults (1500, RD 500).
CREATE TABLE ratings (
    player_id UUID NOT NULL REFERENCES players (id) ON DELETE CASCADE,
    variant TEXT NOT NULL CHECK (variant IN ('kalah', 'oware', 'mangala')),
    rating DOUBLE PRECISION NOT NULL,
    rd DOUBLE PRECISION NOT NULL,
    volatility DOUBLE PRECISION NOT NULL,
    games INTEGER NOT NULL DEFAULT 0,
    last_rated_at TIMESTAMPTZ,
    PRIMARY KEY (player_id, variant)
);

-- A friend invite: a one-time random code behind a URL. Accepting it
-- creates the room and its first game; `game_id` set means used.
CREATE TABLE invites (
    code TEXT PRIMARY KEY,
    creator UUID NOT NULL REFERENCES players (id) ON DELETE CASCADE,
    variant JSONB NOT NULL,
    clock_initial_secs INTEGER,
    clock_increment_secs INTEGER,
    rated BOOLEAN NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    accepted_by UUID REFERENCES players (id),
    game_id UUID
);
