// Start-up: language, the guest session every visitor gets, the header,
// then the page for the address.

import { applyI18n, getLang, setLang, t } from './i18n.js';
import { currentPlayer, currentRole, ensureSession, onSessionChange } from './api.js';
import { mountAccountWidget, openAccountDialog } from './account.js';
import { reload, startRouter } from './router.js';
import { errorMessage } from './format.js';
import { h } from './dom.js';
import { toast } from './ui.js';

function mountLangSwitch(button) {
  const draw = () => {
    // The switch names the other language, in that language.
    const other = getLang() === 'ko' ? 'en' : 'ko';
    button.textContent = other === 'ko' ? '한국어' : 'English';
    button.lang = other;
    button.setAttribute('aria-label', t('switch_language'));
    button.onclick = () => setLang(other);
  };
  window.addEventListener('langchange', draw);
  draw();
}

// Without a session nothing works: say why, and offer to try again or
// to sign in to an account (the one way in when this address may make no
// more guests). Settles on "try again", or once a session appears.
function bootFailed(main, error) {
  return new Promise((resolve) => {
    const draw = () => {
      main.replaceChildren(h('section', { class: 'card narrow boot-error', 'data-testid': 'boot-failed' },
        h('p', { class: 'error-text', 'data-testid': 'boot-error', text: errorMessage(error) }),
        h('div', { class: 'button-row' },
          h('button', { type: 'button', class: 'button', 'data-testid': 'boot-retry', text: t('retry'), onclick: done }),
          h('button', { type: 'button', class: 'button accent', 'data-testid': 'boot-sign-in', text: t('sign_in'), onclick: () => openAccountDialog('login') }))));
    };
    const forget = onSessionChange((player) => { if (player) done(); });
    window.addEventListener('langchange', draw);
    function done() {
      forget();
      window.removeEventListener('langchange', draw);
      resolve();
    }
    draw();
  });
}

async function boot() {
  applyI18n(document);
  mountLangSwitch(document.querySelector('.lang-switch'));
  const main = document.getElementById('main');
  window.addEventListener('sessionlost', (event) => {
    toast(event.detail.wasGuest ? t('session_lost_guest') : t('session_lost'), 'error', 8000);
  });
  // From the start: without a session (no guest could be made) the
  // header offers to sign in to an account.
  mountAccountWidget(document.querySelector('.account'));
  for (;;) {
    try {
      await ensureSession();
      break;
    } catch (error) {
      await bootFailed(main, error);
    }
  }
  // The moderators' link only for those with the role (the pages and the
  // server check it again).
  const modLink = document.querySelector('[data-nav="mod"]');
  const showModLink = () => { modLink.hidden = !['moderator', 'admin'].includes(currentRole()); };
  showModLink();
  onSessionChange(showModLink);
  let playerId = currentPlayer()?.id;
  onSessionChange((player) => {
    if (!player || player.id === playerId) return;
    playerId = player.id;
    reload();
  });
  startRouter(main);
}

boot();
