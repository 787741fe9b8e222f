//! A deliberately plain implementation of docs/RULES.md, stone by stone, sharing
//! no code with the engine: the property tests play both side by side.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    Kalah {
        pits: usize,
        seeds: u8,
        empty_capture: bool,
        on_turn: bool,
    },
    Oware,
    Mangala,
}

/// Places are listed in sowing order. Kalah: South pits, South store, North
/// pits, North store. Oware and Mangala: South pits, North pits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    pub rules: Rules,
    pub places: Vec<u8>,
    pub captured: [u8; 2],
    pub turn: usize,
    pub over: bool,
    seen: Vec<(Vec<u8>, [u8; 2], usize)>,
}

impl Reference {
    pub fn new(rules: Rules) -> Reference {
        let places = match rules {
            Rules::Kalah { pits, seeds, .. } => {
                let mut places = vec![seeds; 2 * pits + 2];
                places[pits] = 0;
                places[2 * pits + 1] = 0;
                places
            }
            Rules::Oware => vec![4; 12],
            Rules::Mangala => vec![6; 12],
        };
        let mut reference = Reference {
            rules,
            places,
            captured: [0; 2],
            turn: 0,
            over: false,
            seen: vec![],
        };
        reference.remember();
        reference
    }

    pub fn pits(&self) -> usize {
        match self.rules {
            Rules::Kalah { pits, .. } => pits,
            _ => 6,
        }
    }

    /// Index of a player's pit (1-based number) in `places`.
    fn index(&self, player: usize, pit: usize) -> usize {
        match self.rules {
            Rules::Kalah { pits, .. } => player * (pits + 1) + pit - 1,
            _ => player * 6 + pit - 1,
        }
    }

    pub fn row(&self, player: usize) -> Vec<u8> {
        (1..=self.pits())
            .map(|pit| self.places[self.index(player, pit)])
            .collect()
    }

    pub fn score(&self) -> [u8; 2] {
        match self.rules {
            Rules::Kalah { pits, .. } => [self.places[pits], self.places[2 * pits + 1]],
            _ => self.captured,
        }
    }

    fn row_total(&self, player: usize) -> u32 {
        self.row(player).iter().map(|&s| u32::from(s)).sum()
    }

    fn owner(&self, index: usize) -> Option<usize> {
        match self.rules {
            Rules::Kalah { pits, .. } => {
                if index < pits {
                    Some(0)
                } else if index > pits && index < 2 * pits + 1 {
                    Some(1)
                } else {
                    None
                }
            }
            _ => Some(index / 6),
        }
    }

    /// Oware: does sowing this pit put a seed on the opponent's side?
    fn feeds(&self, player: usize, pit: usize) -> bool {
        let mut trial = self.clone();
        trial.over = false;
        let before = trial.row_total(1 - player);
        trial.sow_only(player, pit);
        trial.row_total(1 - player) > before
    }

    pub fn legal(&self) -> Vec<usize> {
        if self.over {
            return vec![];
        }
        let turn = self.turn;
        let mut moves: Vec<usize> = (1..=self.pits())
            .filter(|&pit| self.places[self.index(turn, pit)] > 0)
            .collect();
        if self.rules == Rules::Oware && self.row_total(1 - turn) == 0 {
            moves.retain(|&pit| self.feeds(turn, pit));
        }
        moves
    }

    /// Sows and returns the index of the last stone.
    fn sow_only(&mut self, player: usize, pit: usize) -> usize {
        let from = self.index(player, pit);
        let mut stones = self.places[from];
        self.places[from] = 0;
        let len = self.places.len();
        let mut at = from;
        while stones > 0 {
            at = (at + 1) % len;
            let skip = match self.rules {
                Rules::Kalah { pits, .. } => at == if player == 0 { 2 * pits + 1 } else { pits },
                Rules::Oware => at == from,
                Rules::Mangala => false,
            };
            if skip {
                continue;
            }
            self.places[at] += 1;
            stones -= 1;
        }
        at
    }

    pub fn play(&mut self, pit: usize) {
        assert!(
            self.legal().contains(&pit),
            "reference asked to play an illegal move"
        );
        let player = self.turn;
        let last = self.sow_only(player, pit);
        match self.rules {
            Rules::Kalah {
                pits,
                empty_capture,
                on_turn,
                ..
            } => {
                let store = if player == 0 { pits } else { 2 * pits + 1 };
                if last != store {
                    if self.owner(last) == Some(player) && self.places[last] == 1 {
                        let opposite = 2 * pits - last;
                        if self.places[opposite] > 0 || empty_capture {
                            let taken = self.places[opposite] + 1;
                            self.places[opposite] = 0;
                            self.places[last] = 0;
                            self.places[store] += taken;
                        }
                    }
                    self.turn = 1 - player;
                }
                let ends = if on_turn {
                    self.row_total(self.turn) == 0
                } else {
                    self.row_total(0) == 0 || self.row_total(1) == 0
                };
                if ends {
                    for side in 0..2 {
                        let swept = self.row_total(side) as u8;
                        for pit in 1..=pits {
                            let index = self.index(side, pit);
                            self.places[index] = 0;
                        }
                        let store = if side == 0 { pits } else { 2 * pits + 1 };
                        self.places[store] += swept;
                    }
                    self.over = true;
                }
            }
            Rules::Oware => {
                let victim = 1 - player;
                let mut taken = vec![];
                let mut at = last;
                while self.owner(at) == Some(victim) && matches!(self.places[at], 2 | 3) {
                    taken.push(at);
                    if at.is_multiple_of(6) {
                        break;
                    }
                    at -= 1;
                }
                let total: u32 = taken.iter().map(|&i| u32::from(self.places[i])).sum();
                if total < self.row_total(victim) {
                    for i in taken {
                        self.captured[player] += self.places[i];
                        self.places[i] = 0;
                    }
                }
                self.turn = victim;
                let next = self.turn;
                if self.captured.iter().any(|&c| c >= 25) {
                    self.over = true;
                } else if self.row_total(next) == 0 {
                    self.captured[player] += self.places.iter().sum::<u8>();
                    self.places.iter_mut().for_each(|p| *p = 0);
                    self.over = true;
                } else if self.row_total(player) == 0
                    && !(1..=6)
                        .any(|pit| self.places[self.index(next, pit)] > 0 && self.feeds(next, pit))
                {
                    self.captured[next] += self.places.iter().sum::<u8>();
                    self.places.iter_mut().for_each(|p| *p = 0);
                    self.over = true;
                }
            }
            Rules::Mangala => {
                let mut at = last;
                let mut steps = 0;
                while matches!(self.places[at], 2 | 4 | 6) && steps < 12 {
                    self.captured[player] += self.places[at];
                    self.places[at] = 0;
                    at = (at + 11) % 12;
                    steps += 1;
                }
                if self.places.iter().all(|&p| p == 0) {
                    self.over = true;
                } else if self.row_total(1 - player) == 0 {
                    self.turn = player;
                } else {
                    self.turn = 1 - player;
                }
            }
        }
        if !self.over {
            self.check_repetition();
        }
    }

    fn check_repetition(&mut self) {
        if matches!(self.rules, Rules::Kalah { .. }) {
            return;
        }
        let key = (self.places.clone(), self.captured, self.turn);
        let earlier = self.seen.iter().filter(|seen| **seen == key).count();
        self.seen.push(key);
        if earlier >= 2 {
            for side in 0..2 {
                self.captured[side] += self.row_total(side) as u8;
            }
            self.places.iter_mut().for_each(|p| *p = 0);
            self.over = true;
        }
    }

    fn remember(&mut self) {
        self.seen
            .push((self.places.clone(), self.captured, self.turn));
    }
}
