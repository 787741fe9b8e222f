// A guest plays the beginner AI: an extra turn is announced, a move by
// key, the AI answers, and "Undo" takes back the last move and the AI's
// reply. Then the language switch, and the rematch with sides swapped once
// the game is over ("Start again" is there throughout: play-again.test.mjs).

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  PHONE, assertNoPageErrors, launch, newPage, playablePits, readGame, shoot, waitForGame, waitForMyTurn,
} from '../lib/harness.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('a guest plays the beginner AI and undoes a move', { timeout: 60_000 }, async () => {
  const page = await newPage(browser, { viewport: PHONE });
  await page.goto('/');
  await page.getByTestId('ai-variant').selectOption('kalah');
  await page.getByTestId('ai-level').selectOption('beginner');
  await page.getByTestId('ai-side').selectOption('first');
  await page.getByTestId('ai-start').click();
  const start = await waitForGame(page);
  assert.equal(start.you, 0);
  assert.equal(start.ply, 0);
  assert.deepEqual(start.pits, [[4, 4, 4, 4, 4, 4], [4, 4, 4, 4, 4, 4]]);
  assert.match(await page.getByTestId('name-top').textContent(), /AI \(Beginner\)/);
  await assert.doesNotReject(page.getByTestId('turn').filter({ hasText: 'Your turn' }).waitFor());
  assert.ok(await page.getByTestId('undo').isDisabled(), 'nothing to undo before the first move');

  // Pit 3 holds 4 stones: the last lands in the store, so one more move.
  await page.getByTestId('pit-0-3').click();
  await page.getByTestId('extra-turn').waitFor();
  const afterExtra = await readGame(page);
  assert.equal(afterExtra.ply, 1);
  assert.equal(afterExtra.turn, 0, 'still my turn');
  assert.deepEqual(afterExtra.pits[0], [4, 4, 0, 5, 5, 5]);
  assert.equal(afterExtra.stores[0], 1);
  assert.equal(await page.getByTestId('pit-0-3').getAttribute('data-last'), 'true', 'the last move is marked');
  assert.equal(await page.getByTestId('extra-turn').textContent(), 'One more!');
  assert.equal(await page.getByTestId('turn').textContent(), 'Your turn again');
  await shoot(page, '2-ai-extra-turn');

  // The second move by keyboard (key 1 plays my pit 1); the AI answers.
  await page.keyboard.press('1');
  const mine = await waitForMyTurn(page, afterExtra.ply);
  assert.ok(mine.ply >= 3, 'the AI replied');
  await shoot(page, '2-ai-before-undo');

  // Undo: back to before my last move, the AI's replies gone too.
  await page.getByTestId('undo').click();
  await page.waitForFunction((ply) => Number(document.querySelector('[data-testid="game"]').dataset.ply) === ply, afterExtra.ply);
  const undone = await readGame(page);
  assert.equal(undone.ply, afterExtra.ply);
  assert.deepEqual(undone.pits, afterExtra.pits, 'the board is as before my move');
  assert.deepEqual(undone.stores, afterExtra.stores);
  assert.equal(undone.turn, 0);
  assert.equal(await page.getByTestId('pit-0-3').getAttribute('data-last'), 'true');
  assert.ok((await playablePits(page).count()) > 0, 'my pits are playable again');

  // The page speaks Korean on request, and remembers it.
  await page.getByTestId('lang-switch').click();
  await assert.doesNotReject(page.getByTestId('extra-turn').filter({ hasText: '한 번 더' }).waitFor());
  assert.equal(await page.getByTestId('turn').textContent(), '다시 내 차례');
  assert.equal(await page.getByTestId('undo').textContent(), '한 수 무르기');
  await shoot(page, '2-ai-korean');
  await page.reload();
  await waitForGame(page);
  await page.getByTestId('lang-switch').click();
  await assert.doesNotReject(page.getByTestId('undo').filter({ hasText: 'Undo' }).waitFor());

  // The rematch with sides swapped comes only once the game is over.
  assert.ok(await page.getByTestId('rematch').isHidden(), 'no rematch in a live game');
  await page.getByTestId('resign').click();
  await page.getByTestId('confirm-ok').click();
  await page.getByTestId('result').waitFor();
  // A resigned game is analysed too. Its one move is in the opening book,
  // so its value is exact, not the engine's estimate.
  await page.getByTestId('analysis-chart').waitFor({ timeout: 60_000 });
  const analysis = await page.getByTestId('analysis').textContent();
  assert.match(analysis, /exact where the solver proved them/);
  assert.doesNotMatch(analysis, /Advanced engine's estimates/);
  assertNoPageErrors(page);
  const firstUrl = page.url();
  await page.getByTestId('rematch').filter({ hasText: 'Rematch, sides swapped' }).click();
  await page.waitForURL((url) => url.href !== firstUrl && /\/game\//.test(url.pathname));
  const fresh = await waitForGame(page);
  assert.equal(fresh.status, 'live');
  assert.equal(fresh.you, 1, 'the next game swaps sides');
  assertNoPageErrors(page);
});
