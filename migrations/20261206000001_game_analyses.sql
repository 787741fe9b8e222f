-- Post-game analyses, kept (issue 41): a finished game never changes, so
-- its analysis, worked out once (up to ten seconds of a core), serves every
-- instance and every restart after. Bounded by bytes: past the declared
-- budget the oldest are dropped, and the next to ask works it out again.
-- Never edit this file once applied: add a new migration instead.
CREATE TABLE game_analyses (
    game_id UUID PRIMARY KEY,
    analysis JSONB NOT NULL,
    -- The analysis's size as stored text: what the budget counts.
    bytes INTEGER NOT NULL CHECK (bytes > 0),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX game_analyses_oldest ON game_analyses (created_at, game_id);
