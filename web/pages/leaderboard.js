// /leaderboard/{variant}: the ranked players, and where I stand (or why
// I am not listed yet).

import { h } from '../dom.js';
import { t } from '../i18n.js';
import { api, currentPlayer, get } from '../api.js';
import { navigate } from '../router.js';
import { VARIANTS, errorMessage, number, variantName } from '../format.js';

const PAGE = 50;

export function mount(root, { variant }) {
  if (!variant) {
    navigate('/leaderboard/kalah', { replace: true });
    return null;
  }
  let offset = 0;
  let board = null;
  let mine = null;
  let error = null;
  let destroyed = false;

  async function load() {
    board = null;
    draw();
    try {
      const [page, me] = await Promise.all([
        get(`/v1/leaderboard/${encodeURIComponent(variant)}?offset=${offset}&limit=${PAGE}`),
        api('GET', `/v1/leaderboard/${encodeURIComponent(variant)}/me`).catch(() => null),
      ]);
      board = page;
      mine = me;
      error = null;
    } catch (e) {
      error = e;
    }
    if (!destroyed) draw();
  }

  function myRank() {
    const me = currentPlayer();
    // A guest is never ranked, whatever their games: say so, and where to
    // register, rather than "no ranked games yet".
    if (me?.guest) {
      return h('p', { class: 'my-rank', 'data-testid': 'my-rank' }, t('rank_reason_guest'), ' ',
        h('a', { href: `/player/${me.id}`, 'data-testid': 'register-link', text: t('register_here') }));
    }
    if (!mine) return null;
    const text = mine.rank ? t('my_rank', { rank: number(mine.rank) })
      : t(`rank_reason_${mine.reason || 'no_rating'}`, { variant: variantName(variant), ...rules() });
    return h('p', { class: 'my-rank', 'data-testid': 'my-rank', text });
  }

  // The server's own eligibility settings, in the words of the page.
  function rules() {
    const e = board?.eligibility;
    if (!e) return null;
    return { games: number(e.min_games), days: number(e.active_days), rd: number(e.max_rd) };
  }

  function table() {
    if (error) return h('p', { class: 'error-text', text: error.code === 'not_found' ? t('err_not_found') : errorMessage(error) });
    if (!board) return h('p', { class: 'page-loading', text: t('loading') });
    if (board.entries.length === 0) return h('p', { class: 'muted empty', 'data-testid': 'leaderboard-empty', text: t('leaderboard_empty') });
    const me = currentPlayer()?.id;
    return h('ol', { class: 'leaderboard', 'data-testid': 'leaderboard' }, board.entries.map((entry) => h('li', { class: entry.player === me ? 'me' : '' },
      h('span', { class: 'rank', text: number(entry.rank) }),
      h('a', { class: 'lb-name', href: `/player/${entry.player}`, text: entry.name }),
      h('span', { class: 'lb-rating' }, h('strong', { text: number(entry.rating) }), h('span', { class: 'muted', text: ` · RD ${number(entry.rd)}` })),
      h('span', { class: 'lb-games muted', text: t('games_n', { n: entry.games }) }))));
  }

  function pager() {
    if (!board) return null;
    const prev = offset > 0;
    const next = board.entries.length === PAGE;
    if (!prev && !next) return null;
    return h('div', { class: 'pager' },
      h('button', { type: 'button', class: 'button ghost', disabled: !prev, text: t('previous'), onclick: () => { offset = Math.max(0, offset - PAGE); load(); } }),
      h('button', { type: 'button', class: 'button ghost', disabled: !next, text: t('next'), onclick: () => { offset += PAGE; load(); } }));
  }

  function draw() {
    document.title = `${t('nav_leaderboard')} · Mancala Arena`;
    root.replaceChildren(h('section', { class: 'card page-card' },
      h('h1', { class: 'page-title', text: t('leaderboard_title') }),
      h('nav', { class: 'tabs', 'aria-label': t('variant') }, VARIANTS.map((v) => h('a', {
        href: `/leaderboard/${v}`, class: 'tab', 'aria-current': v === variant ? 'page' : null, text: variantName(v),
      }))),
      myRank(),
      rules() ? h('p', { class: 'muted small', 'data-testid': 'leaderboard-rules', text: t('leaderboard_rules', rules()) }) : null,
      table(),
      pager()));
  }

  load();
  return {
    relabel: draw,
    destroy() { destroyed = true; },
  };
}
