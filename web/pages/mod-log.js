// /mod/log: the audit log, newest first, for admins (who did what, to
// whom, when and why). Nobody can change it; this page only reads.

import { h } from '../dom.js';
import { has, t } from '../i18n.js';
import { api } from '../api.js';
import { date, number } from '../format.js';
import { failure, isAdmin, modPage, playerLink, when } from './mod-common.js';

// A value of the log's details as the page's language says it: roles,
// marks and kinds of sanction by their names, times as dates.
function detailValue(key, value, action) {
  const named = (prefix) => (has(`${prefix}${value}`) ? t(`${prefix}${value}`) : String(value));
  switch (key) {
    case 'from':
    case 'to':
      return action === 'set_role' ? named('role_') : String(value);
    case 'mark':
      return named('mod_mark_');
    case 'kind':
      return named('sanction_');
    case 'hours':
      return t('hours_short', { n: number(value) });
    case 'since':
      return date(value) || String(value);
    default:
      return typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
}

// The details (what the action changed: a role from and to, a ban's
// hours, the sanction it made…), each with its label in the page's
// language; an empty one (null: a mark over every game) is left out.
export function detailTexts(action, details) {
  const entries = Object.entries(details || {}).filter(([, value]) => value !== null && value !== undefined && value !== '');
  const values = Object.fromEntries(entries.map(([key, value]) => [key, detailValue(key, value, action)]));
  const shown = [];
  if ('from' in values && 'to' in values) shown.push(t('mod_detail_change', { from: values.from, to: values.to }));
  for (const [key, value] of Object.entries(values)) {
    if (('from' in values && 'to' in values) && (key === 'from' || key === 'to')) continue;
    const label = `mod_detail_${key}`;
    // A detail this page does not know yet: shown as the server names it.
    shown.push(has(label) ? t(label, { value }) : `${key}: ${value}`);
  }
  return shown;
}

export function mount(root) {
  let entries = [];
  let next = null;
  let error = null;
  let loaded = false;
  let destroyed = false;

  async function load() {
    try {
      const page = await api('GET', `/v1/mod/log?limit=50${next ? `&before=${next}` : ''}`);
      entries = entries.concat(page.entries);
      next = page.next ?? null;
      error = null;
    } catch (e) {
      error = e;
    }
    loaded = true;
    if (!destroyed) draw();
  }

  function details(entry) {
    const shown = detailTexts(entry.action, entry.details);
    return shown.length ? h('span', { class: 'muted small', 'data-testid': 'mod-log-details', text: ` · ${shown.join(', ')}` }) : null;
  }

  function list() {
    if (error) return failure(error);
    if (!loaded) return h('p', { class: 'muted', text: t('loading') });
    if (!entries.length) return h('p', { class: 'muted empty', text: t('mod_none') });
    return h('ol', { class: 'mod-list mod-log', 'data-testid': 'mod-log' }, entries.map((entry) => h('li', { 'data-testid': 'mod-log-entry', dataset: { action: entry.action } },
      h('span', { class: 'muted small', text: `${when(entry.at)} · ` }),
      playerLink(entry.actor),
      h('strong', { text: ` ${t(`mod_log_${entry.action}`)} ` }),
      entry.player ? playerLink(entry.player) : null,
      h('span', { text: ` · ${entry.reason}` }),
      details(entry))));
  }

  function draw() {
    modPage(root, '/mod/log', t('mod_log_title'), [
      isAdmin() ? null : h('p', { class: 'muted', text: t('mod_log_admins') }),
      list(),
      next ? h('button', { type: 'button', class: 'button ghost', 'data-testid': 'mod-log-more', text: t('more'), onclick: load }) : null,
    ]);
  }

  draw();
  load();
  return { relabel: draw, destroy() { destroyed = true; } };
}
