-- What makes a rating mean games really played, by both players, who
-- agreed to play them (issue 15).
-- Never edit this file once applied: add a new migration instead.

ALTER TABLE games
    -- Which seats have ever moved: bit 0 seat 0, bit 1 seat 1. Set with
    -- each move and never cleared, not even by an undo: a game counts as
    -- played (and can end with a result) once both bits are set, and a
    -- move list taken back to ply 0 is still a game that was played.
    ADD COLUMN moved SMALLINT NOT NULL DEFAULT 0 CHECK (moved BETWEEN 0 AND 3),
    -- Why a game asked for as rated was made casual ('pair_limit': the two
    -- players already have their rated games of the day together), shown
    -- to the players so the ladder never surprises them.
    ADD COLUMN casual_reason TEXT CHECK (casual_reason IN ('pair_limit')),
    -- When the side to move began its turn (the last move, or an undo):
    -- until each side has moved, the first-move window runs from here, and
    -- the sweeper aborts games nobody hosts once it is long past.
    ADD COLUMN turn_started_at TIMESTAMPTZ;

UPDATE games g
SET moved = COALESCE(
        (SELECT bit_or((1 << m.seat::int)::smallint) FROM game_moves m WHERE m.game_id = g.id),
        0),
    turn_started_at = (SELECT max(m.played_at) FROM game_moves m WHERE m.game_id = g.id);

-- The rated games of a pair in the last day, looked up for each rated game
-- made: by the first seat's player, then the second (both orders are
-- asked for, so one index per seat column serves both).
CREATE INDEX games_rated_pair ON games (seat0_player, seat1_player, created_at)
    WHERE rated;

ALTER TABLE rooms
    -- The player who left the room for good (`leave_room`, or gone for the
    -- reconnect window after a game): the room is closed, and nobody can
    -- be put into another game of it.
    ADD COLUMN left_by UUID REFERENCES players (id);
