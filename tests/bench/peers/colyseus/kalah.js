'use strict';
// Kalah(6, 4) rules, shared by the peer server (authority) and the load
// client (which only needs the legal pits).
//
// Board: 14 numbers. Indices 0..5 are seat 0's pits 1..6, index 6 is seat
// 0's store, 7..12 are seat 1's pits 1..6 and 13 is seat 1's store. Sowing
// runs counter-clockwise, i.e. towards higher indices, wrapping at 14.

const PITS = 6;
const SEEDS = 4;
const SIZE = 2 * (PITS + 1);

function storeOf(seat) {
  return seat * (PITS + 1) + PITS;
}

function newBoard() {
  const board = new Array(SIZE).fill(SEEDS);
  board[storeOf(0)] = 0;
  board[storeOf(1)] = 0;
  return board;
}

function sideEmpty(board, seat) {
  const base = seat * (PITS + 1);
  for (let i = 0; i < PITS; i++) {
    if (board[base + i] !== 0) return false;
  }
  return true;
}

// Pits 1..6 (relative to `seat`) that hold stones.
function legalPits(board, seat) {
  const base = seat * (PITS + 1);
  const out = [];
  for (let i = 0; i < PITS; i++) {
    if (board[base + i] > 0) out.push(i + 1);
  }
  return out;
}

// Applies `pit` (1..6) for `seat` to a copy of `board`.
// Returns null when the move is illegal, otherwise
// { board, turn, over } where `turn` is the seat to move next (null once
// the game is over).
function applyMove(board, seat, pit) {
  if (seat !== 0 && seat !== 1) return null;
  if (!Number.isInteger(pit) || pit < 1 || pit > PITS) return null;
  const b = board.slice();
  const start = seat * (PITS + 1) + (pit - 1);
  let stones = b[start];
  if (stones === 0) return null;
  b[start] = 0;
  const ownStore = storeOf(seat);
  const oppStore = storeOf(1 - seat);
  let idx = start;
  while (stones > 0) {
    idx = (idx + 1) % SIZE;
    if (idx === oppStore) continue;
    b[idx] += 1;
    stones -= 1;
  }

  let turn = 1 - seat;
  if (idx === ownStore) {
    turn = seat; // extra turn
  } else {
    const ownBase = seat * (PITS + 1);
    const onOwnSide = idx >= ownBase && idx < ownBase + PITS;
    if (onOwnSide && b[idx] === 1) {
      const opposite = 2 * PITS - idx; // 0<->12, 1<->11, ..., 5<->7
      if (b[opposite] > 0) {
        b[ownStore] += b[opposite] + 1;
        b[opposite] = 0;
        b[idx] = 0;
      }
    }
  }

  // The game ends when the side to move has no stones; every remaining
  // stone goes to its owner's store.
  let over = false;
  if (sideEmpty(b, turn)) {
    over = true;
    for (const s of [0, 1]) {
      const base = s * (PITS + 1);
      for (let i = 0; i < PITS; i++) {
        b[storeOf(s)] += b[base + i];
        b[base + i] = 0;
      }
    }
  }
  return { board: b, turn: over ? null : turn, over };
}

module.exports = { PITS, SEEDS, SIZE, storeOf, newBoard, legalPits, applyMove, sideEmpty };
