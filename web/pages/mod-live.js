// /mod/live: every live game, newest first, each one click from watching
// it (a moderator watches as anyone does: the watch page shows no hidden
// state, and watching changes nothing in the game).

import { h } from '../dom.js';
import { t } from '../i18n.js';
import { get } from '../api.js';
import { gameList } from './game-list.js';
import { failure, modPage } from './mod-common.js';

const REFRESH_MS = 5_000;

export function mount(root) {
  let games = null;
  let error = null;
  let destroyed = false;

  async function load() {
    try {
      games = (await get('/v1/games/live?limit=100')).games;
      error = null;
    } catch (e) {
      error = e;
    }
    if (!destroyed) draw();
  }

  function draw() {
    let body;
    if (error) body = failure(error);
    else if (!games) body = h('p', { class: 'muted', text: t('loading') });
    else body = h('div', { 'data-testid': 'mod-live' }, gameList(games, { empty: t('no_live_games') }));
    modPage(root, '/mod/live', t('mod_live_title'), [body]);
  }

  draw();
  load();
  const timer = setInterval(load, REFRESH_MS);
  return { relabel: draw, destroy() { destroyed = true; clearInterval(timer); } };
}
