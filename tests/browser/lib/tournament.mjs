// What the tournament tests share: a tournament game played to its end
// by resigning, and a player's score as their page shows it.

import assert from 'node:assert/strict';
import { callApi } from './harness.mjs';

// The tournament game the page was sent to, played: one move each, then
// `loser` resigns; both pages go back to the tournament by themselves.
export async function playOne(winner, loser, { berserk = false } = {}) {
  for (const page of [winner, loser]) {
    await page.waitForURL(/\/game\/[0-9a-f-]{36}\?tournament=/, { timeout: 30_000 });
    await page.locator('[data-testid="game"][data-status="live"]').waitFor();
  }
  assert.equal(winner.url(), loser.url(), 'both at the same game');
  if (berserk) {
    // Half the clock, once, before the first move: the button goes.
    await winner.getByTestId('berserk').click();
    await winner.getByTestId('berserk').waitFor({ state: 'hidden' });
  }
  const turnOf = (page) => page.evaluate(() => {
    const game = document.querySelector('[data-testid="game"]');
    return game.dataset.turn === game.dataset.you;
  });
  const [first, second] = (await turnOf(winner)) ? [winner, loser] : [loser, winner];
  await first.locator('[data-testid^="panel-pit-"][data-playable="true"]').first().click();
  await second.waitForFunction(() => document.querySelector('[data-testid^="panel-pit-"][data-playable="true"]'));
  await second.locator('[data-testid^="panel-pit-"][data-playable="true"]').first().click();
  await first.waitForFunction(() => Number(document.querySelector('[data-testid="game"]').dataset.ply) >= 2);
  await loser.getByTestId('resign').click();
  await loser.getByTestId('confirm-ok').click();
  // Both see the result at once (each page goes back by itself 3 s later).
  await Promise.all([winner, loser].map((page) => page.getByTestId('result').waitFor()));
  await Promise.all([winner, loser].map((page) => page.waitForURL(/\/tournament\/[0-9a-f-]{36}/, { timeout: 15_000 })));
}

export async function myScore(page) {
  const row = page.locator('[data-testid="standing"].me');
  await row.waitFor();
  return Number(await row.getAttribute('data-score'));
}

// A private arena made through the API by a registered player (`token`):
// { id, code }.
export async function makeArena(token, { name = 'Test arena', minutes = 20 } = {}) {
  const made = await callApi('POST', '/v1/tournaments', {
    name, variant: 'kalah', time_control: { initial_secs: 180, increment_secs: 2 }, minutes, starts_in_secs: 0, rated: false,
  }, token);
  assert.equal(made.status, 201, JSON.stringify(made.body));
  return { id: made.body.id, code: made.body.code };
}
