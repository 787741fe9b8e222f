// /mod: the open reports, grouped by the account reported (the weightiest
// first: see the API's `weight`), each with the way to its file; a search by name; a
// report closed without acting, with its reason.

import { h } from '../dom.js';
import { t } from '../i18n.js';
import { api, post } from '../api.js';
import { toast, toastError } from '../ui.js';
import { evidenceView, failure, modPage, playerLink, reasonInput, reporterLink, when } from './mod-common.js';

export function mount(root) {
  let queue = null;
  let error = null;
  let found = null;
  let destroyed = false;

  async function load() {
    try {
      queue = await api('GET', '/v1/mod/reports');
      error = null;
    } catch (e) {
      error = e;
    }
    if (!destroyed) draw();
  }

  async function search(name) {
    try {
      found = (await api('GET', `/v1/mod/players?name=${encodeURIComponent(name)}`)).players;
    } catch (e) {
      toastError(e);
    }
    if (!destroyed) draw();
  }

  function searchForm() {
    const input = h('input', { type: 'text', maxlength: 40, 'data-testid': 'mod-search-name', placeholder: t('mod_search_placeholder') });
    return h('form', {
      class: 'mod-search', 'data-testid': 'mod-search',
      onsubmit: (event) => { event.preventDefault(); if (input.value.trim()) search(input.value.trim()); },
    }, input, h('button', { type: 'submit', class: 'button small', text: t('mod_search') }),
    found === null ? null : found.length === 0
      ? h('p', { class: 'muted', text: t('mod_no_match') })
      : h('ul', { class: 'mod-found', 'data-testid': 'mod-found' }, found.map((p) => h('li', {}, playerLink(p)))));
  }

  function reportLine(report) {
    const reason = reasonInput(`mod-close-reason-${report.id}`);
    return h('li', { class: 'mod-report', 'data-testid': 'mod-report' },
      h('div', { class: 'mod-report-head' },
        h('span', { class: 'pill', text: t(`report_reason_${report.reason}`) }),
        h('span', { class: 'muted small', text: `${t('mod_by')} ` }), reporterLink(report),
        h('span', { class: 'muted small', text: ` · ${when(report.at)}` }),
        report.game ? h('a', { class: 'small', href: `/watch/${report.game}`, 'data-testid': 'mod-report-game', text: t('mod_the_game') }) : null),
      report.evidence ? evidenceView(report.evidence) : report.text ? h('p', { class: 'mod-report-text', text: report.text }) : null,
      h('form', {
        class: 'mod-inline',
        onsubmit: async (event) => {
          event.preventDefault();
          try {
            await post(`/v1/mod/reports/${report.id}/close`, { reason: reason.value });
            toast(t('mod_report_closed'));
            load();
          } catch (e) { toastError(e); }
        },
      }, reason, h('button', { type: 'submit', class: 'button small ghost', 'data-testid': 'mod-close-report', text: t('mod_close_report') })));
  }

  function accounts() {
    if (error) return failure(error);
    if (!queue) return h('p', { class: 'muted', text: t('loading') });
    if (queue.accounts.length === 0) return h('p', { class: 'muted empty', 'data-testid': 'mod-no-reports', text: t('mod_no_reports') });
    return h('ul', { class: 'mod-accounts', 'data-testid': 'mod-reports' }, queue.accounts.map((account) => h('li', { class: 'mod-account', 'data-testid': 'mod-reported' },
      h('div', { class: 'mod-account-head' },
        h('a', { class: 'mod-account-name', href: `/mod/player/${account.player.id}`, 'data-testid': 'mod-open-account', text: account.player.name }),
        h('span', { class: 'badge', text: t('mod_reporters', { n: account.reporters }) }),
        h('span', { class: 'badge muted', 'data-testid': 'mod-weight', title: t('mod_weight_help'), text: t('mod_weight', { w: account.weight }) })),
      h('ul', { class: 'mod-report-list' }, account.reports.map(reportLine)))));
  }

  function draw() {
    modPage(root, '/mod', t('mod_reports_title'), [searchForm(), accounts()]);
  }

  draw();
  load();
  return { relabel: draw, destroy() { destroyed = true; } };
}
