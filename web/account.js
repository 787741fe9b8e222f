// Who I am, in the header: a guest can register (keeping their id, games
// and ratings) or sign in to an account; a registered player can sign out
// (and continues as a new guest, since playing needs a session). Without
// any session (no guest could be made: the address made too many new
// players) the header still offers to sign in.

import { h } from './dom.js';
import { t } from './i18n.js';
import { api, closeAccount, currentPlayer, login, logout, makingGuest, onSessionChange, register } from './api.js';
import { errorMessage } from './format.js';
import { toast } from './ui.js';

// Registering needs a guest to upgrade; without one (or as a registered
// player) only signing in is offered.
const mayRegister = () => currentPlayer()?.guest === true;

export function openAccountDialog(start = 'register') {
  let tab = mayRegister() ? start : 'login';
  const error = h('p', { class: 'error-text', 'data-testid': 'account-error', role: 'alert' });
  const username = h('input', { type: 'text', name: 'username', autocomplete: 'username', required: true, minlength: 3, maxlength: 20, pattern: '[A-Za-z0-9_\\-]{3,20}', 'data-testid': 'account-username' });
  const password = h('input', { type: 'password', name: 'password', required: true, minlength: 8, maxlength: 128, 'data-testid': 'account-password' });
  const submit = h('button', { type: 'submit', class: 'button accent', 'data-testid': 'account-submit' });
  const note = h('p', { class: 'muted small' });
  const tabs = h('div', { class: 'tabs', role: 'tablist' });
  const form = h('form', { class: 'account-form', method: 'dialog' },
    h('label', { class: 'field' }, h('span', { class: 'field-label', text: t('username') }), username),
    h('label', { class: 'field' }, h('span', { class: 'field-label', text: t('password') }), password),
    note, error,
    h('div', { class: 'dialog-actions' },
      h('button', { type: 'button', class: 'button ghost', text: t('cancel'), onclick: () => dialog.close() }),
      submit));
  const dialog = h('dialog', { class: 'dialog', 'data-testid': 'account-dialog', 'aria-label': t('account') }, tabs, form);

  function drawTab() {
    const canRegister = mayRegister();
    if (!canRegister) tab = 'login';
    tabs.replaceChildren(...['register', 'login'].filter((name) => name === 'login' || canRegister).map((name) => h('button', {
      type: 'button', role: 'tab', class: 'tab', 'aria-selected': String(name === tab), text: t(name === 'register' ? 'register' : 'sign_in'),
      onclick: () => { tab = name; drawTab(); },
    })));
    submit.textContent = t(tab === 'register' ? 'register' : 'sign_in');
    note.textContent = tab === 'register' ? t('register_note') : t('login_note');
    password.autocomplete = tab === 'register' ? 'new-password' : 'current-password';
    error.textContent = '';
  }
  drawTab();

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    submit.disabled = true;
    try {
      if (tab === 'register') await register(username.value.trim(), password.value);
      else await login(username.value.trim(), password.value);
      dialog.close();
      toast(tab === 'register' ? t('registered_ok') : t('signed_in_ok', { name: currentPlayer().display_name }));
    } catch (e) {
      error.textContent = errorMessage(e);
    } finally {
      submit.disabled = false;
    }
  });
  // A guest made (or a sign-in in another tab) while the dialog is open
  // changes which tabs apply.
  let could = mayRegister();
  const forget = onSessionChange(() => {
    if (mayRegister() === could) return;
    could = mayRegister();
    drawTab();
  });
  dialog.addEventListener('close', () => {
    forget();
    dialog.remove();
  });
  document.body.append(dialog);
  dialog.showModal();
  username.focus();
}

// The panel on one's own profile page.
export function accountPanel() {
  const me = currentPlayer();
  if (!me) return null;
  if (me.guest) {
    return h('div', { class: 'account-panel' },
      h('p', { text: t('guest_note') }),
      h('div', { class: 'button-row' },
        h('button', { type: 'button', class: 'button accent', text: t('register'), onclick: () => openAccountDialog('register') }),
        h('button', { type: 'button', class: 'button ghost', text: t('sign_in'), onclick: () => openAccountDialog('login') })));
  }
  return h('div', { class: 'account-panel' },
    h('div', { class: 'button-row' },
      h('button', { type: 'button', class: 'button ghost', 'data-testid': 'logout', text: t('sign_out'), onclick: () => logout().catch((e) => toast(errorMessage(e), 'error')) }),
      h('button', { type: 'button', class: 'button ghost', 'data-testid': 'my-data', text: t('my_data'), onclick: () => downloadMyData().catch((e) => toast(errorMessage(e), 'error')) }),
      h('button', { type: 'button', class: 'button ghost danger-text', 'data-testid': 'close-account', text: t('close_account'), onclick: openCloseDialog })));
}

// Everything the site keeps about me, saved as a JSON file.
async function downloadMyData() {
  const data = await api('GET', '/v1/me/data');
  const url = URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' }));
  const link = h('a', { href: url, download: 'mancala-arena-data.json' });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function openCloseDialog() {
  const password = h('input', { type: 'password', autocomplete: 'current-password', required: true, 'data-testid': 'close-password' });
  const error = h('p', { class: 'error-text', role: 'alert' });
  const form = h('form', { class: 'account-form', method: 'dialog' },
    h('p', { text: t('close_account_confirm') }),
    h('label', { class: 'field' }, h('span', { class: 'field-label', text: t('close_account_password') }), password),
    error,
    h('div', { class: 'dialog-actions' },
      h('button', { type: 'button', class: 'button ghost', text: t('cancel'), onclick: () => dialog.close() }),
      h('button', { type: 'submit', class: 'button danger', 'data-testid': 'close-confirm', text: t('close_account') })));
  const dialog = h('dialog', { class: 'dialog', 'data-testid': 'close-dialog', 'aria-label': t('close_account') }, form);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      await closeAccount(password.value);
      dialog.close();
      toast(t('close_account_done'));
    } catch (e) {
      // Signed in already: what was wrong is the password typed here.
      error.textContent = e.code === 'invalid_credentials' ? t('close_wrong_password') : errorMessage(e);
    }
  });
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}

export function mountAccountWidget(box) {
  function draw() {
    const me = currentPlayer();
    if (!me && makingGuest()) {
      box.replaceChildren();
      return;
    }
    if (!me) {
      box.replaceChildren(
        h('button', { type: 'button', class: 'button small', 'data-testid': 'sign-in', text: t('sign_in_short'), onclick: () => openAccountDialog('login') }));
      return;
    }
    box.replaceChildren(
      h('a', { class: 'me', href: `/player/${me.id}`, 'data-testid': 'me', title: me.display_name },
        h('span', { class: 'me-avatar', 'aria-hidden': 'true', text: me.display_name.slice(0, 1).toUpperCase() }),
        h('span', { class: 'me-name', text: me.display_name })),
      me.guest
        ? h('button', { type: 'button', class: 'button small', 'data-testid': 'sign-in', text: t('sign_in_short'), onclick: () => openAccountDialog('register') })
        : h('button', { type: 'button', class: 'button small ghost', 'data-testid': 'logout-header', text: t('sign_out'), onclick: () => logout().catch((e) => toast(errorMessage(e), 'error')) }));
  }
  onSessionChange(draw);
  window.addEventListener('langchange', draw);
  draw();
}
