-- When a player was last seated in a tournament game. A seat whose game
-- was never made (its maker died between the seat and the game) is freed
-- after a while by this time; before, a seat was free whenever its game
-- was not live, which a game not made yet is not either, so a second
-- instance could seat the same player again in that gap.
ALTER TABLE tournament_players ADD COLUMN seated_at timestamptz;
