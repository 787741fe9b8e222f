// Shared bits of interface: passing notices and a confirmation dialog.

import { h } from './dom.js';
import { t } from './i18n.js';
import { errorMessage } from './format.js';

export function toast(message, kind = 'info', ms = 4000) {
  const box = document.querySelector('.toasts');
  if (!box) return;
  const item = h('div', { class: `toast toast-${kind}`, 'data-testid': `toast-${kind}`, text: message });
  box.append(item);
  setTimeout(() => item.remove(), ms);
}

export function toastError(error) {
  toast(errorMessage(error), 'error', 5000);
}

// <dialog> gives focus trapping and Escape for free.
export function confirmDialog(message, { ok = t('confirm'), cancel = t('cancel'), danger = false } = {}) {
  return new Promise((resolve) => {
    const dialog = h('dialog', { class: 'dialog', 'data-testid': 'confirm-dialog' },
      h('p', { class: 'dialog-text', text: message }),
      h('div', { class: 'dialog-actions' },
        h('button', { type: 'button', class: 'button ghost', 'data-testid': 'confirm-cancel', text: cancel, onclick: () => dialog.close('cancel') }),
        h('button', { type: 'button', class: `button ${danger ? 'danger' : ''}`, 'data-testid': 'confirm-ok', text: ok, onclick: () => dialog.close('ok') })));
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'ok');
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Clipboard API refused (insecure origin, no permission): select-and-copy.
    const area = h('textarea', { class: 'offscreen', readonly: true });
    area.value = text;
    document.body.append(area);
    area.select();
    let ok = false;
    try { ok = document.execCommand('copy'); } catch { ok = false; }
    area.remove();
    return ok;
  }
}

export function spinner() {
  return h('span', { class: 'spinner', 'aria-hidden': 'true' });
}
