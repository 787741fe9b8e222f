// Issue 39: in a game against the AI or on one device, "Start again" and
// "Choose how to play again" are there during the game, as the product's
// seed has them, not only after it. Starting again gives the game up (asked
// first once moves were made) and starts one with the same settings;
// choosing again gives it up too and lands on the lobby's card, filled in
// as it was.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  DESKTOP, PHONE, assertNoPageErrors, launch, newPage, shoot, waitForGame, waitForMyTurn, waitPastPly,
} from '../lib/harness.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const gameId = (page) => new URL(page.url()).pathname.split('/').pop();

async function record(page, id) {
  const response = await page.request.get(`/v1/games/${id}`);
  assert.equal(response.status(), 200, `the record of ${id}`);
  return response.json();
}

// Until the page shows a game other than `id`.
async function nextGame(page, id) {
  await page.waitForURL((url) => /^\/game\/[0-9a-f-]{36}$/.test(url.pathname) && !url.pathname.endsWith(id));
  return waitForGame(page);
}

async function playOne(page, seat) {
  const before = await waitForMyTurn(page, -1);
  await page.locator(`[data-testid^="panel-pit-${seat}-"][data-playable="true"]`).first().click();
  await waitPastPly(page, before.ply);
}

test('against the AI: start again and choose again during the game, start again after it', { timeout: 120_000 }, async () => {
  const page = await newPage(browser, { viewport: DESKTOP });
  await page.goto('/');
  await page.getByTestId('ai-variant').selectOption('kalah');
  await page.getByTestId('ai-level').selectOption('intermediate');
  await page.getByTestId('ai-seeds').selectOption('5');
  await page.getByTestId('ai-side').selectOption('second');
  await page.getByTestId('ai-start').click();
  const first = await waitForGame(page);
  assert.equal(first.you, 1);
  const firstId = gameId(page);

  // Both buttons while the game is on.
  await playOne(page, 1);
  assert.equal(await page.getByTestId('new-game').textContent(), 'Start again');
  assert.equal(await page.getByTestId('choose-again').textContent(), 'Choose how to play again');
  assert.ok(await page.getByTestId('resign').isVisible());
  await shoot(page, '39-ai-live-buttons');

  // Start again: asked first (moves were made), then the same game afresh.
  await page.getByTestId('new-game').click();
  await page.getByTestId('confirm-dialog').waitFor();
  await page.getByTestId('confirm-ok').click();
  const second = await nextGame(page, firstId);
  const secondId = gameId(page);
  assert.equal(second.you, 1, 'the same side');
  const old = await record(page, firstId);
  assert.equal(old.status, 'over', 'the game left behind is over');
  assert.equal(old.reason, 'resign');
  const fresh = await record(page, secondId);
  assert.equal(fresh.status, 'live');
  assert.equal(fresh.variant.variant, 'kalah');
  assert.equal(fresh.variant.seeds, 5, 'the same stones a pit');
  assert.equal(fresh.seats[0].ai, 'intermediate', 'the same AI, moving first');
  assert.equal(fresh.time_control, null);
  assert.match(await page.getByTestId('name-top').textContent(), /AI \(Intermediate\)/);

  // Choose again, after the AI's opening: asked, given up, and the AI card
  // filled in as it was.
  await waitForMyTurn(page, 0);
  await page.getByTestId('choose-again').click();
  await page.getByTestId('confirm-ok').click();
  await page.waitForURL(/\/lobby\?/);
  const card = page.getByTestId('ai-card');
  await card.waitFor();
  assert.match(await card.getAttribute('class'), /\bagain\b/, 'the AI card is the one brought forward');
  assert.equal(await page.getByTestId('ai-variant').inputValue(), 'kalah');
  assert.equal(await page.getByTestId('ai-level').inputValue(), 'intermediate');
  assert.equal(await page.getByTestId('ai-seeds').inputValue(), '5');
  assert.equal(await page.getByTestId('ai-side').inputValue(), 'second');
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'ai-start', 'its button has the focus');
  assert.notEqual((await record(page, secondId)).status, 'live', 'the game left behind is over');
  await shoot(page, '39-ai-choose-again');

  // From the filled-in card; then after a resignation "Start again" needs
  // no question and keeps the side, and the sides-swapped rematch is there
  // as well.
  await page.getByTestId('ai-start').click();
  await waitForGame(page);
  const thirdId = gameId(page);
  assert.equal((await record(page, thirdId)).variant.seeds, 5);
  await page.getByTestId('resign').click();
  await page.getByTestId('confirm-ok').click();
  await page.getByTestId('result').waitFor();
  assert.ok(await page.getByTestId('rematch').isVisible(), 'the sides-swapped rematch after the end');
  await page.getByTestId('new-game').click();
  const fourth = await nextGame(page, thirdId);
  assert.equal(fourth.you, 1, 'the same side after the end too');
  const again = await record(page, gameId(page));
  assert.equal(again.variant.seeds, 5);
  assert.equal(again.seats[0].ai, 'intermediate');
  assertNoPageErrors(page);
});

test('on one device: start again and choose again, in English and Korean', { timeout: 90_000 }, async () => {
  const page = await newPage(browser, { viewport: PHONE });
  await page.goto('/');
  await page.getByTestId('hotseat-variant').selectOption('kalah');
  await page.getByTestId('hotseat-seeds').selectOption('6');
  await page.getByTestId('hotseat-start').click();
  await waitForGame(page);
  const firstId = gameId(page);
  await page.getByTestId('panel-pit-0-1').click();
  await page.waitForFunction(() => document.querySelector('[data-testid="game"]').dataset.ply === '1');

  // The seed's own words.
  await page.getByTestId('lang-switch').click();
  await assert.doesNotReject(page.getByTestId('new-game').filter({ hasText: '다시 하기' }).waitFor());
  assert.equal(await page.getByTestId('choose-again').textContent(), '플레이 방식 다시 선택하기');
  await shoot(page, '39-hotseat-korean');
  await page.getByTestId('lang-switch').click();

  await page.getByTestId('new-game').click();
  await page.getByTestId('confirm-ok').click();
  const second = await nextGame(page, firstId);
  const secondId = gameId(page);
  assert.equal(second.ply, 0);
  assert.deepEqual(second.pits, [[6, 6, 6, 6, 6, 6], [6, 6, 6, 6, 6, 6]], 'the same stones a pit');
  assert.notEqual((await record(page, firstId)).status, 'live', 'the game left behind is over');
  assert.match(await page.locator('.game-badges').textContent(), /One device/);

  // Before any move there is nothing to lose: no question.
  await page.getByTestId('choose-again').click();
  await page.waitForURL(/\/lobby\?/);
  assert.equal(await page.getByTestId('confirm-dialog').count(), 0);
  const card = page.getByTestId('hotseat-card');
  await card.waitFor();
  assert.match(await card.getAttribute('class'), /\bagain\b/);
  assert.equal(await page.getByTestId('hotseat-variant').inputValue(), 'kalah');
  assert.equal(await page.getByTestId('hotseat-seeds').inputValue(), '6');
  assert.equal((await record(page, secondId)).status, 'aborted', 'given up before a move: aborted');
  assertNoPageErrors(page);
});
