// History-API routing over exactly the paths the server answers with
// index.html, so a reload or a shared link lands on the same page.

import { clear, h } from './dom.js';
import { t } from './i18n.js';

const routes = [
  { pattern: '/', nav: 'lobby', load: () => import('./pages/lobby.js') },
  { pattern: '/lobby', nav: 'lobby', load: () => import('./pages/lobby.js') },
  { pattern: '/help', nav: 'help', load: () => import('./pages/help.js') },
  { pattern: '/leaderboard', nav: 'leaderboard', load: () => import('./pages/leaderboard.js') },
  { pattern: '/leaderboard/:variant', nav: 'leaderboard', load: () => import('./pages/leaderboard.js') },
  { pattern: '/invite/:code', nav: 'lobby', load: () => import('./pages/invite.js') },
  { pattern: '/game/:id', nav: null, load: () => import('./pages/game.js'), mode: 'play' },
  { pattern: '/watch/:id', nav: null, load: () => import('./pages/game.js'), mode: 'watch' },
  { pattern: '/player/:id', nav: 'player', load: () => import('./pages/player.js') },
  { pattern: '/tournaments', nav: 'tournaments', load: () => import('./pages/tournaments.js') },
  { pattern: '/tournament/:id', nav: 'tournaments', load: () => import('./pages/tournament.js') },
  { pattern: '/mod', nav: 'mod', load: () => import('./pages/mod-reports.js') },
  { pattern: '/mod/live', nav: 'mod', load: () => import('./pages/mod-live.js') },
  { pattern: '/mod/log', nav: 'mod', load: () => import('./pages/mod-log.js') },
  { pattern: '/mod/player/:id', nav: 'mod', load: () => import('./pages/mod-player.js') },
];

function match(path) {
  const parts = path.split('/').filter(Boolean);
  for (const route of routes) {
    const want = route.pattern.split('/').filter(Boolean);
    if (want.length !== parts.length) continue;
    const params = {};
    const ok = want.every((segment, i) => {
      if (segment.startsWith(':')) {
        params[segment.slice(1)] = decodeURIComponent(parts[i]);
        return true;
      }
      return segment === parts[i];
    });
    if (ok) return { route, params };
  }
  return null;
}

let root;
let current = null;
let generation = 0;

export function navigate(path, { replace = false } = {}) {
  if (path === location.pathname + location.search && !replace) return;
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  render(true);
}

// Draws the current page again from scratch: used when the signed-in
// player changes, since pages hold sockets authenticated as the old one.
export function reload() {
  render(false);
}

async function render(moveFocus) {
  const mine = ++generation;
  if (current) {
    try { current.destroy?.(); } catch (error) { console.error(error); }
    current = null;
  }
  const found = match(location.pathname);
  for (const link of document.querySelectorAll('[data-nav]')) {
    if (found && link.dataset.nav === found.route.nav) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  if (!found) {
    clear(root).append(notFound());
    document.title = `${t('not_found_title')} · Mancala Arena`;
    return;
  }
  let module;
  try {
    module = await found.route.load();
  } catch (error) {
    console.error(error);
    if (mine === generation) clear(root).append(h('p', { class: 'error-text', text: t('err_network') }));
    return;
  }
  if (mine !== generation) return;
  clear(root);
  window.scrollTo(0, 0);
  current = module.mount(root, { ...found.params, mode: found.route.mode }) || null;
  if (moveFocus) root.focus({ preventScroll: true });
}

function notFound() {
  return h('section', { class: 'card narrow', 'data-testid': 'not-found' },
    h('h1', { text: t('not_found_title') }),
    h('p', { text: t('not_found_body') }),
    h('a', { class: 'button', href: '/lobby', text: t('nav_play') }));
}

export function startRouter(main) {
  root = main;
  window.addEventListener('popstate', () => render(false));
  document.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const link = event.target.closest('a[href]');
    if (!link || link.target || link.hasAttribute('download')) return;
    const url = new URL(link.href, location.href);
    if (url.origin !== location.origin || url.pathname.startsWith('/v1/')) return;
    event.preventDefault();
    navigate(url.pathname + url.search);
  });
  // A page that can relabel itself keeps its state (a live game keeps its
  // socket); any other is simply drawn again.
  window.addEventListener('langchange', () => {
    if (current?.relabel) current.relabel();
    else render(false);
  });
  render(false);
}
