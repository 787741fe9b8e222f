-- What each rated game did to each player's rating (issue 8).
-- Never edit this file once applied: add a new migration instead.

-- One row per player per rated game. The key makes applying a game twice
-- impossible even if the outbox were bypassed; the rows are the history
-- chart and the W/D/L counts.
CREATE TABLE rating_history (
    game_id UUID NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    player_id UUID NOT NULL REFERENCES players (id) ON DELETE CASCADE,
    variant TEXT NOT NULL,
    result TEXT NOT NULL CHECK (result IN ('win', 'draw', 'loss')),
    rating_before DOUBLE PRECISION NOT NULL,
    rating_after DOUBLE PRECISION NOT NULL,
    rd_after DOUBLE PRECISION NOT NULL,
    volatility_after DOUBLE PRECISION NOT NULL,
    rated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (game_id, player_id)
);
CREATE INDEX rating_history_player ON rating_history (player_id, variant, rated_at);
