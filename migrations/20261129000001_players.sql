-- Players, their credentials and their refresh tokens (issue 4).
-- Never edit this file once applied: add a new migration instead.

-- Everyone who plays, guest or registered. A guest who registers keeps this
-- row, and so their id, games and ratings: registering adds a credentials
-- row instead of creating another player.
CREATE TABLE players (
    id UUID PRIMARY KEY,
    -- Shown on boards, leaderboards and invites; generated for guests
    -- ("Swift Otter 42") and the username for registered players.
    display_name TEXT NOT NULL CHECK (length(display_name) BETWEEN 1 AND 40),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_seen_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- Display names identify players to each other, so no two may look alike.
CREATE UNIQUE INDEX players_display_name_key ON players (lower(display_name));

-- Only registered players have a row: a guest is a player without one, which
-- keeps "guest" from being a flag that every query must remember.
CREATE TABLE credentials (
    player_id UUID PRIMARY KEY REFERENCES players (id) ON DELETE CASCADE,
    username TEXT NOT NULL CHECK (username ~ '^[A-Za-z0-9_-]{3,20}$'),
    -- argon2id PHC string: algorithm, parameters and salt travel with it.
    password_hash TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- 'Alice' and 'alice' are one username.
CREATE UNIQUE INDEX credentials_username_key ON credentials (lower(username));

-- One family per sign-in. Refresh tokens rotate within a family; presenting
-- a token that was already rotated means it was stolen (or replayed), and
-- revokes the whole family.
CREATE TABLE refresh_families (
    id UUID PRIMARY KEY,
    player_id UUID NOT NULL REFERENCES players (id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at TIMESTAMPTZ NOT NULL,
    revoked_at TIMESTAMPTZ
);
CREATE INDEX refresh_families_player ON refresh_families (player_id);

-- Only the SHA-256 of each opaque token is kept, so the table leaks no
-- usable token. `rotated_at` marks a token already exchanged for a new one.
CREATE TABLE refresh_tokens (
    token_hash BYTEA PRIMARY KEY CHECK (length(token_hash) = 32),
    family_id UUID NOT NULL REFERENCES refresh_families (id) ON DELETE CASCADE,
    issued_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    rotated_at TIMESTAMPTZ
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);
