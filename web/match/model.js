// The client's copy of a game, advanced by the socket's events. Versioned
// events (moved, over, undone, taken_over) must arrive in order: an old one
// is a duplicate (after a resync) and is dropped; one from the future
// means something was missed, and the caller asks for `sync`.

import { hasStores } from '../format.js';

const VERSIONED = new Set(['moved', 'over', 'undone', 'taken_over', 'berserked']);

// The last mover is to move again: by an extra turn (Kalah, the only game
// that grants one) or because the other side had no stones and passed.
function again(variant, turn, last) {
  const same = Boolean(last) && turn !== null && turn !== undefined && turn === last.seat;
  const kalah = hasStores(variant);
  return { extra: same && kalah, passed: same && !kalah };
}

export function fromState(d, now = Date.now()) {
  const { extra, passed } = again(d.variant, d.status === 'live' ? d.turn : null, d.last_move);
  return {
    id: d.game_id,
    variant: d.variant,
    rated: d.rated,
    hotseat: Boolean(d.hotseat),
    againstAi: Boolean(d.against_ai),
    undoable: Boolean(d.undoable),
    status: d.status,
    seats: d.seats.map((seat) => ({ ...seat })),
    board: d.board,
    turn: d.turn ?? null,
    legal: d.legal || [],
    ply: d.ply,
    version: d.version,
    last: d.last_move ? { seat: d.last_move.seat, pit: d.last_move.pit } : null,
    extra,
    passed,
    connected: d.connected ? [...d.connected] : [true, true],
    countdown: (d.countdown_ms || [null, null]).map((ms) => (ms === null || ms === undefined ? null : { ms, at: now })),
    watchers: d.watchers ?? 0,
    you: d.you ?? null,
    result: d.result ?? null,
    timeControl: d.time_control ?? null,
    clocks: d.clocks ? { ...d.clocks, at: now } : null,
    tournament: d.tournament ?? null,
    berserk: d.berserk ? [...d.berserk] : [false, false],
    room: d.room ?? null,
    rematch: d.rematch ?? null,
    casualReason: d.casual_reason ?? null,
    offer: null,
    roomLeft: null,
    ratingChanges: null,
  };
}

// Returns { game, resync }: the game after the event, and whether the
// events went out of order.
export function apply(game, message, now = Date.now()) {
  const d = message.d || {};
  if (VERSIONED.has(message.t)) {
    if (d.version <= game.version) return { game, resync: false };
    if (d.version !== game.version + 1) return { game, resync: true };
  }
  const next = { ...game };
  switch (message.t) {
    case 'moved':
      next.version = d.version;
      next.board = d.board;
      next.ply = d.ply;
      next.turn = d.turn ?? null;
      next.legal = d.legal || [];
      next.last = { seat: d.by, pit: d.pit };
      next.extra = Boolean(d.extra_turn) && d.turn === d.by;
      next.passed = !d.extra_turn && d.turn !== null && d.turn !== undefined && d.turn === d.by;
      next.clocks = d.clocks ? { ...d.clocks, at: now } : null;
      next.undoable = Boolean(d.undoable);
      next.offer = null;
      break;
    case 'over':
      next.version = d.version;
      next.status = d.result === 'aborted' ? 'aborted' : 'over';
      next.result = d;
      next.turn = null;
      next.legal = [];
      next.extra = false;
      next.passed = false;
      next.undoable = false;
      next.clocks = frozenClocks(game.clocks, now);
      next.countdown = [null, null];
      break;
    case 'undone':
      next.version = d.version;
      next.board = d.board;
      next.ply = d.ply;
      next.turn = d.turn ?? null;
      next.legal = d.legal || [];
      next.last = d.last_move ? { seat: d.last_move.seat, pit: d.last_move.pit } : null;
      Object.assign(next, again(game.variant, d.turn, d.last_move));
      next.clocks = d.clocks ? { ...d.clocks, at: now } : null;
      next.undoable = Boolean(d.undoable);
      break;
    case 'berserked':
      next.version = d.version;
      next.berserk = game.berserk.map((b, index) => b || index === d.seat);
      if (game.clocks) {
        const remaining = [...game.clocks.remaining_ms];
        remaining[d.seat] = d.clock_ms;
        next.clocks = { ...game.clocks, remaining_ms: remaining, at: now };
      }
      break;
    case 'taken_over': {
      next.version = d.version;
      next.seats = game.seats.map((seat, index) => (index === d.seat ? { ...seat, ai: d.level, player: null } : seat));
      next.rated = false;
      // A seat taken over never makes undo possible (people began it).
      next.undoable = false;
      next.countdown = game.countdown.map((c, index) => (index === d.seat ? null : c));
      break;
    }
    case 'presence':
      next.connected = game.connected.map((c, index) => (index === d.seat ? d.connected : c));
      next.countdown = game.countdown.map((c, index) => {
        if (index !== d.seat) return c;
        if (d.connected || d.countdown_ms === null || d.countdown_ms === undefined) return null;
        return { ms: d.countdown_ms, at: now };
      });
      break;
    case 'watchers':
      next.watchers = d.count;
      break;
    case 'rematch_offer':
      next.offer = d.by;
      break;
    case 'rematch_cancelled':
      if (game.offer === d.by) next.offer = null;
      break;
    case 'room_left':
      next.roomLeft = d.seat;
      next.offer = null;
      break;
    case 'rematch':
      next.rematch = d.game_id;
      break;
    case 'rating_change':
      next.ratingChanges = d.changes;
      break;
    default:
      return { game, resync: false };
  }
  return { game: next, resync: false };
}

function frozenClocks(clocks, now) {
  if (!clocks) return null;
  return { remaining_ms: clockValues(clocks, now), running: null, at: now };
}

export function clockValues(clocks, now = Date.now()) {
  if (!clocks) return null;
  return clocks.remaining_ms.map((ms, seat) => (clocks.running === seat ? Math.max(0, ms - (now - clocks.at)) : ms));
}

export function countdownLeft(entry, now = Date.now()) {
  if (!entry) return null;
  return Math.max(0, entry.ms - (now - entry.at));
}

// The server says so (`hotseat`), rather than the client comparing seats.
export function isHotseat(game) {
  return Boolean(game.hotseat);
}

export function hasAi(game) {
  return Boolean(game.seats[0].ai || game.seats[1].ai);
}

export function isPlayer(game) {
  return game.you !== null && game.you !== undefined;
}

// Two people on two devices: the only games where presence matters.
export function betweenPeople(game) {
  return !isHotseat(game) && !game.seats[0].ai && !game.seats[1].ai;
}

export function isLive(game) {
  return game.status === 'live';
}
