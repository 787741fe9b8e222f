// Two friends play a whole Kalah game through an invite link while a third
// person watches it live; at the end all three see the same board.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  DESKTOP, PHONE, assertNoPageErrors, launch, newPage, playablePits, readGame, shoot, waitForGame, waitPastPly,
} from '../lib/harness.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('an invited friend and the inviter play Kalah to the end while a third watches', { timeout: 90_000 }, async () => {
  const alice = await newPage(browser, { viewport: DESKTOP });
  const bob = await newPage(browser, { viewport: PHONE });
  const carol = await newPage(browser, { viewport: PHONE });

  // Alice makes an invite from the lobby and lands on her waiting page.
  await alice.goto('/lobby');
  await alice.getByTestId('invite-variant').selectOption('kalah');
  await alice.getByTestId('invite-create').click();
  await alice.waitForURL(/\/invite\/[A-Za-z0-9_-]+$/);
  const url = await alice.getByTestId('invite-url').inputValue();
  assert.equal(url, alice.url(), 'the link shown is this page, built from the page origin');
  await alice.getByTestId('invite-waiting').waitFor();
  await shoot(alice, '1-invite-link');

  // Bob opens the link, sees who invites him, and joins.
  await bob.goto(url);
  const aliceName = await alice.getByTestId('me').getAttribute('title');
  await assert.doesNotReject(bob.getByTestId('invite-title').filter({ hasText: aliceName }).waitFor());
  await shoot(bob, '1-invite-join');
  await bob.getByTestId('invite-join').click();
  const bobStart = await waitForGame(bob);
  assert.equal(bobStart.you, 1, 'the friend who joins moves second');
  assert.equal(bobStart.bottom, 1, "the board turns so Bob's row is at the bottom");

  // Alice's page notices the game by itself.
  const aliceStart = await waitForGame(alice);
  assert.equal(alice.url(), bob.url(), 'both play the same game');
  assert.equal(aliceStart.you, 0);
  assert.equal(aliceStart.bottom, 0);
  assert.deepEqual(aliceStart.pits, [[4, 4, 4, 4, 4, 4], [4, 4, 4, 4, 4, 4]]);
  await assert.doesNotReject(alice.getByTestId('turn').filter({ hasText: 'Your turn' }).waitFor());

  // Carol watches from the start.
  const gameId = alice.url().split('/').pop();
  await carol.goto(`/watch/${gameId}`);
  const watched = await waitForGame(carol);
  assert.equal(watched.you, null, 'a watcher holds no seat');
  assert.equal(watched.bottom, 0, 'watchers see seat 0 at the bottom');
  await alice.waitForFunction(() => Number(document.querySelector('[data-testid="watchers"]').dataset.count) >= 1);

  // Both click legal pits on their turn until the game ends.
  let moves = 0;
  let checkedLastMove = false;
  const deadline = Date.now() + 60_000;
  for (;;) {
    assert.ok(Date.now() < deadline, 'the game should end within a minute');
    const [a, b] = await Promise.all([readGame(alice), readGame(bob)]);
    if (a.status !== 'live' && b.status !== 'live') break;
    let moved = false;
    for (const [page, state] of [[alice, a], [bob, b]]) {
      if (state.status !== 'live' || state.turn !== state.you) continue;
      const pits = playablePits(page);
      const count = await pits.count();
      if (count === 0) continue;
      const pit = pits.nth(Math.floor(Math.random() * count));
      const testid = await pit.getAttribute('data-testid');
      assert.match(testid, new RegExp(`^pit-${state.you}-[1-6]$`), 'only your own pits are playable');
      await pit.click();
      await waitPastPly(page, state.ply);
      moves += 1;
      moved = true;
      if (!checkedLastMove) {
        // The other player sees that pit marked as the last move.
        const other = page === alice ? bob : alice;
        await other.waitForFunction((id) => document.querySelector(`[data-testid="${id}"]`).dataset.last === 'true', testid);
        checkedLastMove = true;
      }
      if (moves === 6) await shoot(alice, '1-game-playing');
      break;
    }
    if (!moved) await alice.waitForTimeout(30);
  }
  assert.ok(moves >= 6, `a Kalah game takes several moves (took ${moves})`);

  // Everyone sees the result; the watcher's board matches the players'.
  for (const page of [alice, bob, carol]) await page.getByTestId('result').waitFor();
  await carol.waitForFunction(() => document.querySelector('[data-testid="game"]').dataset.status !== 'live');
  const [endA, endB, endC] = await Promise.all([readGame(alice), readGame(bob), readGame(carol)]);
  assert.equal(endA.status, 'over');
  assert.deepEqual(endB.pits, endA.pits);
  assert.deepEqual(endB.stores, endA.stores);
  assert.deepEqual(endC.pits, endA.pits, "the watcher's pits match the players'");
  assert.deepEqual(endC.stores, endA.stores, "the watcher's stores match the players'");
  assert.equal(endC.ply, endA.ply);
  assert.equal(endA.stores[0] + endA.stores[1] + endA.pits.flat().reduce((x, y) => x + y, 0), 48, 'stones are conserved');

  const titles = await Promise.all([alice, bob].map((page) => page.locator('[data-testid="result"] .result-title').textContent()));
  const [s0, s1] = endA.stores;
  if (s0 === s1) assert.deepEqual(titles, ['Draw', 'Draw']);
  else if (s0 > s1) assert.deepEqual(titles, ['You won!', 'You lost']);
  else assert.deepEqual(titles, ['You lost', 'You won!']);
  const watcherTitle = await carol.locator('[data-testid="result"] .result-title').textContent();
  assert.match(watcherTitle, /won|Draw/);
  await assert.doesNotReject(alice.getByTestId('rematch').waitFor(), 'a friend game offers a rematch with sides swapped');

  await shoot(alice, '1-game-result');
  await shoot(bob, '1-game-result-second');
  await shoot(carol, '1-watch-result');

  // Alice's connection drops: she sees no green dot for Bob (she cannot
  // know) and no rematch (it could not reach him); both come back with it.
  assert.match(await alice.getByTestId('online-top').getAttribute('class'), /\bon\b/);
  await alice.context().setOffline(true);
  await alice.getByTestId('rematch').waitFor({ state: 'hidden' });
  assert.doesNotMatch(await alice.getByTestId('online-top').getAttribute('class'), /\bon\b/);
  await alice.context().setOffline(false);
  await assert.doesNotReject(alice.getByTestId('rematch').waitFor());
  await alice.waitForFunction(() => document.querySelector('[data-testid="online-top"]').classList.contains('on'));

  // Bob goes back to the lobby: he has left the room, and Alice can no
  // longer start a game with him in it.
  await bob.getByTestId('back-lobby').click();
  await bob.waitForURL(/\/lobby$/);
  await assert.doesNotReject(alice.getByTestId('game-notice').filter({ hasText: 'Your opponent left the room.' }).waitFor());
  await alice.getByTestId('rematch').waitFor({ state: 'hidden' });
  await shoot(alice, '1-room-left');
  assertNoPageErrors(alice, bob, carol);
});
