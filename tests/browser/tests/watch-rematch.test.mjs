// Someone watching a game between two friends goes along when the
// players start their next game (a rematch, which a casual friend room
// starts when either asks): told so in a line, they watch the new game.
// Either way the watcher hears of it: the `rematch` message on the watch
// socket, or, when their socket was down at that moment, the finished
// game's `state` naming its rematch once it is back.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  DESKTOP, PHONE, assertNoPageErrors, launch, newPage, playablePits, readGame, shoot, sleep, startFriendGame,
  waitForGame, waitPastPly,
} from '../lib/harness.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

// The messages each watch socket of `page` received, in order.
function recordWatchSockets(page) {
  const heard = [];
  page.on('websocket', (socket) => {
    if (!socket.url().includes('/watch')) return;
    socket.on('framereceived', ({ payload }) => {
      try {
        const message = JSON.parse(payload);
        heard.push({ url: socket.url(), t: message.t, d: message.d });
      } catch { /* not JSON */ }
    });
  });
  return heard;
}

// Alice invites Bob, Carol watches; each player moves, then Bob resigns:
// a finished game with both players and the watcher on its page.
async function finishedFriendGame(alice, bob, carol) {
  await startFriendGame(alice, bob, { variant: 'kalah' });
  const gameId = alice.url().split('/').pop();
  await carol.goto(`/watch/${gameId}`);
  await waitForGame(carol);
  let state = await readGame(alice);
  let bobMoved = false;
  while (!(bobMoved && state.turn === 0)) {
    const mover = state.turn === 0 ? alice : bob;
    bobMoved ||= mover === bob;
    await playablePits(mover).first().click();
    await waitPastPly(alice, state.ply);
    state = await readGame(alice);
  }
  await bob.getByTestId('resign').click();
  await bob.getByTestId('confirm-ok').click();
  for (const page of [alice, bob, carol]) await page.getByTestId('result').waitFor();
  await alice.getByTestId('rematch').waitFor();
  return gameId;
}

// Both players at the rematch (seats swapped); its id.
async function playersAtRematch(alice, bob, before) {
  for (const page of [alice, bob]) {
    await page.waitForURL((url) => /\/game\/[0-9a-f-]{36}$/.test(url.pathname) && !url.pathname.endsWith(before));
    await waitForGame(page);
  }
  assert.equal(alice.url(), bob.url(), 'both players at the same next game');
  return alice.url().split('/').pop();
}

test('a watcher follows the players to their rematch, told so (the rematch message)', { timeout: 120_000 }, async () => {
  const alice = await newPage(browser, { viewport: DESKTOP });
  const bob = await newPage(browser, { viewport: DESKTOP });
  const carol = await newPage(browser, { viewport: PHONE, locale: 'ko-KR' });
  const heard = recordWatchSockets(carol);
  const first = await finishedFriendGame(alice, bob, carol);

  await alice.getByTestId('rematch').click();
  const next = await playersAtRematch(alice, bob, first);

  // Carol is taken along, and told why.
  await carol.waitForURL(new RegExp(`/watch/${next}$`));
  await carol.getByTestId('toast-info').filter({ hasText: '두 사람이 새 대국을 시작했습니다.' }).waitFor();
  const watched = await waitForGame(carol);
  assert.equal(watched.status, 'live');
  assert.equal(watched.you, null, 'still a watcher');
  assert.equal(await carol.getByTestId('game').getAttribute('data-mode'), 'watch');
  // Her watch socket was told: the rematch message, naming the next game.
  const told = heard.filter((m) => m.t === 'rematch' && m.url.includes(first));
  assert.equal(told.length, 1, `the watcher's socket heard the rematch: ${JSON.stringify(heard.map((m) => m.t))}`);
  assert.equal(told[0].d.game_id, next);
  await shoot(carol, '52-watch-rematch-ko');

  // The new game's moves reach her (seat 0 moves first: Bob, now).
  const start = await readGame(carol);
  const mover = (await readGame(bob)).you === 0 ? bob : alice;
  await mover.waitForFunction(() => document.querySelector('[data-testid^="pit-"][data-playable="true"]'));
  await playablePits(mover).first().click();
  await waitPastPly(carol, start.ply);
  assertNoPageErrors(alice, bob, carol);
});

test('a watcher whose connection was down at the rematch follows once back (the state names it)', { timeout: 120_000 }, async () => {
  const alice = await newPage(browser, { viewport: PHONE });
  const bob = await newPage(browser, { viewport: PHONE });
  const carol = await newPage(browser, { viewport: DESKTOP });
  const heard = recordWatchSockets(carol);
  const first = await finishedFriendGame(alice, bob, carol);

  await carol.context().setOffline(true);
  await carol.getByTestId('conn').waitFor();
  await alice.getByTestId('rematch').click();
  const next = await playersAtRematch(alice, bob, first);
  // Past the watchers' shared snapshot's second, so a new one is loaded.
  await sleep(1500);
  assert.ok(carol.url().endsWith(`/watch/${first}`), 'still on the finished game while offline');

  await carol.context().setOffline(false);
  await carol.waitForURL(new RegExp(`/watch/${next}$`), { timeout: 30_000 });
  await carol.getByTestId('toast-info').filter({ hasText: 'The players started a new game.' }).waitFor();
  const watched = await waitForGame(carol);
  assert.equal(watched.status, 'live');
  assert.equal(watched.you, null);
  assert.equal(heard.filter((m) => m.t === 'rematch').length, 0, 'no rematch message reached her');
  const states = heard.filter((m) => m.t === 'state' && m.url.includes(first));
  assert.equal(states.at(-1).d.rematch, next, 'the finished game\'s state named its rematch');
  assertNoPageErrors(alice, bob, carol);
});
