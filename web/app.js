// Start-up: language, the guest session every visitor gets, the header,
// then the page for the address.

import { applyI18n, getLang, setLang, t } from './i18n.js';
import { currentPlayer, currentRole, ensureSession, onSessionChange } from './api.js';
import { mountAccountWidget } from './account.js';
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

async function boot() {
  applyI18n(document);
  mountLangSwitch(document.querySelector('.lang-switch'));
  const main = document.getElementById('main');
  window.addEventListener('sessionlost', (event) => {
    toast(event.detail.wasGuest ? t('session_lost_guest') : t('session_lost'), 'error', 8000);
  });
  for (;;) {
    try {
      await ensureSession();
      break;
    } catch (error) {
      // Without a session nothing works: say why and offer to retry.
      await new Promise((resolve) => {
        main.replaceChildren(h('section', { class: 'card narrow' },
          h('p', { class: 'error-text', 'data-testid': 'boot-error', text: errorMessage(error) }),
          h('button', { type: 'button', class: 'button', text: t('retry'), onclick: resolve })));
      });
    }
  }
  mountAccountWidget(document.querySelector('.account'));
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
