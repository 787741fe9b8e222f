// Two registered players queue for ranked Kalah at once, are paired with
// each other, each moves, and one resigns: both result screens show the
// rating change the rating service computed, and the player bars the new
// ratings.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DESKTOP, PHONE, assertNoPageErrors, launch, newPage, shoot, waitForGame } from '../lib/harness.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

async function register(page, name) {
  await page.goto('/lobby');
  await page.getByTestId('sign-in').click();
  await page.getByTestId('account-username').fill(name);
  await page.getByTestId('account-password').fill('correct horse battery');
  await page.getByTestId('account-submit').click();
  await page.getByTestId('logout-header').waitFor();
}

// Kalah 3+2 alone (the lobby's first choice).
async function queue(page) {
  await page.getByTestId('ranked-queues').waitFor();
  assert.ok(await page.getByTestId('queue-option-kalah:3+2').locator('input').isChecked());
  assert.equal(await page.locator('[data-testid^="queue-option-"] input:checked').count(), 1);
  await page.getByTestId('queue-join').click();
}

test('a ranked game between two registered players ends with their rating changes', { timeout: 90_000 }, async () => {
  const suffix = Math.random().toString(36).slice(2, 8);
  const [ann, ben] = [await newPage(browser, { viewport: DESKTOP }), await newPage(browser, { viewport: PHONE })];
  await register(ann, `ann_${suffix}`);
  await register(ben, `ben_${suffix}`);
  await Promise.all([queue(ann), queue(ben)]);
  const [a, b] = [await waitForGame(ann), await waitForGame(ben)];
  assert.equal(ann.url(), ben.url(), 'paired with each other');
  assert.match(await ann.locator('.game-badges').textContent(), /Ranked/);
  const [first, second] = a.you === a.turn ? [ann, ben] : [ben, ann];
  const firstSeat = a.you === a.turn ? a.you : b.you;

  // One move each: pit 1 never ends in the store, so the turn passes.
  await first.getByTestId(`panel-pit-${firstSeat}-1`).click();
  await second.waitForFunction(() => {
    const game = document.querySelector('[data-testid="game"]');
    return game.dataset.turn === game.dataset.you && document.querySelector('[data-testid^="panel-pit-"][data-playable="true"]');
  });
  await second.locator('[data-testid^="panel-pit-"][data-playable="true"]').first().click();
  await first.waitForFunction(() => document.querySelector('[data-testid="game"]').dataset.ply === '2');

  await second.getByTestId('resign').click();
  await second.getByTestId('confirm-ok').click();
  const after = new Map();
  for (const [page, sign] of [[first, '\\+'], [second, '-']]) {
    await page.getByTestId('result').waitFor();
    const change = page.getByTestId('rating-change');
    await assert.doesNotReject(change.filter({ hasText: '→' }).waitFor({ timeout: 20_000 }), 'the rating change reaches the result');
    const text = await change.textContent();
    assert.match(text, new RegExp(`Your rating: [\\d,]+ → [\\d,]+ \\(${sign}\\d+\\)`));
    const [, was, now, delta] = /([\d,]+) → ([\d,]+) \(([-+]\d+)\)/.exec(text);
    after.set(page, now);
    // Issue 39: the player's bar says the rating the game left (and by how
    // much it moved), not the one it began with beside the new one.
    const bar = await page.getByTestId('tag-bottom').textContent();
    assert.equal(bar, `you · ${now} (${delta})`, 'my bar shows my new rating');
    assert.ok(!bar.includes(was), `the old rating ${was} is gone from my bar`);
  }
  // Each sees the other's new rating too.
  assert.match(await first.getByTestId('tag-top').textContent(), new RegExp(`^${after.get(second)} \\(-\\d+\\)$`));
  assert.match(await second.getByTestId('tag-top').textContent(), new RegExp(`^${after.get(first)} \\(\\+\\d+\\)$`));
  // Reloaded after the game: still the ratings the game left.
  await first.reload();
  await waitForGame(first);
  await assert.doesNotReject(first.getByTestId('rating-change').filter({ hasText: '→' }).waitFor(), 'the change shown again');
  assert.match(await first.getByTestId('tag-bottom').textContent(), new RegExp(`^you · ${after.get(first)} \\(\\+\\d+\\)$`));
  await shoot(first, '20-rating-change-winner');
  await shoot(second, '20-rating-change-loser');
  assertNoPageErrors(ann, ben);
});
