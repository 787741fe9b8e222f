-- Moderation (issue 43): roles, reports, sanctions, notes, an append-only
-- log of every action, and rating history that can be voided and replayed.
-- Never edit this file once applied: add a new migration instead.

-- A time as the API shows it (RFC 3339, UTC, whole seconds).
CREATE FUNCTION rfc3339(at TIMESTAMPTZ) RETURNS TEXT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') $$;

-- What a player may do beyond playing. Carried in access tokens; taking it
-- away ends the player's sessions, so no token keeps it.
ALTER TABLE players
    ADD COLUMN role TEXT NOT NULL DEFAULT 'player'
        CHECK (role IN ('player', 'moderator', 'admin')),
    -- A closed account cannot sign in; its games stay, its name stays
    -- taken, and it leaves the leaderboards.
    ADD COLUMN closed_at TIMESTAMPTZ;

-- A player's report of another, about their play or their name, and
-- possibly one game. Open until a moderator closes it.
CREATE TABLE reports (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    reporter UUID NOT NULL REFERENCES players (id),
    player_id UUID NOT NULL REFERENCES players (id),
    game_id UUID,
    reason TEXT NOT NULL CHECK (reason IN ('engine', 'boosting', 'stalling', 'offensive_name')),
    text TEXT NOT NULL DEFAULT '' CHECK (length(text) <= 1000),
    created_at TIMESTAMPTZ NOT NULL,
    closed_at TIMESTAMPTZ,
    closed_by UUID REFERENCES players (id),
    CHECK (reporter <> player_id)
);
CREATE INDEX reports_open ON reports (player_id, created_at) WHERE closed_at IS NULL;
-- One open report a reporter, player and reason: asking again adds nothing.
CREATE UNIQUE INDEX reports_once ON reports (reporter, player_id, reason) WHERE closed_at IS NULL;

-- What a moderator put on a player, until a time or until lifted:
-- - warning: shown to the player until they have seen it;
-- - ranked_ban: no ranked queue, no rated invite;
-- - booster / engine: a mark; the player's rated games from `covers_from`
--   on (and any while the mark stands) count for nobody, ranked play is
--   closed to them and they leave the leaderboards.
CREATE TABLE sanctions (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    player_id UUID NOT NULL REFERENCES players (id),
    kind TEXT NOT NULL CHECK (kind IN ('warning', 'ranked_ban', 'booster', 'engine')),
    reason TEXT NOT NULL CHECK (length(reason) BETWEEN 1 AND 500),
    -- Null: the mancala-admin command line.
    created_by UUID REFERENCES players (id),
    created_at TIMESTAMPTZ NOT NULL,
    -- A ban's end; null: until lifted.
    until TIMESTAMPTZ,
    -- A mark's reach back: the player's rated games created at or after.
    covers_from TIMESTAMPTZ,
    lifted_at TIMESTAMPTZ,
    lifted_by UUID REFERENCES players (id),
    -- When the player saw a warning.
    seen_at TIMESTAMPTZ,
    CHECK ((kind IN ('booster', 'engine')) = (covers_from IS NOT NULL))
);
CREATE INDEX sanctions_player ON sanctions (player_id, created_at);
CREATE INDEX sanctions_marks ON sanctions (player_id, covers_from)
    WHERE kind IN ('booster', 'engine') AND lifted_at IS NULL;

-- Whether a game created at `at` between `a` and `b` is voided by a mark
-- standing now on either of them. The one definition, read by the rating
-- worker as it rates a game and by the replay that recomputes ratings.
CREATE FUNCTION game_voided(a UUID, b UUID, at TIMESTAMPTZ) RETURNS BOOLEAN
    LANGUAGE sql STABLE
    AS $$
        SELECT EXISTS (
            SELECT 1 FROM sanctions s
            WHERE s.player_id IN (a, b)
              AND s.kind IN ('booster', 'engine')
              AND s.lifted_at IS NULL
              AND s.covers_from <= at
        )
    $$;

-- Moderators' notes on a player: for each other, never shown to the player.
CREATE TABLE moderator_notes (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    player_id UUID NOT NULL REFERENCES players (id),
    author UUID REFERENCES players (id),
    text TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 2000),
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX moderator_notes_player ON moderator_notes (player_id, created_at);

-- Every moderation action, once: who, what, to whom, when and why.
-- Written in the transaction of the action itself; nobody can edit it.
CREATE TABLE moderation_log (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at TIMESTAMPTZ NOT NULL,
    -- Null: the mancala-admin command line.
    actor UUID REFERENCES players (id),
    action TEXT NOT NULL,
    player_id UUID REFERENCES players (id),
    reason TEXT NOT NULL,
    details JSONB NOT NULL DEFAULT '{}'
);
CREATE INDEX moderation_log_player ON moderation_log (player_id, id);

CREATE FUNCTION moderation_log_refuse_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
        BEGIN
            RAISE EXCEPTION 'the moderation log is append-only'
                USING ERRCODE = 'insufficient_privilege';
        END
    $$;
CREATE TRIGGER moderation_log_append_only
    BEFORE UPDATE OR DELETE ON moderation_log
    FOR EACH ROW EXECUTE FUNCTION moderation_log_refuse_change();
CREATE TRIGGER moderation_log_no_truncate
    BEFORE TRUNCATE ON moderation_log
    FOR EACH STATEMENT EXECUTE FUNCTION moderation_log_refuse_change();

-- The order ratings were applied in, so that they can be replayed exactly:
-- a worker inserts a batch's rows in the order it rated them, after
-- locking the rating rows of their players, so for any one player the
-- order of `seq` is the order their rating moved. Rows made before this
-- step are numbered in the order a worker would have taken them.
ALTER TABLE rating_history ADD COLUMN seq BIGINT;
UPDATE rating_history h SET seq = o.n
FROM (
    SELECT h2.game_id, h2.player_id,
           row_number() OVER (ORDER BY h2.rated_at, ob.created_at, h2.game_id,
                              g.seat1_player = h2.player_id) AS n
    FROM rating_history h2
    JOIN games g ON g.id = h2.game_id
    LEFT JOIN rating_outbox ob ON ob.game_id = h2.game_id
) o
WHERE o.game_id = h.game_id AND o.player_id = h.player_id;
CREATE SEQUENCE rating_history_seq OWNED BY rating_history.seq;
SELECT setval('rating_history_seq', coalesce((SELECT max(seq) FROM rating_history), 0) + 1, false);
ALTER TABLE rating_history
    ALTER COLUMN seq SET DEFAULT nextval('rating_history_seq'),
    ALTER COLUMN seq SET NOT NULL,
    -- A voided game moved nobody's rating: its rows keep the rating as it
    -- was (before = after), for the record.
    ADD COLUMN voided BOOLEAN NOT NULL DEFAULT false;
CREATE UNIQUE INDEX rating_history_order ON rating_history (variant, seq);

-- A change the ratings must follow: a mark or its lifting (written with
-- it), an account closed or reopened. A rating worker takes it, replays
-- the history of each variant from the first line of the player's games
-- whose voiding changed (none, for a closure), and puts the players whose
-- rating moved, and the player, back on or off the leaderboards.
CREATE TABLE rating_recomputes (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    player_id UUID NOT NULL REFERENCES players (id),
    sanction_id BIGINT REFERENCES sanctions (id),
    requested_at TIMESTAMPTZ NOT NULL,
    done_at TIMESTAMPTZ,
    -- What it came to: history rows rewritten, rating rows changed, the
    -- players whose rating moved, and how long the replay took.
    rows_changed INTEGER,
    ratings_changed INTEGER,
    players JSONB,
    millis INTEGER
);
CREATE INDEX rating_recomputes_pending ON rating_recomputes (id) WHERE done_at IS NULL;
