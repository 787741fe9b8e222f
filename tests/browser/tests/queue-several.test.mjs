// Issue 39: the server lets a player wait in several ranked queues at
// once, and so does the lobby: pick several, see each one's status, leave
// one or all; a game in any of them (here the AI fallback) takes the player
// out of all of them. Choosing again after a queue's AI fallback comes
// back to that queue.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  DESKTOP, PHONE, assertNoPageErrors, checkLayout, launch, newPage, shoot, sleep, waitForGame,
} from '../lib/harness.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

async function waitingIn(page) {
  const response = await page.request.get('/v1/queues');
  assert.equal(response.status(), 200);
  return Object.fromEntries((await response.json()).map((q) => [q.queue, q.waiting]));
}

// Leaving is a socket message: the server may take a moment.
async function untilNobodyIn(page, names) {
  for (let tries = 0; ; tries += 1) {
    const counts = await waitingIn(page);
    if (names.every((name) => counts[name] === 0)) return;
    assert.ok(tries < 50, `still waiting in ${names.filter((name) => counts[name] !== 0)}`);
    await sleep(100);
  }
}

// The lobby with the chips of `names` ticked and every other one not.
async function pick(page, names) {
  await page.getByTestId('ranked-queues').waitFor();
  for (const option of await page.locator('[data-testid^="queue-option-"]').all()) {
    const name = (await option.getAttribute('data-testid')).replace('queue-option-', '');
    const box = option.locator('input');
    if ((await box.isChecked()) !== names.includes(name)) await option.click();
  }
}

async function statusOf(page, name) {
  const row = page.getByTestId(`queue-${name}`);
  await row.getByTestId('queue-ai').waitFor();
  assert.match(await row.getByTestId('queue-waiting').textContent(), /\d+ waiting/);
  return row;
}

test('two queues at once: a status for each, leave all, leave one', { timeout: 60_000 }, async () => {
  const page = await newPage(browser, { viewport: PHONE });
  await page.goto('/lobby');
  await pick(page, ['kalah:3+2', 'oware:3+2']);
  await shoot(page, '39-queue-choice');
  await page.getByTestId('queue-join').click();
  // Quick: the AI fallback comes 2 s after joining in these tests.
  await statusOf(page, 'kalah:3+2');
  await statusOf(page, 'oware:3+2');
  assert.equal(await page.getByTestId('queue-status').count(), 2, 'one status per queue');
  assert.match(await page.locator('.queue-title').textContent(), /2 queues/);
  await checkLayout(page, 'waiting in two queues');

  // Leave all: both tickets go.
  await page.getByTestId('queue-leave').click();
  await page.getByTestId('queue-join').waitFor();
  await untilNobodyIn(page, ['kalah:3+2', 'oware:3+2']);

  // Leave one: the other stays, and the game comes from it.
  await pick(page, ['kalah:3+2', 'oware:3+2']);
  await page.getByTestId('queue-join').click();
  await statusOf(page, 'oware:3+2');
  await page.getByTestId('queue-leave-kalah:3+2').click();
  assert.equal(await page.getByTestId('queue-kalah:3+2').count(), 0);
  assert.equal(await page.getByTestId('queue-status').count(), 1);
  const game = await waitForGame(page);
  assert.match(await page.getByTestId('game-title').textContent(), /Oware/, 'the game is from the queue left waiting in');

  // The fallback game is one against the AI: choosing again goes back to
  // the queue it came from (asked first, once a move was made).
  if (game.turn === game.you) await page.locator('[data-testid^="panel-pit-"][data-playable="true"]').first().click();
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="game"]').dataset.ply) >= 1);
  await page.getByTestId('choose-again').click();
  await page.getByTestId('confirm-ok').click();
  await page.waitForURL(/\/lobby\?/);
  await page.getByTestId('ranked-queues').waitFor();
  assert.match(await page.getByTestId('ranked-card').getAttribute('class'), /\bagain\b/);
  const ticked = await page.locator('[data-testid^="queue-option-"] input:checked').evaluateAll((boxes) => boxes.map((box) => box.value));
  assert.deepEqual(ticked, ['oware:3+2']);
  assertNoPageErrors(page);
});

test('matched in one of two queues, the player waits in neither', { timeout: 60_000 }, async () => {
  const page = await newPage(browser, { viewport: DESKTOP });
  await page.goto('/lobby');
  await pick(page, ['kalah:10+5', 'mangala:10+5']);
  await page.getByTestId('queue-join').click();
  await statusOf(page, 'kalah:10+5');
  await statusOf(page, 'mangala:10+5');
  // Another queue joins from the waiting view.
  await page.getByTestId('queue-add-oware:10+5').click();
  await statusOf(page, 'oware:10+5');
  assert.equal(await page.getByTestId('queue-status').count(), 3);

  // Nobody else is waiting: the AI fallback comes in one of them.
  await waitForGame(page);
  assert.match(await page.getByTestId('name-top').textContent(), /^AI \(/);
  await untilNobodyIn(page, ['kalah:10+5', 'mangala:10+5', 'oware:10+5']);
  assertNoPageErrors(page);
});
