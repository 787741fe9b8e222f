-- What a game needs around its moves (issue 6): clocks, AI takeover,
-- undo, friend rooms and rematches, abort, and fencing between hosts.
-- Never edit this file once applied: add a new migration instead.

-- Friend games live in a room: a series of games between the same two
-- people. It closes 24 hours after it opens, or after 30 minutes with
-- nobody connected (`idle_since` is set when the last player leaves).
CREATE TABLE rooms (
    id UUID PRIMARY KEY,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    idle_since TIMESTAMPTZ,
    closed_at TIMESTAMPTZ
);
CREATE INDEX rooms_open ON rooms (expires_at) WHERE closed_at IS NULL;

ALTER TABLE games
    -- An aborted game ended without a result (no first move in time, or
    -- its room closed); it is never rated.
    DROP CONSTRAINT games_status_check,
    ADD CONSTRAINT games_status_check CHECK (status IN ('live', 'over', 'aborted')),
    DROP CONSTRAINT games_result_check,
    ADD CONSTRAINT games_result_check CHECK (result IN ('p0', 'p1', 'draw', 'aborted')),
    -- (games_check2 is the unnamed "over has a result" check of the games
    -- migration.) Now: a game is live exactly when it has no result yet.
    DROP CONSTRAINT games_check2,
    ADD CONSTRAINT games_ended_check CHECK (
        (status = 'live') = (result IS NULL AND reason IS NULL AND ended_at IS NULL)
    ),
    ADD CONSTRAINT games_aborted_check CHECK ((status = 'aborted') = (result = 'aborted')),
    -- The fencing token: each instance that takes a game over raises it,
    -- and every write names the epoch it was loaded under, so a host that
    -- lost its lease (and does not know it yet) cannot write.
    ADD COLUMN epoch BIGINT NOT NULL DEFAULT 0,
    -- Events so far (moves, undos, takeovers, the end): clients resume from
    -- it with `sync`, on any instance, so it is stored, not recomputed.
    ADD COLUMN version BIGINT NOT NULL DEFAULT 0,
    -- `initial + increment`, in milliseconds; both null when untimed.
    ADD COLUMN clock_initial_ms INTEGER,
    ADD COLUMN clock_increment_ms INTEGER,
    ADD CONSTRAINT games_clock_check CHECK ((clock_initial_ms IS NULL) = (clock_increment_ms IS NULL)),
    -- An AI level that took over an absent player's seat. The player stays
    -- in the seat's column: it is still their game in their history.
    ADD COLUMN seat0_takeover TEXT,
    ADD COLUMN seat1_takeover TEXT,
    ADD COLUMN room_id UUID REFERENCES rooms (id),
    -- The game a rematch started; set once, which makes a rematch happen
    -- once even when both players ask at the same moment.
    ADD COLUMN rematch_id UUID REFERENCES games (id);
CREATE INDEX games_room ON games (room_id) WHERE room_id IS NOT NULL;

-- The mover's clock after the move (increment included), so that a game
-- loaded on another instance has its clocks, and undo can restore them.
ALTER TABLE game_moves ADD COLUMN clock_ms INTEGER;
