// A guest queues for ranked Kalah; nobody else is waiting, so after the
// fallback time an AI steps in and the game starts.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  DESKTOP, assertNoPageErrors, launch, newPage, readGame, shoot, waitForGame,
} from '../lib/harness.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('a guest queues for ranked Kalah and gets the AI fallback', { timeout: 60_000 }, async () => {
  const page = await newPage(browser, { viewport: DESKTOP });
  await page.goto('/lobby');
  // The lobby counts come from the server (lobby socket or REST).
  await page.waitForFunction(() => /\d/.test(document.querySelector('[data-testid="stat-online"] .stat-value')?.textContent));
  await shoot(page, '3-lobby');

  // Kalah 3+2 is the lobby's first choice.
  assert.ok(await page.getByTestId('queue-option-kalah:3+2').locator('input').isChecked());
  await page.getByTestId('queue-join').click();
  const status = page.getByTestId('queue-status');
  await status.getByTestId('queue-ai').waitFor();
  assert.match(await status.getByTestId('queue-waiting').textContent(), /\d+ waiting/);
  assert.match(await status.getByTestId('queue-ai').textContent(), /AI opponent/);
  // Alone in the queue, the wait is not dressed up as a prediction.
  assert.equal(await status.getByTestId('queue-eta').getAttribute('data-basis'), 'ai');
  assert.match(await status.getByTestId('queue-eta').textContent(), /nobody near your rating yet/);
  assert.ok(await page.getByTestId('queue-leave').isVisible(), 'the queue can be left');
  await shoot(page, '3-queue-waiting');

  const game = await waitForGame(page);
  assert.match(page.url(), /\/game\//);
  assert.equal(game.status, 'live');
  assert.ok(game.you === 0 || game.you === 1);
  assert.equal(game.bottom, game.you, 'my row is at the bottom');
  assert.match(await page.getByTestId('name-top').textContent(), /^AI \(/, 'the opponent is an AI');
  assert.match(await page.getByTestId('clock-bottom').textContent(), /^\d+:\d\d$/, 'a ranked queue game has clocks');
  assert.match(await page.getByTestId('game-title').textContent(), /Kalah/);

  // The game really runs: whoever moves first, a move gets made.
  if (game.turn === game.you) {
    await page.locator('[data-testid^="pit-"][data-playable="true"]').first().click();
  }
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="game"]').dataset.ply) >= 1);
  assert.ok((await readGame(page)).ply >= 1);
  await shoot(page, '3-queue-game');
  assertNoPageErrors(page);
});
