// What the moderators' pages share: the tabs, the role check (the server
// checks too: a page without the role only says so), player links and
// the forms' small parts.

import { h } from '../dom.js';
import { t } from '../i18n.js';
import { currentRole } from '../api.js';
import { date, errorMessage } from '../format.js';

export const TABS = [
  { path: '/mod', key: 'mod_tab_reports', testid: 'mod-tab-reports' },
  { path: '/mod/live', key: 'mod_tab_live', testid: 'mod-tab-live' },
  { path: '/mod/log', key: 'mod_tab_log', testid: 'mod-tab-log', admin: true },
];

export function moderates() {
  const role = currentRole();
  return role === 'moderator' || role === 'admin';
}

export function isAdmin() {
  return currentRole() === 'admin';
}

export function modTabs(current) {
  return h('nav', { class: 'tabs mod-tabs', 'aria-label': t('mod_title') },
    TABS.filter((tab) => !tab.admin || isAdmin()).map((tab) => h('a', {
      class: 'tab', href: tab.path, 'data-testid': tab.testid, text: t(tab.key),
      'aria-current': tab.path === current ? 'page' : null,
    })));
}

// The page's frame: title, tabs, body; or, without the role, why not.
export function modPage(root, current, title, body) {
  const parts = moderates()
    ? [h('h1', { class: 'page-title', text: title }), modTabs(current), ...body]
    : [h('h1', { class: 'page-title', text: t('mod_title') }),
      h('p', { class: 'error-text', 'data-testid': 'mod-forbidden', text: t('mod_forbidden') })];
  root.replaceChildren(h('section', { class: 'card page-card mod', 'data-testid': 'mod-page' }, parts));
}

export function playerLink(ref) {
  if (!ref) return h('span', { class: 'muted', text: t('mod_command_line') });
  return h('a', { href: `/mod/player/${ref.id}`, 'data-testid': 'mod-player-link', text: ref.name });
}

// Who filed a report: a player, or the fair-play sentinel.
export function reporterLink(report) {
  if (!report.reporter) return h('span', { class: 'pill', 'data-testid': 'mod-automatic', text: t('mod_sentinel') });
  return playerLink(report.reporter);
}

const FIGURES = new Set([
  'wins', 'wins_over_thin', 'thin_opponents', 'wins_given_up_quickly', 'opponents_giving_up_quickly',
  'opponents_playing_only_them', 'losses', 'losses_given_up_to_weaker', 'games', 'moves',
  'best_move_share', 'mean_loss_stones', 'exact_share', 'move_time_cv', 'move_time_window_cv',
  'hidden_share_of_own_time', 'plies', 'opponent_thin', 'given_up', 'rating_gap',
]);

function figureList(figures) {
  return h('dl', { class: 'mod-figures' }, Object.entries(figures).map(([name, value]) => [
    h('dt', { text: FIGURES.has(name) ? t(`figure_${name}`) : name }),
    h('dd', { text: String(value) }),
  ]));
}

// An automatic report's evidence: the signal, its figures, and each game
// with its own (the game one click from watching it again).
export function evidenceView(evidence) {
  if (!evidence) return null;
  return h('div', { class: 'mod-evidence', 'data-testid': 'mod-evidence', dataset: { signal: evidence.signal } },
    h('p', { class: 'small', text: t(`signal_${evidence.signal}`) }),
    figureList(evidence.figures),
    h('ul', { class: 'mod-evidence-games' }, evidence.games.map((game) => h('li', { 'data-testid': 'mod-evidence-game' },
      h('a', { class: 'small', href: `/watch/${game.game}`, text: t('mod_the_game') }), ' ',
      figureList(game.figures)))));
}

export function when(iso) {
  return iso ? date(iso) : '–';
}

export function failure(error) {
  if (error?.status === 403) return h('p', { class: 'error-text', 'data-testid': 'mod-forbidden', text: t('mod_forbidden') });
  return h('p', { class: 'error-text', text: errorMessage(error) });
}

export function reasonInput(testid) {
  return h('input', { type: 'text', maxlength: 500, required: true, 'data-testid': testid, placeholder: t('mod_reason_placeholder') });
}

export function field(label, control) {
  return h('label', { class: 'field' }, h('span', { class: 'field-label', text: label }), control);
}
