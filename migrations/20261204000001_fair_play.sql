-- Fair play (issue 40): what a player did to others by not playing, and
-- where accounts come from, so that sanctions and the bound on boosting
-- are computed from rows that can be explained, counted and lifted.
-- Never edit this file once applied: add a new migration instead.

-- The network an account was made from: an IPv4 /24 or an IPv6 /64, never
-- the whole address. A guest's offences follow the network as well as the
-- account (a fresh guest is one click away), and an account made recently
-- from a network its opponent plays from is one the opponent may control.
-- Null for accounts made before this was kept.
ALTER TABLE players ADD COLUMN signup_network TEXT;

-- The networks a player has signed in or refreshed a session from, with
-- when last: a handful of rows a player, upserted, never one per request.
CREATE TABLE player_networks (
    player_id UUID NOT NULL REFERENCES players (id) ON DELETE CASCADE,
    network TEXT NOT NULL,
    first_seen TIMESTAMPTZ NOT NULL,
    last_seen TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (player_id, network)
);
-- Who else plays from a network (the moderators' linked accounts, and the
-- boosting bound's "made from a network the opponent uses").
CREATE INDEX player_networks_network ON player_networks (network, last_seen);
CREATE INDEX players_signup_network ON players (signup_network, created_at)
    WHERE signup_network IS NOT NULL;

-- One row per offence: a game between two people, asked for as rated,
-- that one of them spoiled by not playing it. Written by the game's host
-- in the transaction that ends the game (or takes its seat over), so a
-- game never ends without its offence or the other way round; the key
-- keeps a game from charging one player twice. Sanctions are not stored:
-- they are computed from these rows in a sliding window, so lifting one
-- is marking its rows forgiven, and every ban can say what caused it.
CREATE TABLE fair_play_offences (
    game_id UUID NOT NULL,
    player_id UUID NOT NULL REFERENCES players (id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('no_start', 'early_abort', 'left', 'timeout', 'quick_resign')),
    -- A guest's sign-up network, copied at the offence: a guest's record
    -- is kept by network too. Null for a registered player.
    guest_network TEXT,
    at TIMESTAMPTZ NOT NULL,
    -- Set when a moderator lifts it: it no longer counts.
    forgiven_at TIMESTAMPTZ,
    PRIMARY KEY (game_id, player_id)
);
-- A guest's sign-up network (null for a registered player): what an
-- offence copies, so the record of guests stays by network.
CREATE FUNCTION guest_network(player UUID) RETURNS TEXT
    LANGUAGE sql STABLE
    AS $$
        SELECT p.signup_network FROM players p
        WHERE p.id = player
          AND NOT EXISTS (SELECT 1 FROM credentials c WHERE c.player_id = p.id)
    $$;
CREATE INDEX fair_play_offences_player ON fair_play_offences (player_id, at);
CREATE INDEX fair_play_offences_network ON fair_play_offences (guest_network, at)
    WHERE guest_network IS NOT NULL;

-- Which rating changes came from a game against a linked opponent (an
-- account made recently from a network the other plays from): their gains
-- are bounded together, per player and variant, over a window.
ALTER TABLE rating_history ADD COLUMN linked BOOLEAN NOT NULL DEFAULT false;

-- Whether `a` and `b` are linked at `at`: one of them was made within
-- `within` before it from a network the other used in that time (signed
-- in, refreshed a session, or was made from). The rating service bounds
-- what a player gains from linked opponents.
CREATE FUNCTION accounts_linked(a UUID, b UUID, at TIMESTAMPTZ, within INTERVAL) RETURNS BOOLEAN
    LANGUAGE sql STABLE
    AS $$
        SELECT EXISTS (
            SELECT 1
            FROM players p
            JOIN player_networks n ON n.network = p.signup_network
            WHERE ((p.id = a AND n.player_id = b) OR (p.id = b AND n.player_id = a))
              AND p.created_at > at - within
              AND n.last_seen > at - within
        )
    $$;
