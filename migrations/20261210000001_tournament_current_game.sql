-- game-room holds a wave's seats by their games (one statement for the
-- whole batch): found by the game they name, not by tournament and player.
CREATE INDEX tournament_players_current_game ON tournament_players (current_game)
    WHERE current_game IS NOT NULL;
