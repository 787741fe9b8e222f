-- The move table's write path (issue 18): a move row is written only
-- joined to the UPDATE of its own game row (fenced on the epoch), in the
-- same statement, so the game always exists; and games are never
-- deleted. The foreign key's per-row check (a row lock taken through a
-- query of its own, for every move) was the largest cost of writing a
-- move after the update itself.
-- Never edit this file once applied: add a new migration instead.

ALTER TABLE game_moves DROP CONSTRAINT game_moves_game_id_fkey;
