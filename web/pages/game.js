// /game/{id} (a seat) and /watch/{id} (anyone): the socket, the model and
// the view wired together, plus what the buttons do.

import { h } from '../dom.js';
import { t } from '../i18n.js';
import { currentPlayer, forceRefresh, freshToken, post } from '../api.js';
import { CLOSE, LiveSocket } from '../socket.js';
import { navigate } from '../router.js';
import { errorMessage, seatName, variantName } from '../format.js';
import { confirmDialog, toast, toastError } from '../ui.js';
import { apply, fromState, isHotseat, isLive, isPlayer } from '../match/model.js';
import { againPath, againRequest } from '../match/again.js';
import { createGameView } from '../match/view.js';
import { turnFocus } from '../turn-focus.js';

const AUTH_ERRORS = new Set(['token_expired', 'token_invalid', 'unauthenticated']);
const MOVE_ERRORS = new Set(['pit_out_of_range', 'empty_pit', 'must_feed', 'not_your_turn', 'game_over', 'stale_ply', 'not_allowed']);

export function mount(root, { id, mode }) {
  const watching = mode === 'watch';
  let game = null;
  let pending = null; // the ply of a move sent and not yet acknowledged
  let pendingTimer = null;
  let hint = null; // the engine's move asked for: {ply, pit}
  let needFreshToken = false;
  let busy = false;
  // The server has accepted this socket (a `state` came): only then may
  // pits be played, since a move sent into a dying socket is lost.
  let joined = false;
  // The server closed the game's room for good (close 4002): no rematch,
  // no reconnecting.
  let roomClosed = false;

  const view = createGameView({ onPlay: play, onAction: act });
  const loading = h('p', { class: 'page-loading', 'data-testid': 'game-loading', text: t('connecting') });
  root.append(loading);
  // A tournament game: the way back, taken by itself once the game is
  // over (the tournament page is where the next pairing finds me).
  const tournament = new URLSearchParams(location.search).get('tournament');
  let backTimer = null;
  if (tournament && !watching) {
    root.prepend(h('a', { class: 'button small ghost back-to-tournament', href: `/tournament/${encodeURIComponent(tournament)}`, 'data-testid': 'back-to-tournament', text: t('back_to_tournament') }));
  }

  const socket = new LiveSocket({
    path: `/v1/games/${encodeURIComponent(id)}/${watching ? 'watch' : 'play'}`,
    hello: async () => {
      const greeting = [];
      if (!watching) {
        const token = needFreshToken ? await forceRefresh() : await freshToken();
        needFreshToken = false;
        greeting.push({ t: 'auth', d: { token } });
      }
      if (game) greeting.push({ t: 'sync', d: { since: game.version } });
      return greeting;
    },
    onMessage,
    onStatus: (status, detail) => {
      if (status === 'open') return;
      const wasJoined = joined;
      joined = false;
      roomClosed = roomClosed || detail?.code === CLOSE.roomClosed;
      view.setConnection(roomClosed ? 'ended' : status);
      if (wasJoined || roomClosed) render();
    },
  });
  socket.start();

  const ticker = setInterval(() => view.tick(), 250);
  const focus = turnFocus();

  function context() {
    const bottom = watching || game.you === null ? 0 : game.you;
    let playableSeat = null;
    if (!watching && joined && isPlayer(game) && isLive(game) && pending === null && game.turn !== null) {
      if (isHotseat(game)) playableSeat = game.turn;
      else if (game.turn === game.you && !game.seats[game.turn].ai) playableSeat = game.you;
    }
    // A hint counts only for the ply it was asked for.
    const hintPit = hint && playableSeat !== null && hint.ply === game.ply + 1 ? hint.pit : null;
    return { watching, bottom, playableSeat, pending: pending !== null, me: currentPlayer()?.id ?? null, online: joined, roomClosed, hintPit };
  }

  function render() {
    if (!game) return;
    if (!view.el.isConnected) {
      loading.remove();
      root.append(view.el);
    }
    const ctx = context();
    // Only a seat of my own against someone else counts (on one device the
    // page is shared; against the AI nothing is at stake).
    focus.update(ctx.playableSeat !== null && !isHotseat(game) && !game.againstAi);
    view.update(game, ctx);
    if (tournament && !watching && !isLive(game) && backTimer === null) {
      backTimer = setTimeout(() => navigate(`/tournament/${encodeURIComponent(tournament)}`), 3_000);
    }
    const names = game.seats.map(seatName).join(' – ');
    document.title = `${variantName(game.variant)}: ${names} · Mancala Arena`;
  }

  function clearPending() {
    pending = null;
    clearTimeout(pendingTimer);
  }

  function onMessage(message) {
    switch (message.t) {
      case 'state': {
        const before = game;
        game = fromState(message.d);
        joined = true;
        view.setConnection('open');
        clearPending();
        render();
        if (!isLive(game)) onEnded?.();
        // A watcher whose socket was down when the players started their
        // next game learns of it from the game as loaded again.
        if (watching && before && !before.rematch && game.rematch) follow(game.rematch);
        return;
      }
      case 'error':
        onError(message.d || {});
        return;
      case 'elsewhere':
        socket.moveTo(message.d?.url);
        return;
      case 'hint':
        hint = message.d;
        render();
        return;
      case 'rematch':
        if (!watching && game && isPlayer(game)) {
          navigate(`/game/${message.d.game_id}`);
          return;
        }
        if (watching && message.d?.game_id) {
          follow(message.d.game_id);
          return;
        }
        break;
      default:
        break;
    }
    if (!game) return;
    const { game: next, resync } = apply(game, message);
    if (resync) {
      socket.send({ t: 'sync', d: { since: game.version } });
      return;
    }
    if (message.t === 'moved' && pending !== null && message.d.ply >= pending) clearPending();
    if (message.t === 'undone' || message.t === 'over') clearPending();
    game = next;
    render();
    if (!isLive(game)) onEnded?.();
  }

  // The players started their next game (a rematch): a watcher goes
  // along to watch it, and is told why the page changed.
  let followed = false;
  function follow(next) {
    if (followed || next === id) return;
    followed = true;
    toast(t('watch_rematch'));
    navigate(`/watch/${encodeURIComponent(next)}`);
  }

  function onError(error) {
    const code = error.code;
    if (AUTH_ERRORS.has(code)) {
      // The server closes now; the next hello brings a new token.
      needFreshToken = true;
      return;
    }
    if (code === 'forbidden' && !watching) {
      // Not seated in this game (an invite someone else took): watch it.
      navigate(`/watch/${id}`, { replace: true });
      return;
    }
    if (code === 'not_found') {
      socket.stop();
      view.showFatal(t('err_game_not_found'));
      if (!view.el.isConnected) {
        loading.remove();
        root.append(view.el);
      }
      return;
    }
    if (MOVE_ERRORS.has(code)) clearPending();
    if (code !== 'stale_ply') toastError(error);
    render();
  }

  function play(seat, pit) {
    if (!game || pending !== null) return;
    const ctx = context();
    if (ctx.playableSeat !== seat || !game.legal.includes(pit)) return;
    const ply = game.ply + 1;
    const move = { pit, ply };
    if (!isHotseat(game) && !game.againstAi) move.hidden_ms = focus.take();
    if (!socket.send({ t: 'move', d: move })) {
      toast(t('reconnecting'), 'error');
      return;
    }
    pending = ply;
    // No answer: the line is likely dead; the resync on reconnect decides.
    pendingTimer = setTimeout(() => { pending = null; render(); }, 8000);
    render();
  }

  async function act(action) {
    if (!game || busy) return;
    switch (action) {
      case 'resign':
        if (await confirmDialog(t('confirm_resign'), { ok: t('resign'), danger: true })) socket.send({ t: 'resign' });
        return;
      case 'undo':
        socket.send({ t: 'undo' });
        return;
      case 'hint':
        socket.send({ t: 'hint' });
        return;
      case 'berserk':
        socket.send({ t: 'berserk' });
        return;
      case 'rematch':
        socket.send({ t: 'rematch' });
        return;
      case 'continue_vs_ai':
      case 'claim_victory':
        socket.send({ t: action });
        return;
      case 'leave_room':
        // Going back to the lobby from a finished friend's game leaves
        // its room for good; from anywhere else it is only navigation.
        if (game.room && !isLive(game) && !game.rematch && game.roomLeft === null && isPlayer(game)) socket.send({ t: 'leave_room' });
        return;
      case 'new-game':
        await startAgain();
        return;
      case 'choose-again':
        await chooseAgain();
        return;
      default:
        return;
    }
  }

  // Settles `untilOver`'s promise once the game has ended.
  let onEnded = null;

  function untilOver(ms = 5000) {
    return new Promise((resolve) => {
      const timer = setTimeout(() => onEnded?.(), ms);
      onEnded = () => {
        clearTimeout(timer);
        onEnded = null;
        resolve();
      };
    });
  }

  // Leaving a live game for another way to play gives it up first, so it
  // does not linger as a live game: asked as resigning is, once moves were
  // made, and awaited (the server's `over`) so the next page finds it
  // over. False when the player thought better of it or the line is down.
  async function endBeforeLeaving(question, ok) {
    if (!isLive(game)) return true;
    if (game.ply > 0 && !(await confirmDialog(question, { ok, danger: true }))) return false;
    if (!isLive(game)) return true;
    const over = untilOver();
    if (!socket.send({ t: 'resign' })) {
      onEnded();
      toast(t('reconnecting'), 'error');
      return false;
    }
    await over;
    return true;
  }

  // "Start again": the same game afresh (variant, stones, the AI's level,
  // the same side, the clock), during the game or after it.
  async function startAgain() {
    const request = againRequest(game);
    if (!request) return;
    busy = true;
    try {
      if (!(await endBeforeLeaving(t('confirm_new_game'), t('new_game')))) return;
      const answer = await post(request.path, request.body);
      navigate(`/game/${answer.game_id}`);
    } catch (error) {
      toast(errorMessage(error), 'error');
    } finally {
      busy = false;
    }
  }

  // "Choose how to play again": the lobby, with this game's card filled in.
  async function chooseAgain() {
    busy = true;
    try {
      if (await endBeforeLeaving(t('confirm_choose_again'), t('choose_again'))) navigate(againPath(game));
    } finally {
      busy = false;
    }
  }

  function onKey(event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target.closest?.('input, textarea, select, dialog')) return;
    const pit = Number(event.key);
    if (!game || !(pit >= 1 && pit <= 6)) return;
    const seat = context().playableSeat;
    if (seat === null) return;
    event.preventDefault();
    play(seat, pit);
  }
  document.addEventListener('keydown', onKey);

  return {
    destroy() {
      socket.stop();
      clearInterval(ticker);
      focus.stop();
      clearTimeout(pendingTimer);
      document.removeEventListener('keydown', onKey);
      clearTimeout(backTimer);
      view.destroy();
    },
    relabel() {
      if (game) render();
      else loading.textContent = t('connecting');
    },
  };
}
