// The ranked-queue card and the lobby socket behind it: pick one queue or
// several, wait in them (each with its waiting count, estimated wait and
// AI fallback countdown), leave one or all, and go to the game on
// `matched`. The server takes a paired player out of every queue at once.
// The same socket brings the lobby figures.

import { fill, h, setText } from '../dom.js';
import { t } from '../i18n.js';
import { currentPlayer, forceRefresh, freshToken, get, post } from '../api.js';
import { LiveSocket } from '../socket.js';
import { navigate } from '../router.js';
import { VARIANTS, parseQueue, seconds, sortQueues, timeControlLabel, variantName, waitText } from '../format.js';
import { toastError } from '../ui.js';

// Until the first figures arrive; after that the queues are the server's.
const DEFAULT_QUEUES = ['kalah:3+2', 'kalah:10+5', 'oware:3+2', 'oware:10+5', 'mangala:3+2', 'mangala:10+5'];
const AUTH_ERRORS = ['token_expired', 'token_invalid', 'unauthenticated'];
// What the server answers a `queue_join` it refuses.
const JOIN_REFUSALS = ['invalid_input', 'unavailable', 'rate_limited', 'in_ranked_game', 'ranked_banned'];

// Several server ticks (1 s each) without a word about our queue.
const REQUEUE_AFTER_MS = 4_000;

function queueLabel(queue) {
  return `${variantName(queue.variant)} ${timeControlLabel(queue.time_control)}`;
}

// `chosen`: the queue names to start with (the way back from a game).
export function createRankedCard({ onStats, chosen: initial = ['kalah:3+2'] }) {
  let stats = null;
  let queues = DEFAULT_QUEUES.map(parseQueue);
  const chosen = new Set(initial);
  // The queues waited in, by name: { joinedAt, rejoinedAt, status, statusAt, info }.
  const waiting = new Map();
  let destroyed = false;
  // The fair-play record the server told us of: { warned, bannedUntil (ms), count, windowSecs }.
  let standing = null;
  const notice = h('p', { class: 'fair-play-notice', 'data-testid': 'fair-play-notice', role: 'status' });

  const body = h('div', { class: 'card-body' });

  function draw() {
    if (waiting.size) drawWaiting();
    else drawChoice();
  }

  function chip(queue) {
    const count = stats ? ` · ${t('n_waiting', { n: stats.in_queue[queue.name] ?? 0 })}` : '';
    return h('label', { class: 'segment', 'data-testid': `queue-option-${queue.name}` },
      h('input', {
        type: 'checkbox', value: queue.name, checked: chosen.has(queue.name),
        onchange: (event) => {
          if (event.target.checked) chosen.add(queue.name);
          else chosen.delete(queue.name);
          joinButton.disabled = !pickable().length;
        },
      }),
      h('span', { text: `${timeControlLabel(queue.time_control)}${count}` }));
  }

  const joinButton = h('button', { type: 'button', class: 'button accent wide', 'data-testid': 'queue-join', onclick: () => join(pickable()) });

  // What was chosen and is still offered.
  function pickable() {
    return queues.filter((q) => chosen.has(q.name)).map((q) => q.name);
  }

  function drawChoice() {
    const groups = VARIANTS.map((variant) => [variant, queues.filter((q) => q.variant === variant)]).filter(([, list]) => list.length);
    setText(joinButton, t('find_game'));
    joinButton.disabled = !pickable().length || banned();
    drawNotice();
    fill(body,
      moderatorNotices(),
      (standing?.warned || standing?.bannedUntil > Date.now()) && notice,
      h('p', { class: 'queue-hint muted', id: 'queue-hint', text: t('pick_queues') }),
      h('div', { class: 'queue-choice', 'data-testid': 'ranked-queues' },
        groups.map(([variant, list]) => h('div', { class: 'queue-group', role: 'group', 'aria-label': variantName(variant), 'aria-describedby': 'queue-hint' },
          h('span', { class: 'queue-variant', text: variantName(variant) }),
          h('div', { class: 'segmented' }, list.map(chip))))),
      joinButton);
  }

  function drawWaiting() {
    const names = sortQueues([...waiting.keys()].map(parseQueue));
    const title = names.length === 1
      ? t('searching', { variant: variantName(names[0].variant), tc: timeControlLabel(names[0].time_control) })
      : t('searching_many', { n: names.length });
    const others = queues.filter((q) => !waiting.has(q.name));
    fill(body,
      h('p', { class: 'queue-title' },
        h('span', { class: 'spinner', 'aria-hidden': 'true' }),
        h('span', { text: title })),
      h('ul', { class: 'queue-rows', 'data-testid': 'queue-rows' }, names.map((queue) => {
        const entry = waiting.get(queue.name);
        entry.info = h('div', { class: 'queue-status', 'data-testid': 'queue-status', 'aria-live': 'polite' });
        return h('li', { class: 'queue-row', 'data-testid': `queue-${queue.name}` },
          h('div', { class: 'queue-row-head' },
            h('strong', { text: queueLabel(queue) }),
            names.length > 1 && h('button', {
              type: 'button', class: 'button small ghost', 'data-testid': `queue-leave-${queue.name}`,
              'aria-label': t('leave_queue_named', { queue: queueLabel(queue) }), text: t('leave_one'),
              onclick: () => leave(queue.name),
            })),
          entry.info);
      })),
      others.length > 0 && h('div', { class: 'queue-more' },
        h('span', { class: 'muted', text: t('also_queue') }),
        others.map((queue) => h('button', {
          type: 'button', class: 'button small ghost', 'data-testid': `queue-add-${queue.name}`,
          'aria-label': t('add_queue_named', { queue: queueLabel(queue) }), text: `+ ${queueLabel(queue)}`,
          onclick: () => join([queue.name]),
        }))),
      h('button', {
        type: 'button', class: 'button ghost wide', 'data-testid': 'queue-leave',
        text: names.length === 1 ? t('leave_queue') : t('leave_all_queues'), onclick: () => leave(null),
      }));
    tick();
  }

  function banned() {
    return Boolean((standing?.bannedUntil && standing.bannedUntil > Date.now()) || standing?.sanctions?.some(closesRanked));
  }

  // The ban's time left counts down here; its end opens the queues again.
  function drawNotice() {
    if (!standing) return;
    if (standing.bannedUntil > Date.now()) {
      const left = Math.ceil((standing.bannedUntil - Date.now()) / 1000);
      notice.classList.add('banned');
      setText(notice, t('fair_play_banned', { wait: waitText(left), n: standing.count }));
    } else {
      notice.classList.remove('banned');
      setText(notice, t('fair_play_warned', { n: standing.count, hours: Math.round(standing.windowSecs / 3600) }));
    }
  }

  function takeStanding(record, receivedAt = Date.now()) {
    const wasBanned = banned();
    standing = {
      warned: Boolean(record.warned),
      bannedUntil: record.banned_secs > 0 ? receivedAt + record.banned_secs * 1000 : 0,
      count: record.offences?.length ?? standing?.count ?? 0,
      windowSecs: record.window_secs ?? standing?.windowSecs ?? 3600,
      // A moderator's: { id, kind, reason, until (ms, 0: until lifted) }.
      sanctions: (record.sanctions ?? standing?.sanctions ?? []).map((s) => ({
        id: s.id, kind: s.kind, reason: s.reason,
        until: s.until ?? (s.ends_in_secs != null ? receivedAt + s.ends_in_secs * 1000 : 0),
      })),
    };
    if (standing.sanctions.some(closesRanked)) waiting.clear();
    if (!waiting.size || banned() !== wasBanned) draw();
  }

  function closesRanked(sanction) {
    return sanction.kind !== 'warning' && (!sanction.until || sanction.until > Date.now());
  }

  // What a moderator put on the account: why, and until when; a warning
  // stays until the player says they read it.
  function moderatorNotices() {
    const shown = (standing?.sanctions ?? []).filter((s) => s.kind === 'warning' || closesRanked(s));
    if (!shown.length) return null;
    return h('div', { class: 'fair-play-notice banned', 'data-testid': 'moderator-notices', role: 'status' }, shown.map((s) => {
      let text;
      if (s.kind === 'warning') text = t('notice_warning', { reason: s.reason });
      else if (s.kind === 'ranked_ban') {
        text = s.until ? t('notice_ranked_ban', { wait: waitText(Math.ceil((s.until - Date.now()) / 1000)), reason: s.reason })
          : t('notice_ranked_ban_forever', { reason: s.reason });
      } else text = t('notice_mark', { reason: s.reason });
      return h('p', { 'data-testid': `moderator-notice-${s.kind}` }, text, s.kind === 'warning' ? h('button', {
        type: 'button', class: 'button small ghost', 'data-testid': 'notice-dismiss', text: t('notice_dismiss'),
        onclick: async () => {
          try {
            await post(`/v1/me/warnings/${s.id}/seen`);
            standing.sanctions = standing.sanctions.filter((other) => other.id !== s.id);
            draw();
          } catch (e) { toastError(e); }
        },
      }) : null);
    }));
  }

  // The server sends each queue's status once a tick; the countdowns run
  // locally in between.
  function tick() {
    const now = Date.now();
    if (standing?.bannedUntil) {
      if (standing.bannedUntil <= now) {
        standing.bannedUntil = 0;
        if (!waiting.size) draw();
      } else {
        drawNotice();
      }
    }
    for (const [name, entry] of waiting) {
      requeueIfForgotten(name, entry, now);
      if (!entry.info) continue;
      const s = entry.status;
      if (!s) {
        setText(entry.info, t('joining_queue'));
        continue;
      }
      const elapsed = now - entry.statusAt;
      const fallback = Math.max(0, s.ai_fallback_in_ms - elapsed);
      const wait = Math.max(0, s.estimated_wait_ms - elapsed);
      // The forecast says what it rests on: someone waiting whose rating
      // window meets ours, or nobody in reach before the AI comes; and
      // who in the count is our last opponent, not paired with us now.
      const held = s.last_opponents_waiting ?? 0;
      fill(entry.info,
        h('span', { 'data-testid': 'queue-waiting', text: t('n_waiting', { n: s.waiting }) }),
        held > 0 ? h('span', { 'data-testid': 'queue-held', text: t('last_opponent_waiting', { n: held }) }) : null,
        h('span', { 'data-testid': 'queue-eta', 'data-basis': s.by_ai_fallback ? 'ai' : 'opponent',
          text: s.by_ai_fallback ? t('no_opponent_in_reach') : t('estimated_wait', { time: seconds(wait) }) }),
        h('span', { 'data-testid': 'queue-ai', text: fallback > 0 ? t('ai_fallback_in', { time: seconds(fallback) }) : t('ai_fallback_now') }));
    }
  }

  // The server reports on each of our queues every tick; silence while the
  // socket is open means that ticket is gone (say, Redis restarted empty):
  // join again, as a person would.
  function requeueIfForgotten(name, entry, now) {
    if (!socket.isOpen()) return;
    const heard = Math.max(entry.statusAt, entry.joinedAt, entry.rejoinedAt);
    if (now - heard > REQUEUE_AFTER_MS && sendJoin(name)) entry.rejoinedAt = now;
  }

  function sendJoin(name) {
    const queue = parseQueue(name);
    return queue && socket.send({ t: 'queue_join', d: { variant: queue.variant, time_control: queue.time_control } });
  }

  function join(names) {
    if (!names.length) return;
    for (const name of names) {
      if (waiting.has(name)) continue;
      // A socket still connecting (the lobby is redrawn as a sign-in lands)
      // sends the join as it opens: the click is not lost.
      sendJoin(name);
      waiting.set(name, { joinedAt: Date.now(), rejoinedAt: 0, status: null, statusAt: 0, info: null });
    }
    draw();
  }

  // One queue, or all of them (`name` null).
  function leave(name) {
    if (name === null) {
      socket.send({ t: 'queue_leave', d: {} });
      waiting.clear();
    } else {
      const queue = parseQueue(name);
      socket.send({ t: 'queue_leave', d: { variant: queue.variant, time_control: queue.time_control } });
      waiting.delete(name);
    }
    draw();
  }

  // A `matched` sent while our lobby socket was down is lost (it goes out
  // once, on the player's channel); a live game of ours made since we
  // joined is that match.
  async function findMissedMatch() {
    const me = currentPlayer();
    if (!waiting.size || !me) return false;
    try {
      const page = await get(`/v1/players/${me.id}/games?limit=5`);
      const since = Math.min(...[...waiting.values()].map((entry) => entry.joinedAt)) - 60_000;
      const game = page.games.find((g) => g.status === 'live' && Date.parse(g.created_at) >= since);
      if (game && !destroyed) {
        waiting.clear();
        navigate(`/game/${game.id}`);
        return true;
      }
    } catch { /* join again instead */ }
    return false;
  }

  // A refused join never gets a status: those are the ones the error is
  // about (the error does not name its queue).
  function dropRefused() {
    let dropped = false;
    for (const [name, entry] of waiting) {
      if (!entry.status || entry.rejoinedAt > entry.statusAt) {
        waiting.delete(name);
        dropped = true;
      }
    }
    if (dropped) draw();
  }

  function takeStats(next) {
    stats = next;
    const names = Object.keys(next.in_queue || {}).map(parseQueue).filter(Boolean);
    if (names.length) queues = sortQueues(names);
    onStats(stats, queues);
    if (!waiting.size) draw();
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
      if (!waiting.size || (opened > 1 && await findMissedMatch())) return;
      for (const name of waiting.keys()) sendJoin(name);
    },
    onMessage: (message) => {
      switch (message.t) {
        case 'lobby_stats':
          takeStats(message.d);
          break;
        case 'queue_status': {
          const entry = waiting.get(message.d.queue);
          if (entry) {
            entry.status = message.d;
            entry.statusAt = Date.now();
            tick();
          }
          break;
        }
        case 'fair_play':
          takeStanding(message.d);
          break;
        case 'matched':
          waiting.clear();
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
          // A moderator's ban is on screen already, with its reason: the
          // refusal's words are about games not played.
          const byModerator = code === 'ranked_banned' && standing?.sanctions?.some(closesRanked);
          if (!byModerator) toastError(message.d);
          if (code === 'ranked_banned' && message.d.retry_after > 0 && !byModerator) {
            takeStanding({ ...standing, warned: true, banned_secs: message.d.retry_after });
          }
          if (JOIN_REFUSALS.includes(code)) dropRefused();
          // One ranked game at a time: back to the one that is on.
          if (code === 'in_ranked_game' && message.d.game_id) navigate(`/game/${message.d.game_id}`);
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
      if (waiting.size) socket.send({ t: 'queue_leave', d: {} });
      socket.stop();
      clearInterval(ticker);
    },
  };
}
