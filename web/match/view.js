// The game screen: the two players around the board, whose turn it is,
// the clocks, the opponent's connection, the buttons that apply now, and
// the result. Built once; `update` redraws it from the game model, so a
// language switch or a resync is just another update.

import { h, setText, svg } from '../dom.js';
import { t } from '../i18n.js';
import { createBoard } from '../board.js';
import { createPanel } from '../panel.js';
import { webglAvailable } from '../webgl.js';
import { clock, hasStores, number, reasonText, seatName, signed, timeControlLabel, variantName } from '../format.js';
import { betweenPeople, clockValues, countdownLeft, hasAi, isHotseat, isLive, isPlayer } from './model.js';
import { showAnalysis } from './analysis.js';
import { canPlayAgain } from './again.js';
import { reportButton } from '../report.js';

function button(testid, onclick, extra = {}) {
  return h('button', { type: 'button', class: 'button', 'data-testid': testid, onclick, ...extra });
}

export function createGameView({ onPlay, onAction }) {
  const board = createBoard({ onPlay });
  const panel = createPanel({ onPlay });
  // The 3D board where WebGL works, loaded only then (three.js is large);
  // until it is ready, and wherever it is not, the flat board.
  let board3d = null;
  let drawnView = null;
  let destroyed = false;
  if (webglAvailable()) {
    import('../board3d.js').then(({ attach3d }) => {
      if (destroyed) return;
      board3d = attach3d(board);
      if (board3d && drawnView) board3d.update(drawnView);
    }).catch(() => { /* the flat board stays */ });
  }

  const title = h('h1', { class: 'game-title', 'data-testid': 'game-title' });
  const badges = h('div', { class: 'game-badges' });
  const watcherCount = h('span', { class: 'watcher-count' });
  const eye = svg('svg', { viewBox: '0 0 24 24', 'aria-hidden': 'true' },
    svg('path', { d: 'M1.5 12S5.5 5 12 5s10.5 7 10.5 7-4 7-10.5 7S1.5 12 1.5 12z', fill: 'none', stroke: 'currentColor', 'stroke-width': '2' }),
    svg('circle', { cx: '12', cy: '12', r: '3.2', fill: 'currentColor' }));
  const watchers = h('span', { class: 'watchers', 'data-testid': 'watchers', role: 'img' }, eye, watcherCount);
  const conn = h('div', { class: 'conn-banner', 'data-testid': 'conn', hidden: true });

  function playerBar(where) {
    const name = h('a', { class: 'player-name', 'data-testid': `name-${where}` });
    const tag = h('span', { class: 'player-tag', 'data-testid': `tag-${where}` });
    const dot = h('span', { class: 'presence-dot', 'data-testid': `online-${where}` });
    const clockEl = h('span', { class: 'clock', 'data-testid': `clock-${where}`, role: 'timer' });
    const bar = h('div', { class: `player-bar ${where}` },
      h('div', { class: 'player-who' }, dot, name, tag), clockEl);
    return { bar, name, tag, dot, clock: clockEl };
  }
  const topBar = playerBar('top');
  const bottomBar = playerBar('bottom');

  const turn = h('p', { class: 'turn', 'data-testid': 'turn', 'aria-live': 'polite' });
  const extra = h('span', { class: 'extra-turn', 'data-testid': 'extra-turn', hidden: true });
  const presence = h('p', { class: 'presence-note', 'data-testid': 'presence', hidden: true, 'aria-live': 'polite' });

  const result = h('section', { class: 'result', 'data-testid': 'result', hidden: true, 'aria-live': 'polite' },
    h('h2', { class: 'result-title' }),
    h('p', { class: 'result-score' }),
    h('p', { class: 'result-reason' }),
    h('div', { class: 'result-rating', 'data-testid': 'rating-change' }),
    h('div', { class: 'result-analysis', 'data-testid': 'analysis' }),
    h('div', { class: 'result-report' }));
  // The game whose analysis the result shows (asked for once).
  let analysed = null;

  const offer = h('p', { class: 'offer-note', 'data-testid': 'rematch-offer', hidden: true });
  const notice = h('p', { class: 'offer-note', 'data-testid': 'game-notice', hidden: true });

  const buttons = {
    undo: button('undo', () => onAction('undo')),
    hint: button('hint', () => onAction('hint')),
    berserk: button('berserk', () => onAction('berserk'), { class: 'button accent' }),
    newGame: button('new-game', () => onAction('new-game')),
    chooseAgain: button('choose-again', () => onAction('choose-again'), { class: 'button ghost' }),
    rematch: button('rematch', () => onAction('rematch')),
    next: h('a', { class: 'button', 'data-testid': 'next-game' }),
    continueAi: button('continue-ai', () => onAction('continue_vs_ai')),
    claim: button('claim-victory', () => onAction('claim_victory'), { class: 'button accent' }),
    resign: button('resign', () => onAction('resign'), { class: 'button ghost danger-text' }),
    // Leaving a finished friend's game is leaving its room for good.
    lobby: h('a', { class: 'button ghost', href: '/lobby', 'data-testid': 'back-lobby', onclick: () => onAction('leave_room') }),
  };
  const actions = h('div', { class: 'game-actions' }, Object.values(buttons));

  const boardWrap = h('div', { class: 'board-wrap' }, topBar.bar, board.el, bottomBar.bar);
  const boardArea = h('div', { class: 'board-area' }, boardWrap, panel.el);
  const el = h('section', { class: 'game-page', 'data-testid': 'game' },
    h('header', { class: 'game-head' }, h('div', { class: 'game-heading' }, title, badges), watchers),
    conn,
    boardArea,
    h('div', { class: 'turn-line' }, turn, extra),
    presence,
    offer,
    notice,
    result,
    actions);

  let lastGame = null;
  let lastCtx = null;

  function owner(game, seat, ctx) {
    if (isHotseat(game)) return t('player_n', { n: seat + 1 });
    if (ctx.watching) return seatName(game.seats[seat]);
    return seat === game.you ? t('owner_you') : t('owner_opponent');
  }

  // Whose store: yours and the opponent's to a player, names otherwise.
  function storeLabel(game, seat, ctx) {
    const what = hasStores(game.variant) ? 'store' : 'captured';
    if (!ctx.watching && isPlayer(game) && !isHotseat(game)) return t(seat === game.you ? `${what}_yours` : `${what}_theirs`);
    return t(`${what}_named`, { name: nameOf(game, seat) });
  }

  // The side that had no stones and passed: the one that is not to move.
  function passedText(game, ctx) {
    const seat = 1 - game.turn;
    if (!ctx.watching && isPlayer(game) && !isHotseat(game)) return t(seat === game.you ? 'passed_you' : 'passed_opponent');
    return t('passed_named', { name: nameOf(game, seat) });
  }

  function nameOf(game, seat) {
    if (isHotseat(game)) return t('player_n', { n: seat + 1 });
    return seatName(game.seats[seat]);
  }

  function fillBar(part, game, seat, ctx) {
    const info = game.seats[seat];
    setText(part.name, nameOf(game, seat));
    if (info.player && !isHotseat(game)) part.name.setAttribute('href', `/player/${info.player}`);
    else part.name.removeAttribute('href');
    const tags = [];
    if (!ctx.watching && seat === game.you && !isHotseat(game)) tags.push(t('tag_you'));
    // Once the game is rated, the rating it left, not the one it began with
    // (which the result line shows beside it).
    const change = game.ratingChanges?.find((c) => c.seat === seat);
    if (change) tags.push(`${number(change.after)} (${signed(change.after - change.before)})`);
    else if (info.rating !== null && info.rating !== undefined && game.rated) tags.push(number(info.rating));
    setText(part.tag, tags.join(' · '));
    part.tag.hidden = tags.length === 0;
    const people = betweenPeople(game);
    part.dot.hidden = !people;
    // Our own socket down, we know nothing of theirs: no green dot.
    const online = Boolean(ctx.online && game.connected[seat]);
    part.dot.classList.toggle('on', online);
    part.dot.setAttribute('aria-label', online ? t('online') : t('offline'));
    part.dot.setAttribute('role', 'img');
    part.bar.classList.toggle('to-move', isLive(game) && game.turn === seat);
  }

  function turnText(game, ctx) {
    if (ctx.pending) return t('sending_move');
    if (!isLive(game)) return game.status === 'aborted' ? t('status_aborted') : t('status_over');
    if (game.turn === null) return '';
    if (isHotseat(game)) return t(game.extra ? 'turn_named_extra' : 'turn_named', { name: t('player_n', { n: game.turn + 1 }) });
    if (ctx.watching || !isPlayer(game)) return t(game.extra ? 'turn_named_extra' : 'turn_named', { name: seatName(game.seats[game.turn]) });
    if (game.turn === game.you) return t(game.extra ? 'turn_you_extra' : 'turn_you');
    if (game.seats[game.turn].ai) return t('turn_ai');
    return t(game.extra ? 'turn_opponent_extra' : 'turn_opponent');
  }

  // An abort before each side moved says why it counts for nothing.
  function reasonLine(over) {
    const reason = reasonText(over.reason);
    if (over.result !== 'aborted' || over.reason === 'room_closed') return reason;
    return `${reason} ${t('result_aborted_note')}`.trim();
  }

  function noticeText(game, ctx, player) {
    if (game.roomLeft !== null) return ctx.watching || !player ? t('room_left_watch') : t(game.roomLeft === game.you ? 'room_left_watch' : 'room_left_note');
    if (!ctx.watching && !player && game.seats.some((seat) => seat.ai && seat.player === ctx.me)) return t('replaced_note');
    if (game.casualReason === 'pair_limit') return t('casual_pair_limit');
    if (game.casualReason === 'in_ranked_game') return t('casual_in_ranked_game');
    if (ctx.roomClosed && !isLive(game)) return t('room_closed_note');
    return '';
  }

  function resultText(game, ctx) {
    const over = game.result;
    if (!over) return { title: '', score: '' };
    // The bottom seat's score first, as the board reads.
    const score = `${over.score[ctx.bottom]} – ${over.score[1 - ctx.bottom]}`;
    if (over.result === 'aborted') return { title: t('result_aborted'), score: '' };
    // After a resignation, a flag or a walk-out the stores say nothing.
    const decided = ['side_empty', 'no_stones', 'majority', 'cannot_feed', 'repetition', 'board_empty'].includes(over.reason);
    const shown = decided ? score : '';
    if (over.result === 'draw') return { title: t('result_draw'), score: shown };
    const winner = over.result === 'p0' ? 0 : 1;
    if (!ctx.watching && isPlayer(game) && !isHotseat(game)) {
      return { title: winner === game.you ? t('result_you_won') : t('result_you_lost'), score: shown, winner };
    }
    return { title: t('result_won', { name: nameOf(game, winner) }), score: shown, winner };
  }

  function ratingLines(game, ctx) {
    if (!game.ratingChanges) return [];
    return game.ratingChanges
      .filter((change) => ctx.watching || isHotseat(game) || change.seat === game.you)
      .map((change) => h('p', { class: 'rating-line' },
        t(ctx.watching ? 'rating_change_named' : 'rating_change_you', { name: nameOf(game, change.seat) }),
        ' ',
        h('strong', { text: `${number(change.before)} → ${number(change.after)}` }),
        ' ',
        h('span', { class: change.after >= change.before ? 'up' : 'down', text: `(${signed(change.after - change.before)})` })));
  }

  function presenceText(game, ctx, now) {
    if (!isLive(game) || !betweenPeople(game)) return { text: '', canAct: false };
    const seats = ctx.watching || !isPlayer(game) ? [0, 1] : [1 - game.you];
    for (const seat of seats) {
      if (game.connected[seat]) continue;
      const who = ctx.watching ? seatName(game.seats[seat]) : t('owner_opponent_short');
      const left = countdownLeft(game.countdown[seat], now);
      if (left === null) return { text: t('presence_waiting', { name: who }), canAct: false };
      if (left > 0) return { text: t('presence_countdown', { name: who, time: clock(left) }), canAct: false };
      return { text: t(ctx.watching ? 'presence_gone_watch' : 'presence_gone', { name: who }), canAct: !ctx.watching };
    }
    return { text: '', canAct: false };
  }

  function tick(now = Date.now()) {
    const game = lastGame;
    const ctx = lastCtx;
    if (!game) return;
    const values = clockValues(game.clocks, now);
    const bottom = ctx.bottom;
    for (const [part, seat] of [[bottomBar, bottom], [topBar, 1 - bottom]]) {
      part.clock.hidden = !game.timeControl;
      if (!game.timeControl) continue;
      const ms = values ? values[seat] : game.timeControl.initial_secs * 1000;
      setText(part.clock, clock(ms));
      part.clock.classList.toggle('running', Boolean(game.clocks && game.clocks.running === seat));
      part.clock.classList.toggle('low', ms < 10_000);
    }
    const note = presenceText(game, ctx, now);
    presence.hidden = !note.text;
    setText(presence, note.text);
    const player = !ctx.watching && isPlayer(game);
    buttons.continueAi.hidden = !(player && note.canAct);
    buttons.claim.hidden = !(player && note.canAct);
  }

  function update(game, ctx) {
    lastGame = game;
    lastCtx = ctx;
    const hotseat = isHotseat(game);
    const player = !ctx.watching && isPlayer(game);
    const live = isLive(game);
    const aiGame = hasAi(game);

    el.dataset.id = game.id;
    el.dataset.ply = String(game.ply);
    el.dataset.version = String(game.version);
    el.dataset.status = game.status;
    el.dataset.turn = game.turn === null ? '' : String(game.turn);
    el.dataset.you = game.you === null ? '' : String(game.you);
    el.dataset.mode = ctx.watching ? 'watch' : hotseat ? 'hotseat' : 'play';

    setText(title, variantName(game.variant));
    const badgeTexts = [timeControlLabel(game.timeControl)];
    if (game.rated) badgeTexts.push(t('rated'));
    else badgeTexts.push(t('casual'));
    if (hotseat) badgeTexts.push(t('hotseat_badge'));
    else if (game.room) badgeTexts.push(t('friend_badge'));
    if (ctx.watching && live) badgeTexts.push(t('live_badge'));
    badges.replaceChildren(...badgeTexts.map((text) => h('span', { class: 'badge', text })));
    setText(watcherCount, String(game.watchers));
    watchers.dataset.count = String(game.watchers);
    watchers.setAttribute('aria-label', t('watchers_aria', { n: game.watchers }));

    const bottom = ctx.bottom;
    fillBar(bottomBar, game, bottom, ctx);
    fillBar(topBar, game, 1 - bottom, ctx);

    const drawn = {
      board: game.board,
      bottom,
      variant: game.variant,
      playableSeat: ctx.playableSeat,
      legal: game.legal,
      last: game.last,
      owner: (seat) => owner(game, seat, ctx),
      storeLabel: (seat) => storeLabel(game, seat, ctx),
    };
    board.update(drawn);
    panel.update(drawn);
    drawnView = drawn;
    board3d?.update(drawn);

    setText(turn, turnText(game, ctx));
    turn.classList.toggle('mine', ctx.playableSeat !== null && ctx.playableSeat !== undefined);
    // "One more" is Kalah's extra turn; the same side moving again anywhere
    // else means the other side had nothing to play.
    extra.hidden = !(live && (game.extra || game.passed));
    extra.classList.toggle('passed', Boolean(game.passed));
    setText(extra, game.passed ? passedText(game, ctx) : t('one_more'));

    const summary = resultText(game, ctx);
    result.hidden = live;
    result.classList.toggle('won', !ctx.watching && !hotseat && summary.winner === game.you);
    setText(result.querySelector('.result-title'), summary.title);
    setText(result.querySelector('.result-score'), summary.score);
    setText(result.querySelector('.result-reason'), game.result ? reasonLine(game.result) : '');
    result.querySelector('.result-rating').replaceChildren(...ratingLines(game, ctx));
    // A person I played against can be reported, naming this game.
    const opponent = game.you === null || game.you === undefined ? null : game.seats[1 - game.you];
    const reportable = !live && !ctx.watching && !hotseat && opponent?.player && !opponent.ai;
    result.querySelector('.result-report').replaceChildren(
      reportable ? reportButton({ id: opponent.player, name: opponent.name }, { game: game.id }) : '');
    if (!live && game.result && game.result.result !== 'aborted' && analysed !== game.id) {
      analysed = game.id;
      showAnalysis(result.querySelector('.result-analysis'), game.id, [nameOf(game, 0), nameOf(game, 1)]);
    }

    // Only where the server allows it (made against the AI, or one device;
    // a seat an AI took over does not count), and enabled only when the
    // server says there is a move of the player's to take back.
    const canTakeBack = player && live && (hotseat || game.againstAi);
    buttons.undo.hidden = !canTakeBack;
    buttons.undo.disabled = !game.undoable || Boolean(ctx.pending);
    setText(buttons.undo, t('undo'));
    // Hints where nobody else is playing (never rated), on the player's
    // turn; the hinted pit is marked on the board and the panel.
    // Berserk: in an arena's game, before my own first move, once.
    const mine = game.you;
    const notMovedYet = mine === 0 ? game.ply === 0 : game.ply <= 1;
    buttons.berserk.hidden = !(player && live && game.tournament && mine !== null && mine !== undefined
      && !game.berserk[mine] && notMovedYet && (game.timeControl?.initial_secs ?? 0) >= 60);
    setText(buttons.berserk, t('berserk'));
    buttons.hint.hidden = !canTakeBack || game.rated;
    buttons.hint.disabled = ctx.playableSeat === null || ctx.playableSeat === undefined;
    setText(buttons.hint, t('hint'));
    const hinted = ctx.hintPit === null || ctx.hintPit === undefined ? null : ctx.hintPit;
    for (const pit of el.querySelectorAll('[data-hint]')) delete pit.dataset.hint;
    if (hinted !== null) {
      for (const prefix of ['pit', 'panel-pit']) {
        const pit = el.querySelector(`[data-testid="${prefix}-${ctx.playableSeat}-${hinted}"]`);
        if (pit) pit.dataset.hint = 'true';
      }
    }

    // A game the player made for themselves (against the AI, one device)
    // can be started again or chosen again at any time, as the product's
    // seed has it; a live one is given up first (the page asks).
    const again = player && canPlayAgain(game);
    buttons.newGame.hidden = !(again && !game.rematch);
    setText(buttons.newGame, t('new_game'));
    buttons.chooseAgain.hidden = !again;
    setText(buttons.chooseAgain, t('choose_again'));

    const people = player && !hotseat && !aiGame;
    const roomOpen = game.roomLeft === null && !ctx.roomClosed && game.result?.reason !== 'room_closed' && Boolean(ctx.online);
    // Against the AI the sides-swapped rematch starts at once: the other
    // way to play again after the end.
    const aiRematch = player && game.againstAi && !hotseat && !live && !game.rematch && Boolean(ctx.online);
    buttons.rematch.hidden = !((people && !live && !game.rematch && roomOpen) || aiRematch);
    const iOffered = game.offer === game.you;
    const theyOffered = game.offer !== null && game.offer !== undefined && !iOffered;
    buttons.rematch.disabled = iOffered;
    setText(buttons.rematch, theyOffered ? t('rematch_accept') : iOffered ? t('rematch_offered') : t('rematch_swap'));
    offer.hidden = !(people && theyOffered && !game.rematch && roomOpen);
    setText(offer, t('rematch_offer_note'));
    const note = noticeText(game, ctx, player);
    notice.hidden = !note;
    setText(notice, note);

    buttons.next.hidden = !game.rematch;
    if (game.rematch) buttons.next.setAttribute('href', ctx.watching ? `/watch/${game.rematch}` : `/game/${game.rematch}`);
    setText(buttons.next, t('next_game'));

    buttons.resign.hidden = !(player && live);
    setText(buttons.resign, t('resign'));
    setText(buttons.continueAi, t('continue_vs_ai'));
    setText(buttons.claim, t('claim_victory'));
    buttons.lobby.hidden = player && live;
    setText(buttons.lobby, t('back_to_lobby'));

    tick();
  }

  function setConnection(status) {
    const down = status === 'reconnecting' || status === 'closed';
    conn.hidden = !down;
    setText(conn, down ? t('reconnecting') : '');
  }

  function showFatal(message) {
    el.replaceChildren(h('div', { class: 'card narrow' },
      h('p', { class: 'error-text', 'data-testid': 'game-error', text: message }),
      h('a', { class: 'button', href: '/lobby', text: t('back_to_lobby') })));
  }

  // Leaving the page: the 3D board gives its WebGL context back (a browser
  // keeps only a few, and a player goes from game to game).
  function destroy() {
    destroyed = true;
    board3d?.dispose();
  }

  return { el, update, tick, setConnection, showFatal, focusPit: board.focusPit, destroy };
}
