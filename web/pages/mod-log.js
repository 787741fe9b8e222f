// /mod/log: the audit log, newest first, for admins (who did what, to
// whom, when and why). Nobody can change it; this page only reads.

import { h } from '../dom.js';
import { t } from '../i18n.js';
import { api } from '../api.js';
import { failure, isAdmin, modPage, playerLink, when } from './mod-common.js';

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
    const shown = Object.entries(entry.details || {}).map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : v}`);
    return shown.length ? h('span', { class: 'muted small', text: ` · ${shown.join(', ')}` }) : null;
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
