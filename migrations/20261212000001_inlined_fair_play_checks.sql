-- The two fair-play checks the rating worker makes on every game it
-- claims, in a form the planner can fold into the query that calls them.
-- Never edit this file once applied: add a new migration instead.
--
-- `accounts_linked` and `game_voided` return a boolean from a subquery,
-- which Postgres never inlines: each execution of a statement calling
-- them planned both bodies again (about 300 µs, against 40 µs for the
-- same checks written into the statement), and the worker claims a game
-- or two at a time. A set-returning SQL function whose body is one
-- SELECT is inlined where it is joined (`CROSS JOIN LATERAL`), so the
-- calling statement plans it with the rest, once. The definitions move
-- here; the boolean forms read them, so there is still one of each.
-- `accounts_linked` also looks each direction up by key now (below).

CREATE FUNCTION accounts_linked_row(a UUID, b UUID, at TIMESTAMPTZ, within INTERVAL)
    RETURNS TABLE (linked BOOLEAN)
    LANGUAGE sql STABLE
    AS $$
        -- Each direction on its own: the player made recently, and the
        -- other seen on that player's sign-up network, found by
        -- player_networks' key. Written as one OR, the planner would read
        -- every recent player of the network (all of a campus, a NAT)
        -- and keep the two it wanted.
        SELECT EXISTS (
            SELECT 1
            FROM players p
            JOIN player_networks n ON n.player_id = b AND n.network = p.signup_network
            WHERE p.id = a AND p.created_at > at - within AND n.last_seen > at - within
        ) OR EXISTS (
            SELECT 1
            FROM players p
            JOIN player_networks n ON n.player_id = a AND n.network = p.signup_network
            WHERE p.id = b AND p.created_at > at - within AND n.last_seen > at - within
        )
    $$;

CREATE FUNCTION game_voided_row(a UUID, b UUID, at TIMESTAMPTZ)
    RETURNS TABLE (voided BOOLEAN)
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

CREATE OR REPLACE FUNCTION accounts_linked(a UUID, b UUID, at TIMESTAMPTZ, within INTERVAL)
    RETURNS BOOLEAN
    LANGUAGE sql STABLE
    AS $$ SELECT linked FROM accounts_linked_row(a, b, at, within) $$;

CREATE OR REPLACE FUNCTION game_voided(a UUID, b UUID, at TIMESTAMPTZ)
    RETURNS BOOLEAN
    LANGUAGE sql STABLE
    AS $$ SELECT voided FROM game_voided_row(a, b, at) $$;

-- The sign-up network a guest's offences are kept under, read by every
-- queue entry's check of its record: the same, so that the check plans
-- it once with the rest.
CREATE FUNCTION guest_network_row(player UUID)
    RETURNS TABLE (network TEXT)
    LANGUAGE sql STABLE
    AS $$
        SELECT p.signup_network FROM players p
        WHERE p.id = player
          AND NOT EXISTS (SELECT 1 FROM credentials c WHERE c.player_id = p.id)
    $$;

CREATE OR REPLACE FUNCTION guest_network(player UUID)
    RETURNS TEXT
    LANGUAGE sql STABLE
    AS $$ SELECT network FROM guest_network_row(player) $$;
