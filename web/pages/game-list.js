// A list of games (live, featured, a player's history), each a link.

import { h } from '../dom.js';
import { t } from '../i18n.js';
import { number, seatName, shortDate, variantName } from '../format.js';

function resultFor(game, playerId) {
  if (game.status === 'live') return { text: t('live_badge'), kind: 'live' };
  if (game.result === 'aborted' || game.status === 'aborted') return { text: t('result_short_aborted'), kind: 'aborted' };
  if (game.result === 'draw') return { text: t('result_short_draw'), kind: 'draw' };
  if (!playerId) return { text: game.result === 'p0' ? '1–0' : '0–1', kind: 'over' };
  const seat = game.seats.findIndex((s) => s.player === playerId);
  const won = (game.result === 'p0' && seat === 0) || (game.result === 'p1' && seat === 1);
  return won ? { text: t('result_short_win'), kind: 'win' } : { text: t('result_short_loss'), kind: 'loss' };
}

function seatLine(seat, rated) {
  const rating = rated && seat.rating ? ` (${number(seat.rating)})` : '';
  return `${seatName(seat)}${rating}`;
}

function players(game) {
  const [a, b] = game.seats;
  if (a.player && a.player === b.player) return `${a.name} · ${t('hotseat_badge')}`;
  return `${seatLine(a, game.rated)} – ${seatLine(b, game.rated)}`;
}

// `playerId`: whose history this is, so results read as win/loss.
export function gameList(games, { empty, playerId = null } = {}) {
  if (!games || games.length === 0) return h('p', { class: 'muted empty', text: empty });
  return h('ul', { class: 'game-list' }, games.map((game) => {
    const result = resultFor(game, playerId);
    return h('li', {},
      h('a', { class: 'game-row', href: `/watch/${game.id}`, 'data-testid': 'game-row', dataset: { gameId: game.id } },
        h('span', { class: 'game-row-variant' },
          h('strong', { text: variantName(game.variant) }),
          h('span', { class: 'muted', text: ` · ${game.rated ? t('rated') : t('casual')}` })),
        h('span', { class: 'game-row-players', text: players(game) }),
        h('span', { class: 'game-row-meta' },
          h('span', { class: `pill ${result.kind}`, text: result.text }),
          h('span', { class: 'muted', text: t('plies', { n: game.plies }) }),
          playerId ? h('span', { class: 'muted', text: shortDate(game.created_at) }) : null)));
  }));
}
