-- What one player may hold at once (issue 16): open invites are counted
-- per creator when a new one is made.
-- Never edit this file once applied: add a new migration instead.

CREATE INDEX invites_open_by_creator ON invites (creator) WHERE accepted_by IS NULL;
