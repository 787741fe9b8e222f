// A friend room lives a day. When its day runs out after a game, neither
// player is offered a rematch the server would refuse: both read that the
// room has closed, and the connection dots go grey. The day is cut short
// in the database (the room's `expires_at`), as a day passing would.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import {
  DESKTOP, PHONE, assertNoPageErrors, launch, newPage, playablePits, readGame, shoot, startFriendGame, waitForGame, waitPastPly,
} from '../lib/harness.mjs';

const DATABASE = process.env.ARENA_DATABASE_URL;

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

function expireRoomOf(gameId) {
  execFileSync('psql', [DATABASE, '-qAtc',
    `UPDATE rooms SET expires_at = now() - interval '1 second' WHERE id = (SELECT room_id FROM games WHERE id = '${gameId}')`]);
}

test('a friend room whose day ran out says so and offers no rematch', { timeout: 60_000, skip: !DATABASE && 'ARENA_DATABASE_URL is not set' }, async () => {
  const alice = await newPage(browser, { viewport: DESKTOP });
  const bob = await newPage(browser, { viewport: PHONE });

  const start = await startFriendGame(alice, bob, { variant: 'kalah' });
  const gameId = alice.url().split('/').pop();

  // Each side moves, then Alice resigns: a finished game (not an abort)
  // with both players still on its page.
  let state = start;
  let bobMoved = false;
  while (!(bobMoved && state.turn === 0)) {
    const mover = state.turn === 0 ? alice : bob;
    bobMoved ||= mover === bob;
    await playablePits(mover).first().click();
    await waitPastPly(alice, state.ply);
    state = await readGame(alice);
  }
  await alice.getByTestId('resign').click();
  await alice.getByTestId('confirm-ok').click();
  for (const page of [alice, bob]) await page.getByTestId('rematch').waitFor();

  // The room's day ends. Alice asks for the next game (a casual friend
  // room starts it at once), and the server, finding the room closed,
  // closes the game for both.
  expireRoomOf(gameId);
  await alice.getByTestId('rematch').click();
  for (const page of [alice, bob]) {
    await assert.doesNotReject(page.getByTestId('game-notice').filter({ hasText: 'This room has closed.' }).waitFor());
    await page.getByTestId('rematch').waitFor({ state: 'hidden' });
    assert.doesNotMatch(await page.getByTestId('online-top').getAttribute('class'), /\bon\b/, 'no green dot once the room closed');
  }
  await assert.doesNotReject(alice.getByTestId('back-lobby').waitFor(), 'the way on is the lobby');

  // A reload still offers nothing: the page learns again that the room closed.
  // A reload is told at once (its join is answered, then closed).
  await bob.reload();
  await waitForGame(bob);
  await assert.doesNotReject(bob.getByTestId('game-notice').filter({ hasText: 'This room has closed.' }).waitFor());
  assert.equal(await bob.getByTestId('rematch').isVisible(), false, 'no rematch after a reload');
  await shoot(alice, '9-room-closed');
  await shoot(bob, '9-room-closed-phone');
  assertNoPageErrors(alice, bob);
});
