-- Thin opponents (issue 58): what fresh or farmed accounts can give is
-- bounded wherever they come from, as linked gains already are.
-- Never edit this file once applied: add a new migration instead.
--
-- An opponent is *thin* at a game when their account is young, when they
-- have played few rated games of the variant, or when their recent rated
-- games are mostly quick losses (a ring's sybils lose in a few plies, over
-- and over). The rating worker asks at the claim and records the answer
-- on the history line of the player who met them, as it records `linked`:
-- a replay rates the game again from what was recorded, not from what an
-- account has become since.

ALTER TABLE rating_history ADD COLUMN opponent_thin BOOLEAN NOT NULL DEFAULT false;

-- Whether `player` is a thin opponent in `variant` at `at`: made within
-- `young` before it, fewer than `few` rated games of the variant, or at
-- least `quick_needed` of their last ten rated games of the variant lost
-- by resignation, flag or leaving within `quick_plies` plies. One SELECT
-- returning a row, so the claim that joins it plans it once (as
-- `accounts_linked_row`).
CREATE FUNCTION opponent_thin_row(
    player UUID,
    variant TEXT,
    at TIMESTAMPTZ,
    young INTERVAL,
    few INTEGER,
    quick_plies INTEGER,
    quick_needed INTEGER
)
    RETURNS TABLE (thin BOOLEAN)
    LANGUAGE sql STABLE
    AS $$
        SELECT p.created_at > at - young
            OR COALESCE((SELECT r.games FROM ratings r
                         WHERE r.player_id = player AND r.variant = opponent_thin_row.variant),
                        0) < few
            OR (SELECT count(*) FILTER (WHERE recent.result = 'loss'
                                          AND g.plies < quick_plies
                                          AND g.reason IN ('resign', 'timeout', 'abandoned'))
                FROM (SELECT h.game_id, h.result FROM rating_history h
                      WHERE h.player_id = player AND h.variant = opponent_thin_row.variant
                        AND h.rated_at < at
                      ORDER BY h.rated_at DESC LIMIT 10) recent
                JOIN games g ON g.id = recent.game_id) >= quick_needed
        FROM players p WHERE p.id = player
    $$;

-- Automatic reports: the fair-play sentinel's signals go into the
-- moderators' queue beside people's reports, with no reporter and with
-- the evidence they rest on (figures, and the games with theirs).
ALTER TABLE reports ALTER COLUMN reporter DROP NOT NULL;
ALTER TABLE reports ADD COLUMN evidence JSONB;
ALTER TABLE reports ADD CONSTRAINT reports_reporter_or_evidence
    CHECK (reporter IS NOT NULL OR evidence IS NOT NULL);
-- One open automatic report per player and reason: a new signal brings
-- its evidence up to date instead of piling up.
CREATE UNIQUE INDEX reports_automatic_once ON reports (player_id, reason)
    WHERE reporter IS NULL AND closed_at IS NULL;

-- How long the page was hidden during the mover's turn before this move,
-- as the web client says (a signal for the sentinel, never a rule):
-- null when the client did not say.
ALTER TABLE game_moves ADD COLUMN hidden_ms INTEGER CHECK (hidden_ms >= 0);

-- The sentinel reads the history lines rated since its cursor, every few
-- seconds, across variants.
CREATE INDEX rating_history_by_seq ON rating_history (seq);
