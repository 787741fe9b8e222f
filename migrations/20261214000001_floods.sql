-- One ranked game at a time, decided where the game is made: a game asked
-- for as rated while one of its players has a rated game live (two
-- invites accepted at the same instant, a queue match racing an invite)
-- is made casual, and says why.
ALTER TABLE games DROP CONSTRAINT games_casual_reason_check;
ALTER TABLE games ADD CONSTRAINT games_casual_reason_check
    CHECK (casual_reason IN ('pair_limit', 'in_ranked_game'));

-- The private arenas an account has not yet seen end, counted before it
-- makes another.
CREATE INDEX tournaments_by_creator ON tournaments (created_by, ends_at)
    WHERE code IS NOT NULL;
