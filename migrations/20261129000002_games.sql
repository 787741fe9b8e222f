-- Games, their moves, and the outbox the rating service reads (issue 5).
-- Never edit this file once applied: add a new migration instead.

-- One row per game, live or finished. The moves are the truth of a live
-- game; the row holds what does not change during play (variant, seats,
-- rating snapshots) and, once over, the result, so that lists and records
-- need no replay.
CREATE TABLE games (
    id UUID PRIMARY KEY,
    -- The rule set and its options, as mancala_rules::Variant serialises
    -- them: new options need no migration.
    variant JSONB NOT NULL,
    -- Each seat holds a player or an AI level, never both. Seat 0 moves
    -- first.
    seat0_player UUID REFERENCES players (id),
    seat0_ai TEXT,
    seat1_player UUID REFERENCES players (id),
    seat1_ai TEXT,
    CHECK ((seat0_player IS NULL) <> (seat0_ai IS NULL)),
    CHECK ((seat1_player IS NULL) <> (seat1_ai IS NULL)),
    -- Ratings as they were when the game was made: shown during play, and
    -- the basis of live-game ordering. Null for casual games.
    seat0_rating DOUBLE PRECISION,
    seat0_rd DOUBLE PRECISION,
    seat1_rating DOUBLE PRECISION,
    seat1_rd DOUBLE PRECISION,
    rated BOOLEAN NOT NULL,
    status TEXT NOT NULL DEFAULT 'live' CHECK (status IN ('live', 'over')),
    result TEXT CHECK (result IN ('p0', 'p1', 'draw')),
    reason TEXT,
    score0 SMALLINT,
    score1 SMALLINT,
    -- The number of moves, kept with each move so lists need not count.
    plies INTEGER NOT NULL DEFAULT 0,
    created_at TIMESTAMPTZ NOT NULL,
    ended_at TIMESTAMPTZ,
    -- A finished game has its result; a live one has none.
    CHECK ((status = 'over') = (result IS NOT NULL AND reason IS NOT NULL AND ended_at IS NOT NULL))
);
-- A player's history, newest first, by keyset (created_at, id).
CREATE INDEX games_seat0_history ON games (seat0_player, created_at DESC, id DESC);
CREATE INDEX games_seat1_history ON games (seat1_player, created_at DESC, id DESC);
-- Live games are few beside finished ones: a partial index lists them.
CREATE INDEX games_live ON games (created_at) WHERE status = 'live';

-- One row per ply. The primary key makes a ply unique per game, so two
-- writers (a retried request, a stale host) can never both add move n.
CREATE TABLE game_moves (
    game_id UUID NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    ply INTEGER NOT NULL CHECK (ply >= 1),
    seat SMALLINT NOT NULL CHECK (seat IN (0, 1)),
    pit SMALLINT NOT NULL CHECK (pit BETWEEN 1 AND 6),
    played_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (game_id, ply)
);

-- Written in the transaction that ends a rated game, so a result can never
-- be committed without the rating service learning of it; the rating
-- service claims rows with SKIP LOCKED and marks them done in the same
-- transaction as the rating change (exactly once).
CREATE TABLE rating_outbox (
    game_id UUID PRIMARY KEY REFERENCES games (id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL,
    processed_at TIMESTAMPTZ
);
CREATE INDEX rating_outbox_pending ON rating_outbox (created_at) WHERE processed_at IS NULL;
