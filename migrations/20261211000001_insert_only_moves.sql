-- A move is one INSERT: the games row is no longer updated on every move.
-- Never edit this file once applied: add a new migration instead.
--
-- The fence that keeps a stale host from writing stays exact, on the
-- log's own key. Each row names the epoch of the host that wrote it and
-- the game's version after it. A row whose pit is 0 is not a move but a
-- placeholder: the ply is held for the host of that epoch, and only it
-- may write a move over it. Whoever raises a game's epoch (a new host, or
-- ending the game from outside) holds the next ply this way, so the old
-- host's next move meets a key it may not write over: a host writes its
-- plies in order, one at a time, and no row is ever deleted (an undo turns
-- the plies it takes back into placeholders), so the next ply a stale host
-- could write is at most the log's last row plus one, and the new holder
-- holds that one or an earlier one. Placeholders are only ever at the tail
-- of a game's log, and readers skip them.
--
-- The games row keeps its progress (plies, moved, turn_started_at) while
-- a seat has not moved yet, because the sweeper of unstarted games reads
-- it there; after that the log is the truth of a live game, and the row
-- gets its final count when the game ends.

ALTER TABLE game_moves
    ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN version INTEGER NOT NULL DEFAULT 0,
    DROP CONSTRAINT game_moves_pit_check,
    ADD CONSTRAINT game_moves_pit_check CHECK (pit BETWEEN 0 AND 6);

-- Holds the next ply of a live game for `holder`: the placeholders an
-- undo left become its own, or, when there are none, one is added after
-- the last row. Read committed: a move the old host commits meanwhile
-- takes the ply first, and the loop holds the one after it. Returns the
-- held ply.
CREATE FUNCTION fence_moves(game UUID, holder INTEGER) RETURNS INTEGER
LANGUAGE plpgsql AS $$
DECLARE
    held INTEGER;
BEGIN
    UPDATE game_moves SET epoch = holder WHERE game_id = game AND pit = 0;
    IF FOUND THEN
        SELECT min(ply) INTO held FROM game_moves WHERE game_id = game AND pit = 0;
        IF held IS NOT NULL THEN
            RETURN held;
        END IF;
    END IF;
    LOOP
        INSERT INTO game_moves (game_id, ply, seat, pit, played_at, epoch, version)
        SELECT game, COALESCE(max(ply), 0) + 1, 0, 0, now(), holder, 0
        FROM game_moves WHERE game_id = game
        ON CONFLICT DO NOTHING
        RETURNING ply INTO held;
        IF held IS NOT NULL THEN
            RETURN held;
        END IF;
    END LOOP;
END $$;

-- The moves a game has played, as lists show it: a live game's log, a
-- finished game's row.
CREATE FUNCTION game_plies(game UUID, status TEXT, stored INTEGER) RETURNS INTEGER
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN status = 'live'
                THEN COALESCE((SELECT m.ply FROM game_moves m
                               WHERE m.game_id = game AND m.pit > 0
                               ORDER BY m.ply DESC LIMIT 1), 0)
                ELSE stored END
$$;
