// /tournament/{id}: one arena. Its countdown, join / pause / withdraw, the
// standings (pages of 10, with my own row), my game and the top game one
// click away, the podium at the end. The standings come over their own
// socket (/v1/tournaments/{id}/live), pushed at every change. While I
// have joined, the page also keeps a lobby socket open: that is what
// "present" means to the pairing, and it brings the `matched` that takes
// me to my next game.

import { h } from '../dom.js';
import { t } from '../i18n.js';
import { currentPlayer, freshToken, get, getAsMe, post } from '../api.js';
import { LiveSocket } from '../socket.js';
import { navigate } from '../router.js';
import { clock, errorMessage, number, timeControlLabel, variantName } from '../format.js';
import { toastError } from '../ui.js';

export function mount(root, { id }) {
  const code = new URLSearchParams(location.search).get('code');
  let view = null;
  let error = null;
  let page = 1;
  let loadedAt = 0;
  let destroyed = false;
  let socket = null;

  function show(next) {
    view = next;
    loadedAt = Date.now();
    error = null;
    if (destroyed) return;
    present(Boolean(view?.me && !view.me.withdrawn && !view.me.paused && view.tournament.status !== 'finished'));
    draw();
  }

  // Once at the start and after my own actions (not to wait for the
  // push); every change after that comes over the standings socket.
  async function load() {
    try {
      show(await getAsMe(`/v1/tournaments/${encodeURIComponent(id)}?page=${page}`));
    } catch (e) {
      error = e;
      if (!destroyed) draw();
    }
  }

  const live = new LiveSocket({
    path: `/v1/tournaments/${encodeURIComponent(id)}/live`,
    hello: async () => {
      const token = currentPlayer() ? await freshToken() : null;
      return [...(token ? [{ t: 'auth', d: { token } }] : []), { t: 'page', d: { page } }];
    },
    onMessage: (message) => {
      // One connection's pushes come in order; each is the whole view.
      if (message.t === 'standings') show(message.d.view);
    },
  });

  function turnPage(to) {
    page = to;
    if (!live.send({ t: 'page', d: { page } })) load();
  }

  // Present while joined: the lobby socket marks me online and tells me
  // of my next game.
  function present(on) {
    if (on && !socket) {
      socket = new LiveSocket({
        path: '/v1/lobby',
        hello: async () => [{ t: 'auth', d: { token: await freshToken() } }],
        onMessage: (message) => {
          if (message.t === 'matched' && message.d.queue === `tournament:${id}`) {
            navigate(`/game/${message.d.game_id}?tournament=${id}`);
          }
        },
      });
      socket.start();
    } else if (!on && socket) {
      socket.stop();
      socket = null;
    }
  }

  async function act(path, body) {
    try {
      await post(`/v1/tournaments/${encodeURIComponent(id)}/${path}`, body);
      await load();
    } catch (e) { toastError(e); }
  }

  function countdown(tournament) {
    const left = Math.max(0, tournament.seconds_left * 1000 - (Date.now() - loadedAt));
    if (tournament.status === 'finished') return t('tournament_finished');
    return tournament.status === 'running'
      ? t('tournament_ends_in', { time: clock(left) })
      : t('tournament_starts_in', { time: clock(left) });
  }

  function buttons() {
    const me = currentPlayer();
    const { tournament } = view;
    if (!me || tournament.status === 'finished') return null;
    const joined = view.me && !view.me.withdrawn;
    // A withdrawn player is paused too (not paired): they join again.
    const paused = joined && view.me.paused;
    return h('div', { class: 'button-row' },
      !joined || paused
        ? h('button', { type: 'button', class: 'button accent', 'data-testid': 'tournament-join', text: paused ? t('tournament_resume') : t('tournament_join'), onclick: () => act('join', code ? { code } : {}) })
        : h('button', { type: 'button', class: 'button ghost', 'data-testid': 'tournament-pause', text: t('tournament_pause'), onclick: () => act('pause') }),
      joined ? h('button', { type: 'button', class: 'button ghost', 'data-testid': 'tournament-withdraw', text: t('tournament_withdraw'), onclick: () => act('withdraw') }) : null,
      view.my_game ? h('a', { class: 'button', href: `/game/${view.my_game}?tournament=${id}`, 'data-testid': 'tournament-my-game', text: t('tournament_my_game') }) : null,
      view.top_game ? h('a', { class: 'button ghost', href: `/watch/${view.top_game}`, 'data-testid': 'tournament-top-game', text: t('tournament_top_game') }) : null);
  }

  // A row: rank, name, points; under the name, on a line of its own that
  // wraps rather than being cut short: while the arena runs, the "on
  // fire" streak (a next win counts double: nothing once it is over);
  // whether the player withdrew (they keep their points) or, before the
  // end, paused; and the sheet of each game's points.
  function row(entry, mine) {
    const { status } = view.tournament;
    const running = status === 'running';
    // Paused means something only while there are games to pair.
    const state = entry.withdrawn ? 'withdrawn' : entry.paused && status !== 'finished' ? 'paused' : '';
    return h('li', { class: `tournament-row${mine ? ' me' : ''}`, 'data-testid': 'standing', dataset: { player: entry.player, score: String(entry.score), state } },
      h('span', { class: 'lb-rank', text: `${entry.rank}` }),
      h('span', { class: 'lb-name' }, h('a', { href: `/player/${entry.player}`, text: entry.name })),
      h('span', { class: 'lb-games tournament-line' },
        running && entry.on_fire ? h('span', { class: 'pill', 'data-testid': 'on-fire', text: t('tournament_on_fire') }) : null,
        state ? h('span', { class: 'muted small tournament-state', 'data-testid': 'standing-state', text: t(`tournament_${state}`) }) : null,
        entry.sheet.length ? h('span', { class: 'muted small tournament-sheet', text: entry.sheet.join(' ') }) : null),
      h('span', { class: 'lb-rating', text: `${entry.score}` }));
  }

  function standings() {
    const me = currentPlayer()?.id;
    const rows = view.standings;
    if (!rows.length) return h('p', { class: 'muted', text: t('tournament_nobody') });
    const list = h('ol', { class: 'leaderboard', 'data-testid': 'standings' }, rows.map((entry) => row(entry, entry.player === me)));
    const mine = view.me && !rows.some((entry) => entry.player === me) ? h('ol', { class: 'leaderboard', 'data-testid': 'my-standing' }, row(view.me, true)) : null;
    const pager = view.pages > 1 ? h('div', { class: 'pager' },
      h('button', { type: 'button', class: 'button small ghost', disabled: page <= 1, text: '‹', onclick: () => turnPage(page - 1) }),
      h('span', { text: ` ${page} / ${view.pages} ` }),
      h('button', { type: 'button', class: 'button small ghost', disabled: page >= view.pages, text: '›', onclick: () => turnPage(page + 1) })) : null;
    return [list, mine, pager];
  }

  function podium() {
    if (view.tournament.status !== 'finished' || page !== 1) return null;
    const top = view.standings.slice(0, 3);
    if (!top.length) return null;
    return h('ol', { class: 'podium', 'data-testid': 'podium' }, top.map((entry) => h('li', {}, h('strong', { text: entry.name }), h('span', { text: ` ${entry.score}` }))));
  }

  function draw() {
    let body;
    if (error) body = [h('p', { class: 'error-text', text: error.code === 'not_found' ? t('tournament_not_found') : errorMessage(error) })];
    else if (!view) body = [h('p', { class: 'muted', text: t('loading') })];
    else {
      const tr = view.tournament;
      document.title = `${tr.name} · Mancala Arena`;
      body = [
        h('h1', { class: 'page-title', 'data-testid': 'tournament-name', text: tr.name }),
        h('p', { class: 'muted', text: `${variantName(tr.variant)} ${timeControlLabel(tr.time_control)} · ${tr.rated ? t('rated') : t('casual')} · ${t('tournament_players', { n: tr.players })}` }),
        h('p', { class: 'my-rank', 'data-testid': 'tournament-countdown', dataset: { status: tr.status }, text: countdown(tr) }),
        tr.code ? h('p', { 'data-testid': 'tournament-code', text: t('tournament_code', { code: tr.code }) }) : null,
        buttons(),
        podium(),
        h('h2', { text: t('tournament_standings') }),
        ...[standings()].flat(),
        view.me?.performance ? h('p', { class: 'muted small', text: t('tournament_performance', { n: number(view.me.performance) }) }) : null,
      ];
    }
    root.replaceChildren(h('section', { class: 'card page-card tournament', 'data-testid': 'tournament' }, body));
  }

  draw();
  load();
  live.start();
  const ticker = setInterval(() => { if (view && !destroyed) draw(); }, 1_000);
  return {
    relabel: draw,
    destroy() {
      destroyed = true;
      live.stop();
      clearInterval(ticker);
      present(false);
    },
  };
}
