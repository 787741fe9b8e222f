// The ranked-queue card and the lobby socket behind it: join a queue, see
// it (waiting, estimated wait, the AI fallback countdown), leave it, and
// go to the game on `matched`. The same socket brings the lobby figures.

import { h, setText } from '../dom.js';
import { t } from '../i18n.js';
import { currentPlayer, forceRefresh, freshToken, get } from '../api.js';
import { LiveSocket } from '../socket.js';
import { navigate } from '../router.js';
import { VARIANTS, parseQueue, seconds, sortQueues, timeControlLabel, variantName } from '../format.js';
import { toast, toastError } from '../ui.js';
import { radioGroup } from './forms.js';

// Until the first figures arrive; after that the queues are the server's.
const DEFAULT_QUEUES = ['kalah:3+2', 'kalah:10+5', 'oware:3+2', 'oware:10+5', 'mangala:3+2', 'mangala:10+5'];
const AUTH_ERRORS = ['token_expired', 'token_invalid', 'unauthenticated'];

// Several server ticks (1 s each) without a word about our queue.
const REQUEUE_AFTER_MS = 4_000;

export function createRankedCard({ onStats }) {
  let stats = null;
  let queues = DEFAULT_QUEUES.map(parseQueue);
  let queued = null; // { name, joinedAt, status, statusAt }
  let variant = 'kalah';
  let chosen = 'kalah:3+2';
  let destroyed = false;

  const body = h('div', { class: 'card-body' });
  const info = h('div', { class: 'queue-status', 'data-testid': 'queue-status', 'aria-live': 'polite' });
  const queuesOf = (v) => queues.filter((q) => q.variant === v);

  function draw() {
    if (queued) {
      drawQueued();
      return;
    }
    const variants = VARIANTS.filter((v) => queuesOf(v).length);
    if (!variants.includes(variant)) variant = variants[0] || 'kalah';
    const options = queuesOf(variant);
    if (!options.some((q) => q.name === chosen)) chosen = options[0]?.name;
    body.replaceChildren(
      radioGroup('ranked-variant', variants.map((v) => ({ value: v, label: variantName(v) })), variant, 'ranked-variant', (v) => {
        variant = v;
        draw();
        body.querySelector('[data-testid="ranked-variant"] input:checked')?.focus();
      }),
      radioGroup('ranked-tc', options.map((q) => ({
        value: q.name,
        label: `${timeControlLabel(q.time_control)}${stats ? ` · ${t('n_waiting', { n: stats.in_queue[q.name] ?? 0 })}` : ''}`,
      })), chosen, 'ranked-tc', (name) => { chosen = name; }),
      h('button', { type: 'button', class: 'button accent wide', 'data-testid': 'queue-join', text: t('find_game'), onclick: join }));
  }

  function drawQueued() {
    const queue = parseQueue(queued.name);
    body.replaceChildren(
      h('p', { class: 'queue-title' },
        h('span', { class: 'spinner', 'aria-hidden': 'true' }),
        h('span', { text: t('searching', { variant: variantName(queue.variant), tc: timeControlLabel(queue.time_control) }) })),
      info,
      h('button', { type: 'button', class: 'button ghost wide', 'data-testid': 'queue-leave', text: t('leave_queue'), onclick: leave }));
    tick();
  }

  // The server sends the status once a tick; the countdowns run locally
  // in between.
  function tick() {
    if (!queued) return;
    requeueIfForgotten();
    const s = queued.status;
    if (!s) {
      setText(info, t('joining_queue'));
      return;
    }
    const elapsed = Date.now() - queued.statusAt;
    const fallback = Math.max(0, s.ai_fallback_in_ms - elapsed);
    const wait = Math.max(0, s.estimated_wait_ms - elapsed);
    info.replaceChildren(
      h('span', { 'data-testid': 'queue-waiting', text: t('n_waiting', { n: s.waiting }) }),
      h('span', { 'data-testid': 'queue-eta', text: t('estimated_wait', { time: seconds(wait) }) }),
      h('span', { 'data-testid': 'queue-ai', text: fallback > 0 ? t('ai_fallback_in', { time: seconds(fallback) }) : t('ai_fallback_now') }));
  }

  // The server reports on our queue every tick; silence while the socket
  // is open means our ticket is gone (say, Redis restarted empty): join
  // again, as a person would.
  function requeueIfForgotten() {
    if (!socket.isOpen()) return;
    const heard = Math.max(queued.statusAt, queued.joinedAt, queued.rejoinedAt || 0);
    if (Date.now() - heard > REQUEUE_AFTER_MS && sendJoin(queued.name)) queued.rejoinedAt = Date.now();
  }

  function sendJoin(name) {
    const queue = parseQueue(name);
    return queue && socket.send({ t: 'queue_join', d: { variant: queue.variant, time_control: queue.time_control } });
  }

  function join() {
    if (!sendJoin(chosen)) {
      toast(t('reconnecting'), 'error');
      return;
    }
    queued = { name: chosen, joinedAt: Date.now(), status: null, statusAt: 0 };
    draw();
  }

  function leave() {
    socket.send({ t: 'queue_leave', d: {} });
    queued = null;
    draw();
  }

  // A `matched` sent while our lobby socket was down is lost (it goes out
  // once, on the player's channel); a live game of ours made since we
  // joined is that match.
  async function findMissedMatch() {
    const me = currentPlayer();
    if (!queued || !me) return false;
    try {
      const page = await get(`/v1/players/${me.id}/games?limit=5`);
      const since = queued.joinedAt - 60_000;
      const game = page.games.find((g) => g.status === 'live' && Date.parse(g.created_at) >= since);
      if (game && !destroyed) {
        queued = null;
        navigate(`/game/${game.id}`);
        return true;
      }
    } catch { /* join again instead */ }
    return false;
  }

  function takeStats(next) {
    stats = next;
    const names = Object.keys(next.in_queue || {}).map(parseQueue).filter(Boolean);
    if (names.length) queues = sortQueues(names);
    onStats(stats, queues);
    if (!queued) draw();
  }

  let opened = 0;
  let needFreshToken = false;
  const socket = new LiveSocket({
    path: '/v1/lobby',
    hello: async () => {
      const token = needFreshToken ? await forceRefresh() : await freshToken();
      needFreshToken = false;
      return [{ t: 'auth', d: { token } }];
    },
    onStatus: async (status) => {
      if (status !== 'open') return;
      opened += 1;
      if (opened > 1 && queued && !(await findMissedMatch()) && queued) sendJoin(queued.name);
    },
    onMessage: (message) => {
      switch (message.t) {
        case 'lobby_stats':
          takeStats(message.d);
          break;
        case 'queue_status':
          if (queued && message.d.queue === queued.name) {
            queued.status = message.d;
            queued.statusAt = Date.now();
            tick();
          }
          break;
        case 'matched':
          queued = null;
          navigate(`/game/${message.d.game_id}`);
          break;
        case 'error': {
          const code = message.d?.code;
          if (AUTH_ERRORS.includes(code)) {
            // Refused at `auth` (say, the server's signing key changed):
            // the socket closes and the next attempt brings a new token.
            needFreshToken = true;
            break;
          }
          toastError(message.d);
          if (queued && ['invalid_input', 'unavailable'].includes(code)) {
            queued = null;
            draw();
          }
          break;
        }
        default:
          break;
      }
    },
  });
  socket.start();
  const ticker = setInterval(tick, 500);
  get('/v1/lobby/stats').then((s) => { if (!destroyed && !stats) takeStats(s); }).catch(() => {});

  draw();
  const el = h('section', { class: 'card play-card', 'data-testid': 'ranked-card' },
    h('h2', { 'data-i18n': 'ranked_title', text: t('ranked_title') }),
    h('p', { class: 'muted', 'data-i18n': 'ranked_blurb', text: t('ranked_blurb') }),
    body);

  return {
    el,
    draw,
    queues: () => queues,
    destroy() {
      destroyed = true;
      if (queued) socket.send({ t: 'queue_leave', d: {} });
      socket.stop();
      clearInterval(ticker);
    },
  };
}
