// /invite/{code}: the friend's landing page ("join") and the inviter's
// waiting room (the link to pass on). The inviter's lobby socket hears
// `invite_accepted` the moment the friend joins; a slow poll of the invite
// covers a socket that cannot connect.

import { h } from '../dom.js';
import { t } from '../i18n.js';
import { currentPlayer, freshToken, get, post } from '../api.js';
import { LiveSocket } from '../socket.js';
import { navigate } from '../router.js';
import { date, errorMessage, timeControlLabel, variantName } from '../format.js';
import { copyText, toast } from '../ui.js';

const POLL_MS = 15_000;

export function mount(root, { code }) {
  let invite = null;
  let error = null;
  let joining = false;
  let destroyed = false;
  let pollTimer = null;
  let socket = null;

  // The inviter waits on the lobby socket for the friend.
  function listen() {
    if (socket) return;
    socket = new LiveSocket({
      path: '/v1/lobby',
      hello: async () => [{ t: 'auth', d: { token: await freshToken() } }],
      onMessage: (message) => {
        if (message.t === 'invite_accepted' && message.d.code === code && !destroyed) {
          navigate(`/game/${message.d.game_id}`, { replace: true });
        }
      },
    });
    socket.start();
  }

  const link = `${location.origin}/invite/${encodeURIComponent(code)}`;

  async function load() {
    try {
      invite = await get(`/v1/invites/${encodeURIComponent(code)}`);
      error = null;
    } catch (e) {
      error = e;
    }
    if (destroyed) return;
    const mine = invite && invite.creator.id === currentPlayer()?.id;
    if (mine && invite.status === 'accepted' && invite.game_id) {
      navigate(`/game/${invite.game_id}`, { replace: true });
      return;
    }
    draw();
    if (mine && invite.status === 'open') {
      listen();
      pollTimer = setTimeout(load, POLL_MS);
    }
  }

  function details() {
    return h('ul', { class: 'invite-details' },
      h('li', { text: `${t('variant')}: ${variantName(invite.variant)}` }),
      h('li', { text: `${t('time_control')}: ${timeControlLabel(invite.time_control)}` }),
      h('li', { text: invite.rated ? t('rated') : t('casual') }),
      invite.status === 'open' ? h('li', { class: 'muted', text: t('invite_expires', { when: date(invite.expires_at) }) }) : null);
  }

  function sharePanel() {
    const input = h('input', { type: 'text', readonly: true, value: link, class: 'invite-url', 'data-testid': 'invite-url', 'aria-label': t('invite_link'), onfocus: (e) => e.target.select() });
    const buttons = [
      h('button', {
        type: 'button', class: 'button', 'data-testid': 'invite-copy', text: t('copy_url'),
        onclick: async () => toast(await copyText(link) ? t('copied') : t('copy_failed'), 'info'),
      }),
    ];
    if (navigator.share) {
      buttons.push(h('button', {
        type: 'button', class: 'button ghost', 'data-testid': 'invite-share', text: t('share'),
        onclick: () => navigator.share({ title: 'Mancala Arena', text: t('share_text', { variant: variantName(invite.variant) }), url: link }).catch(() => {}),
      }));
    }
    return [
      h('h1', { class: 'page-title', text: t('invite_ready_title') }),
      h('p', { text: t('invite_ready_body') }),
      h('div', { class: 'share-row' }, input, h('div', { class: 'share-buttons' }, buttons)),
      details(),
      h('p', { class: 'waiting', 'data-testid': 'invite-waiting' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), h('span', { text: t('invite_waiting') })),
    ];
  }

  async function join(event) {
    if (joining) return;
    joining = true;
    event.currentTarget.disabled = true;
    try {
      const answer = await post(`/v1/invites/${encodeURIComponent(code)}/accept`);
      navigate(`/game/${answer.game_id}`, { replace: true });
    } catch (e) {
      toast(errorMessage(e), 'error');
      // One ranked game at a time: back to the one that is on.
      if (e.code === 'in_ranked_game' && e.gameId) {
        navigate(`/game/${e.gameId}`);
        return;
      }
      joining = false;
      load();
    }
  }

  function guestView() {
    if (invite.status === 'open') {
      return [
        h('h1', { class: 'page-title', 'data-testid': 'invite-title', text: t('invite_from', { name: invite.creator.name, variant: variantName(invite.variant) }) }),
        details(),
        h('p', { class: 'muted', text: t('invite_join_note') }),
        h('button', { type: 'button', class: 'button accent wide', 'data-testid': 'invite-join', text: t('join'), onclick: join }),
      ];
    }
    const used = invite.status === 'accepted';
    return [
      h('h1', { class: 'page-title', text: used ? t('invite_used_title') : t('invite_expired_title') }),
      h('p', { text: used ? t('invite_used_body') : t('invite_expired_body') }),
      used && invite.game_id ? h('a', { class: 'button', href: `/game/${invite.game_id}`, text: t('open_game') }) : null,
      h('a', { class: 'button ghost', href: '/lobby', text: t('back_to_lobby') }),
    ];
  }

  function draw() {
    document.title = `${t('invite_title')} · Mancala Arena`;
    let body;
    if (error) {
      body = [h('h1', { class: 'page-title', text: t('invite_title') }), h('p', { class: 'error-text', 'data-testid': 'invite-error', text: error.code === 'not_found' ? t('invite_not_found') : errorMessage(error) }),
        h('a', { class: 'button', href: '/lobby', text: t('back_to_lobby') })];
    } else if (!invite) {
      body = [h('p', { class: 'page-loading', text: t('loading') })];
    } else if (invite.creator.id === currentPlayer()?.id) {
      body = invite.status === 'open' ? sharePanel() : guestView();
    } else {
      body = guestView();
    }
    root.replaceChildren(h('section', { class: 'card narrow invite', 'data-testid': 'invite' }, body));
  }

  draw();
  load();

  return {
    relabel: draw,
    destroy() {
      destroyed = true;
      clearTimeout(pollTimer);
      socket?.stop();
    },
  };
}
