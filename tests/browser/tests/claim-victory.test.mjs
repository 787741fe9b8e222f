// A friend who walks out of a game: the one left sees the countdown (3 s
// in the test server, 2 minutes in production), then may claim the win,
// and the result says so.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DESKTOP, PHONE, assertNoPageErrors, launch, newPage, shoot, startFriendGame } from '../lib/harness.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

async function playOne(page, seat) {
  await page.waitForFunction((s) => document.querySelector(`[data-testid^="pit-${s}-"][data-playable="true"]`), seat);
  const ply = Number(await page.getByTestId('game').getAttribute('data-ply'));
  await page.locator(`[data-testid^="panel-pit-${seat}-"][data-playable="true"]`).first().click();
  await page.waitForFunction((p) => Number(document.querySelector('[data-testid="game"]').dataset.ply) > p, ply);
}

test('a friend leaves mid-game and the one left claims the win', { timeout: 60_000 }, async () => {
  const alice = await newPage(browser, { viewport: DESKTOP });
  const bob = await newPage(browser, { viewport: PHONE });
  await startFriendGame(alice, bob);
  assert.match(await alice.getByTestId('online-top').getAttribute('class'), /\bon\b/);

  // Each side moves (pit 1 never ends in the store, so the turn passes).
  await alice.getByTestId('panel-pit-0-1').click();
  await playOne(bob, 1);
  await alice.waitForFunction(() => document.querySelector('[data-testid="game"]').dataset.turn === '0');

  // Bob closes his tab.
  await bob.context().close();
  await assert.doesNotReject(alice.getByTestId('presence').filter({ hasText: /left to come back|did not return/ }).waitFor());
  assert.doesNotMatch(await alice.getByTestId('online-top').getAttribute('class'), /\bon\b/);
  const claim = alice.getByTestId('claim-victory');
  await claim.waitFor({ timeout: 15_000 });
  assert.ok(await alice.getByTestId('continue-ai').isVisible(), 'or go on against the AI');
  await shoot(alice, '20-claim-offered');
  await claim.click();
  await alice.getByTestId('result').waitFor();
  assert.equal(await alice.locator('[data-testid="result"] .result-title').textContent(), 'You won!');
  await shoot(alice, '20-claimed');
  assertNoPageErrors(alice);
});

test('after the AI takes a friend\'s seat, the game goes on and offers no undo', { timeout: 60_000 }, async () => {
  const alice = await newPage(browser, { viewport: DESKTOP });
  const bob = await newPage(browser, { viewport: PHONE });
  await startFriendGame(alice, bob);
  await alice.getByTestId('panel-pit-0-1').click();
  await playOne(bob, 1);
  await alice.waitForFunction(() => document.querySelector('[data-testid="game"]').dataset.turn === '0');
  await bob.context().close();

  // Alice goes on against the AI, which now holds Bob's seat.
  await alice.getByTestId('continue-ai').click();
  await playOne(alice, 0);
  // Alice has a move of hers to take back (after the AI's answer, or an
  // extra turn) and is still not offered an undo: the server refuses one
  // in a game made between people.
  await alice.waitForFunction(() => document.querySelector('[data-testid="game"]').dataset.turn === '0');
  assert.ok(await alice.getByTestId('undo').isHidden(), 'no undo once the AI took over a friend game');
  assert.ok(await alice.getByTestId('resign').isVisible(), 'the game goes on');
  await shoot(alice, '20-ai-took-over');
  assertNoPageErrors(alice);
});
