-- Games and their moves partitioned by month (issue 22), so that the live
-- paths (append a move, load a game, a player's recent games) read the
-- newest partitions and an old month of moves can be archived and dropped
-- whole (docs/SCALING.md, "History").
-- Never edit this file once applied: add a new migration instead.
--
-- Both tables are partitioned by range of the game id. Game ids are
-- UUIDv7: their first 48 bits are the Unix milliseconds of their making,
-- so a month of games is a range of ids, the primary keys stay as they
-- are (a partition key must be part of every unique key), a game and its
-- moves share a month, and a lookup by id finds its partition at once.
--
-- This step copies every game and move in one transaction. On a young
-- database that is a moment; on a large one it holds both tables and
-- needs their size again on disk until it commits: plan a maintenance
-- window, or migrate month by month with the same functions.

-- The smallest UUIDv7 made at or after `at`.
CREATE FUNCTION uuid_v7_floor(at timestamptz) RETURNS uuid
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (lpad(to_hex((extract(epoch FROM at) * 1000)::bigint), 12, '0')
            || '00000000000000000000')::uuid
$$;

-- The start of the UTC month `months` after the one holding `at`: months
-- are UTC months whatever the session's time zone.
CREATE FUNCTION utc_month(at timestamptz, months integer) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (date_trunc('month', at AT TIME ZONE 'UTC') + make_interval(months => months))
           AT TIME ZONE 'UTC'
$$;

-- Makes the partitions of both tables for the months from the one holding
-- `since` to `months_ahead` months after the current one, where missing;
-- returns how many it made. Every game-room instance calls it at start
-- and hourly; an advisory lock makes concurrent calls take turns.
CREATE FUNCTION ensure_history_partitions(months_ahead integer, since timestamptz DEFAULT now())
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    made integer := 0;
    month timestamptz := utc_month(least(since, now()), 0);
    last timestamptz := utc_month(now(), months_ahead);
    suffix text;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('ensure_history_partitions'));
    WHILE month <= last LOOP
        suffix := to_char(month AT TIME ZONE 'UTC', 'YYYY_MM');
        IF to_regclass('games_' || suffix) IS NULL THEN
            EXECUTE format('CREATE TABLE %I PARTITION OF games FOR VALUES FROM (%L) TO (%L)',
                           'games_' || suffix, uuid_v7_floor(month),
                           uuid_v7_floor(utc_month(month, 1)));
            made := made + 1;
        END IF;
        IF to_regclass('game_moves_' || suffix) IS NULL THEN
            EXECUTE format('CREATE TABLE %I PARTITION OF game_moves FOR VALUES FROM (%L) TO (%L)',
                           'game_moves_' || suffix, uuid_v7_floor(month),
                           uuid_v7_floor(utc_month(month, 1)));
            made := made + 1;
        END IF;
        month := utc_month(month, 1);
    END LOOP;
    RETURN made;
END
$$;

-- The tables as they were, to copy from.
ALTER TABLE game_moves RENAME TO game_moves_unpartitioned;
ALTER TABLE games RENAME TO games_unpartitioned;

CREATE TABLE games (LIKE games_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
    PARTITION BY RANGE (id);
CREATE TABLE game_moves (LIKE game_moves_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
    PARTITION BY RANGE (game_id);

-- Everything older than the first month that holds a v7 id (and any id
-- that is not v7, all made before this step) goes to one partition of its
-- own; months from then on get theirs, three months ahead.
DO $$
DECLARE
    first_month timestamptz := utc_month(coalesce(
        (SELECT to_timestamp(('x' || substr(replace(id::text, '-', ''), 1, 12))::bit(48)::bigint
                             / 1000.0)
           FROM games_unpartitioned
          WHERE substr(id::text, 15, 1) = '7'
            AND id >= uuid_v7_floor('2020-01-01 00:00:00+00')
            AND id < uuid_v7_floor(now() + interval '1 day')
          ORDER BY id
          LIMIT 1),
        now()), 0);
BEGIN
    EXECUTE format('CREATE TABLE games_before PARTITION OF games FOR VALUES FROM (MINVALUE) TO (%L)',
                   uuid_v7_floor(first_month));
    EXECUTE format('CREATE TABLE game_moves_before PARTITION OF game_moves FOR VALUES FROM (MINVALUE) TO (%L)',
                   uuid_v7_floor(first_month));
    PERFORM ensure_history_partitions(3, first_month);
END
$$;
-- Ids that are not v7 and fall in no month (none here: game ids have
-- always been v7) would land in a default partition; it goes again below
-- when empty, since a default partition holding a month's ids would stop
-- that month's partition from being made.
CREATE TABLE games_unsorted PARTITION OF games DEFAULT;
CREATE TABLE game_moves_unsorted PARTITION OF game_moves DEFAULT;

INSERT INTO games SELECT * FROM games_unpartitioned;
INSERT INTO game_moves SELECT * FROM game_moves_unpartitioned;

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM games_unsorted) AND NOT EXISTS (SELECT 1 FROM game_moves_unsorted) THEN
        DROP TABLE game_moves_unsorted;
        DROP TABLE games_unsorted;
    END IF;
END
$$;

-- What referred to the old games table now refers to the new one.
ALTER TABLE rating_outbox DROP CONSTRAINT rating_outbox_game_id_fkey;
ALTER TABLE rating_history DROP CONSTRAINT rating_history_game_id_fkey;
DROP TABLE game_moves_unpartitioned;
DROP TABLE games_unpartitioned;

ALTER TABLE games
    ADD PRIMARY KEY (id),
    ADD FOREIGN KEY (seat0_player) REFERENCES players (id),
    ADD FOREIGN KEY (seat1_player) REFERENCES players (id),
    ADD FOREIGN KEY (room_id) REFERENCES rooms (id),
    ADD FOREIGN KEY (rematch_id) REFERENCES games (id);
ALTER TABLE game_moves ADD PRIMARY KEY (game_id, ply);
ALTER TABLE rating_outbox
    ADD FOREIGN KEY (game_id) REFERENCES games (id) ON DELETE CASCADE;
ALTER TABLE rating_history
    ADD FOREIGN KEY (game_id) REFERENCES games (id) ON DELETE CASCADE;

-- A player's recent games by id (newest first): each seat's index scanned
-- in id order reads the newest partition first and stops at the page's end.
CREATE INDEX games_seat0_recent ON games (seat0_player, id DESC);
CREATE INDEX games_seat1_recent ON games (seat1_player, id DESC);
CREATE INDEX games_live ON games (created_at) WHERE status = 'live';
CREATE INDEX games_room ON games (room_id) WHERE room_id IS NOT NULL;
CREATE INDEX games_rated_pair ON games (seat0_player, seat1_player, created_at)
    WHERE rated;
