// / and /lobby: my games still on (the way back to one after closing the
// browser), how busy the site is, the ways to start a game (ranked
// queue, the AI, a friend, this device) and the games to watch. Redrawn
// from its own state on a language switch, so the lobby socket and a place
// in the queue survive it.

import { h } from '../dom.js';
import { t } from '../i18n.js';
import { api, get } from '../api.js';
import { errorMessage, number, variantName } from '../format.js';
import { gameList } from './game-list.js';
import { createRankedCard } from './lobby-queue.js';
import { aiCard, hotseatCard, inviteCard, newStartForm } from './lobby-start.js';
import { takeAgain } from '../match/again.js';
import { tournamentLine } from './tournaments.js';

export function mount(root) {
  let destroyed = false;
  let stats = null;
  let featuredGames = null;
  let liveGames = null;
  let gamesError = null;
  const form = newStartForm();
  // Back from a game's "choose how to play again": its card, filled in.
  const again = takeAgain(location.search, form);

  const statsEl = h('div', { class: 'stats', 'data-testid': 'stats' });
  // My live games (GET /v1/me/games), newest first: asked when the lobby
  // opens and with the lists of games after that.
  const mine = h('div', { class: 'my-games-box' });
  let myGames = null;
  let askedMine = 0;

  async function loadMine() {
    const asked = (askedMine += 1);
    try {
      const games = await api('GET', '/v1/me/games');
      if (asked !== askedMine) return;
      myGames = games;
    } catch {
      // Kept as it was: the lobby works without it.
    }
    if (!destroyed) drawMine();
  }

  function kindOf(game) {
    if (game.hotseat) return t('hotseat_badge');
    if (game.against_ai) return t('my_game_vs_ai');
    return `${t(game.rated ? 'rated' : 'casual')} · ${t('my_game_vs_player')}`;
  }

  function drawMine() {
    if (!myGames?.length) {
      mine.replaceChildren();
      return;
    }
    mine.replaceChildren(h('section', { class: 'card my-games', 'data-testid': 'my-games' },
      h('h2', { text: t('my_games_title') }),
      h('ul', { class: 'my-games-list' }, myGames.map((game) => h('li', { class: 'my-game', 'data-testid': 'my-game', dataset: { gameId: game.game_id } },
        h('span', { class: 'my-game-what' },
          h('strong', { text: variantName(game.variant) }),
          h('span', { class: 'muted', text: ` · ${kindOf(game)}` })),
        h('a', { class: 'button small accent', href: game.tournament ? `/game/${game.game_id}?tournament=${encodeURIComponent(game.tournament)}` : `/game/${game.game_id}`, 'data-testid': 'my-game-return', text: t('my_game_return') }))))));
  }
  const featured = h('div', { 'data-testid': 'featured-games' });
  const live = h('div', { 'data-testid': 'live-games' });
  const arenas = h('div', { 'data-testid': 'lobby-tournaments' });
  let tournaments = null;

  // The arenas on now and next, the three soonest.
  async function loadTournaments() {
    try {
      const list = await get('/v1/tournaments');
      tournaments = [...list.running, ...list.upcoming].slice(0, 3);
    } catch { tournaments = tournaments ?? []; }
    if (!destroyed) drawArenas();
  }

  function drawArenas() {
    if (tournaments === null) return;
    arenas.replaceChildren(tournaments.length
      ? h('div', { class: 'game-list' }, tournaments.map(tournamentLine))
      : h('p', { class: 'muted', text: t('tournament_none') }),
    h('a', { class: 'small', href: '/tournaments', 'data-testid': 'lobby-all-tournaments', text: t('tournaments_all') }));
  }
  const startBox = h('div', { class: 'play-grid-rest' });

  function drawStats() {
    const inQueue = stats ? Object.values(stats.in_queue).reduce((a, b) => a + b, 0) : null;
    const item = (key, value, testid) => h('div', { class: 'stat', 'data-testid': testid },
      h('span', { class: 'stat-value', text: value === null ? '–' : number(value) }),
      h('span', { class: 'stat-label', text: t(key) }));
    statsEl.replaceChildren(
      item('stat_online', stats?.online ?? null, 'stat-online'),
      item('stat_in_queue', inQueue, 'stat-queue'),
      item('stat_playing', stats?.playing ?? null, 'stat-playing'));
  }

  let knownQueues = '';
  const ranked = createRankedCard({
    chosen: again?.mode === 'ranked' && again.queue ? [again.queue] : undefined,
    onStats: (next, queues) => {
      // Someone sat down or left: the lists of games change with "playing",
      // and must not say otherwise for ten seconds.
      const changed = stats && next && stats.playing !== next.playing;
      stats = next;
      if (changed) loadGames();
      drawStats();
      // The friend card lists the queues' clocks: redraw it when they change.
      const names = queues.map((q) => q.name).join();
      if (names !== knownQueues) {
        knownQueues = names;
        drawStart();
      }
    },
  });

  // Redrawn when the queues arrive: whoever was at a control stays there.
  function drawStart() {
    const focused = startBox.contains(document.activeElement) ? document.activeElement.dataset.testid : null;
    startBox.replaceChildren(aiCard(form), inviteCard(form, ranked.queues()), hotseatCard(form));
    markAgain();
    if (focused) startBox.querySelector(`[data-testid="${focused}"]`)?.focus({ preventScroll: true });
  }

  function againCard() {
    if (!again) return null;
    return again.mode === 'ranked' ? ranked.el : startBox.querySelector(`[data-testid="${again.mode}-card"]`);
  }

  function markAgain() {
    againCard()?.classList.add('again');
  }

  function drawGames() {
    if (gamesError) {
      live.replaceChildren(h('p', { class: 'error-text', text: errorMessage(gamesError) }));
      return;
    }
    const loading = () => h('p', { class: 'muted', text: t('loading') });
    featured.replaceChildren(featuredGames ? gameList(featuredGames, { empty: t('no_featured') }) : loading());
    live.replaceChildren(liveGames ? gameList(liveGames, { empty: t('no_live_games') }) : loading());
  }

  let asked = 0;
  async function loadGames() {
    // Only the latest answer is drawn: an older one may come back last.
    const mine = (asked += 1);
    try {
      const [top, page] = await Promise.all([get('/v1/games/featured'), get('/v1/games/live?limit=20')]);
      if (mine !== asked) return;
      featuredGames = top;
      liveGames = page.games;
      gamesError = null;
    } catch (error) {
      if (mine !== asked) return;
      gamesError = error;
    }
    if (!destroyed) drawGames();
  }
  const gamesTimer = setInterval(() => { loadGames(); loadTournaments(); loadMine(); }, 10_000);

  function draw() {
    document.title = `${t('nav_play')} · Mancala Arena`;
    drawStats();
    ranked.draw();
    drawStart();
    drawGames();
    drawArenas();
    drawMine();
    root.replaceChildren(h('div', { class: 'lobby', 'data-testid': 'lobby' },
      h('div', { class: 'lobby-main' },
        h('h1', { class: 'page-title', text: t('lobby_title') }),
        mine,
        statsEl,
        h('div', { class: 'play-grid' }, ranked.el, startBox)),
      h('aside', { class: 'lobby-side' },
        h('section', { class: 'card' }, h('h2', { text: t('tournaments_title') }), arenas),
        h('section', { class: 'card' }, h('h2', { text: t('featured_title') }), featured),
        h('section', { class: 'card' }, h('h2', { text: t('live_title') }), live))));
  }
  draw();
  loadMine();
  loadGames();
  loadTournaments();
  // After the router has placed focus on the page: the card's own button,
  // so Enter plays again as chosen.
  if (again) {
    requestAnimationFrame(() => {
      const card = againCard();
      if (destroyed || !card) return;
      card.scrollIntoView({ block: 'center' });
      card.querySelector('[data-testid$="-start"], [data-testid="queue-join"]')?.focus({ preventScroll: true });
    });
  }

  return {
    relabel: draw,
    destroy() {
      destroyed = true;
      ranked.destroy();
      clearInterval(gamesTimer);
    },
  };
}
