// /player/{id}: a player's ratings per variant, the rating chart and the
// games they played.

import { h } from '../dom.js';
import { t } from '../i18n.js';
import { currentPlayer, get } from '../api.js';
import { VARIANTS, errorMessage, number, variantName } from '../format.js';
import { ratingChart } from '../chart.js';
import { gameList } from './game-list.js';
import { accountPanel } from '../account.js';
import { reportButton } from '../report.js';

export function mount(root, { id }) {
  let profile = null;
  let error = null;
  let variant = null;
  let history = null;
  let games = [];
  let next = null;
  let gamesLoaded = false;
  let results = [];
  let destroyed = false;

  async function loadProfile() {
    try {
      profile = await get(`/v1/players/${encodeURIComponent(id)}`);
      const played = profile.ratings.filter((r) => r.games > 0);
      variant = (played[0] || profile.ratings[0])?.variant || 'kalah';
    } catch (e) {
      error = e;
    }
    if (destroyed) return;
    draw();
    if (profile) {
      loadHistory();
      loadGames();
      loadResults();
    }
  }

  async function loadHistory() {
    history = null;
    draw();
    try {
      history = await get(`/v1/players/${encodeURIComponent(id)}/ratings/${encodeURIComponent(variant)}`);
    } catch {
      history = [];
    }
    if (!destroyed) draw();
  }

  async function loadGames() {
    try {
      const page = await get(`/v1/players/${encodeURIComponent(id)}/games?limit=20${next ? `&before=${encodeURIComponent(next)}` : ''}`);
      games = games.concat(page.games);
      next = page.next ?? null;
    } catch { /* shown as an empty list */ }
    gamesLoaded = true;
    if (!destroyed) draw();
  }

  // The finished arenas and the place in each.
  async function loadResults() {
    try {
      results = (await get(`/v1/players/${encodeURIComponent(id)}/tournaments`)).results;
    } catch { results = []; }
    if (!destroyed) draw();
  }

  function tournamentResults() {
    if (!results.length) return null;
    return [
      h('h2', { text: t('tournaments_title') }),
      h('ul', { class: 'game-list', 'data-testid': 'tournament-results' }, results.map((r) => h('li', {},
        h('a', { class: 'game-row', href: `/tournament/${r.tournament.id}` },
          h('span', { class: 'game-row-variant' }, h('strong', { text: r.tournament.name })),
          h('span', { class: 'game-row-meta' },
            // A podium of a listed arena is a title; a private arena's
            // place is shown as private, never as one.
            r.tournament.private ? h('span', { class: 'pill', 'data-testid': 'private-arena', text: t('private_arena') }) : null,
            h('span', { class: `pill ${r.title ? 'win' : ''}`, 'data-testid': 'arena-place', dataset: { title: String(Boolean(r.title)) }, text: t('tournament_place', { rank: r.rank, n: r.tournament.players }) }),
            h('span', { class: 'muted', text: t('tournament_points', { n: r.score }) })))))),
    ];
  }

  function ratingCards() {
    const byVariant = new Map(profile.ratings.map((r) => [r.variant, r]));
    return h('div', { class: 'rating-cards' }, VARIANTS.map((v) => {
      const r = byVariant.get(v);
      return h('button', {
        type: 'button', class: `rating-card ${v === variant ? 'selected' : ''}`, 'aria-pressed': String(v === variant), 'data-testid': `rating-${v}`,
        onclick: () => { variant = v; loadHistory(); },
      },
      h('span', { class: 'rating-variant', text: variantName(v) }),
      h('strong', { class: 'rating-value', text: r ? number(r.rating) : '–' }),
      h('span', { class: 'muted small', text: r ? `${r.provisional ? `${t('provisional')} · ` : ''}RD ${number(r.rd)}` : t('no_games_yet') }),
      r ? h('span', { class: 'small', text: t('wdl', { w: r.wins, d: r.draws, l: r.losses }) }) : null);
    }));
  }

  function chart() {
    if (history === null) return h('p', { class: 'muted', text: t('loading') });
    if (history.length === 0) return h('p', { class: 'muted empty', 'data-testid': 'chart-empty', text: t('chart_empty') });
    return h('div', { class: 'chart-box' }, ratingChart(history, { label: t('chart_label', { variant: variantName(variant) }) }));
  }

  function draw() {
    let body;
    if (error) {
      body = [h('p', { class: 'error-text', text: error.code === 'not_found' ? t('player_not_found') : errorMessage(error) })];
    } else if (!profile) {
      body = [h('p', { class: 'page-loading', text: t('loading') })];
    } else {
      document.title = `${profile.name} · Mancala Arena`;
      const me = currentPlayer()?.id === profile.id;
      body = [
        h('div', { class: 'profile-head' },
          h('h1', { class: 'page-title', 'data-testid': 'profile-name', text: profile.name }),
          h('span', { class: 'badge', 'data-testid': 'profile-kind',
            text: profile.closed ? t('account_closed_badge') : profile.guest ? t('guest') : t('registered') }),
          !me && currentPlayer() && !profile.closed ? reportButton({ id: profile.id, name: profile.name }) : null),
        me ? accountPanel() : null,
        ratingCards(),
        h('h2', { text: t('rating_history', { variant: variantName(variant) }) }),
        chart(),
        ...(tournamentResults() ?? []),
        h('h2', { text: t('games_title') }),
        gamesLoaded ? gameList(games, { empty: t('no_games'), playerId: profile.id }) : h('p', { class: 'muted', text: t('loading') }),
        next ? h('button', { type: 'button', class: 'button ghost', 'data-testid': 'more-games', text: t('more'), onclick: loadGames }) : null,
      ];
    }
    root.replaceChildren(h('section', { class: 'card page-card profile', 'data-testid': 'profile' }, body));
  }

  draw();
  loadProfile();
  return {
    relabel: draw,
    destroy() { destroyed = true; },
  };
}
