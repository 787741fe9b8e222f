// Reporting a player (and, from a finished game, that game): a reason
// from the server's list and a few words. The server counts reports per
// reporter and files the same open report only once.

import { h } from './dom.js';
import { t } from './i18n.js';
import { post } from './api.js';
import { errorMessage } from './format.js';
import { toast } from './ui.js';

const REASONS = ['engine', 'boosting', 'stalling', 'offensive_name'];

export function reportButton(player, { game = null } = {}) {
  return h('button', {
    type: 'button', class: 'button small ghost', 'data-testid': 'report',
    text: t('report'), onclick: () => openReportDialog(player, game),
  });
}

function openReportDialog(player, game) {
  const reason = h('select', { 'data-testid': 'report-reason' }, REASONS.map((r) => h('option', { value: r, text: t(`report_reason_${r}`) })));
  const text = h('textarea', { maxlength: 1000, rows: 3, 'data-testid': 'report-text' });
  const error = h('p', { class: 'error-text', role: 'alert' });
  const form = h('form', { class: 'account-form', method: 'dialog' },
    h('h2', { text: t('report_title', { name: player.name }) }),
    h('label', { class: 'field' }, h('span', { class: 'field-label', text: t('report_reason') }), reason),
    h('label', { class: 'field' }, h('span', { class: 'field-label', text: t('report_text') }), text),
    error,
    h('div', { class: 'dialog-actions' },
      h('button', { type: 'button', class: 'button ghost', text: t('cancel'), onclick: () => dialog.close() }),
      h('button', { type: 'submit', class: 'button accent', 'data-testid': 'report-send', text: t('report_send') })));
  const dialog = h('dialog', { class: 'dialog', 'data-testid': 'report-dialog', 'aria-label': t('report') }, form);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      await post('/v1/reports', { player: player.id, ...(game ? { game } : {}), reason: reason.value, text: text.value });
      dialog.close();
      toast(t('report_sent'));
    } catch (e) {
      error.textContent = errorMessage(e);
    }
  });
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}
