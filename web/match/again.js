// Playing a game against the AI or on one device again: the request the
// lobby's card sent for it (to start the same game at once), and the
// lobby's address with that card filled in as it was (to change something
// first). The game's own state is all there is to go on: it names the
// variant with its options, the AI's level, the player's seat and clock.

import { hasAi, isHotseat } from './model.js';
import { VARIANTS, variantOf } from '../format.js';

// Only games one player made for themselves; never a rated one.
export function canPlayAgain(game) {
  return !game.rated && (isHotseat(game) || Boolean(game.againstAi));
}

export function againRequest(game) {
  if (isHotseat(game)) {
    return { path: '/v1/hotseat-games', body: { variant: game.variant, time_control: game.timeControl } };
  }
  if (!hasAi(game)) return null;
  const aiSeat = game.seats[0].ai ? 0 : 1;
  return {
    path: '/v1/ai-games',
    body: {
      variant: game.variant,
      level: game.seats[aiSeat].ai,
      // A random side was drawn when the game was made: keep what it gave.
      side: aiSeat === 1 ? 'first' : 'second',
      time_control: game.timeControl,
    },
  };
}

// The lobby's AI card has no clock: a timed game against the AI came from
// a ranked queue's AI fallback, so its way back is that queue.
export function againPath(game) {
  const variant = variantOf(game.variant);
  const params = new URLSearchParams();
  if (isHotseat(game)) {
    params.set('again', 'hotseat');
    params.set('variant', variant);
  } else if (game.timeControl) {
    const tc = game.timeControl;
    params.set('again', 'ranked');
    params.set('queue', `${variant}:${Math.round(tc.initial_secs / 60)}+${tc.increment_secs}`);
  } else {
    const request = againRequest(game);
    params.set('again', 'ai');
    params.set('variant', variant);
    params.set('level', request.body.level);
    params.set('side', request.body.side);
  }
  if (variant === 'kalah' && game.variant?.seeds) params.set('seeds', String(game.variant.seeds));
  return `/lobby?${params}`;
}

// Fills the lobby's start form from `againPath`'s address; returns which
// card to bring forward ('ai', 'hotseat', 'ranked') and the queue to
// pick, or null for an ordinary visit. Unknown values are left to the
// cards, which fall back to their defaults.
export function takeAgain(search, form) {
  const params = new URLSearchParams(search);
  const mode = params.get('again');
  const variant = VARIANTS.includes(params.get('variant')) ? params.get('variant') : null;
  const seeds = params.get('seeds');
  if (mode === 'ai') {
    if (variant) form.aiVariant = variant;
    if (seeds) form.aiSeeds = seeds;
    if (params.get('level')) form.aiLevel = params.get('level');
    if (params.get('side')) form.aiSide = params.get('side');
    return { mode };
  }
  if (mode === 'hotseat') {
    if (variant) form.seatVariant = variant;
    if (seeds) form.seatSeeds = seeds;
    return { mode };
  }
  if (mode === 'ranked') return { mode, queue: params.get('queue') };
  return null;
}
