// The pages around the games: a Korean browser gets Korean, the rules, the
// leaderboard and a profile, all fitting at phone and desktop widths.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PHONE, assertNoPageErrors, launch, newPage, shoot } from '../lib/harness.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('a Korean browser gets Korean pages: rules, leaderboard, profile', { timeout: 60_000 }, async () => {
  const page = await newPage(browser, { viewport: PHONE, locale: 'ko-KR' });
  await page.goto('/help');
  await page.getByTestId('help').waitFor();
  assert.equal(await page.locator('main h1').textContent(), '규칙과 두는 법');
  assert.equal(await page.locator('[data-nav="lobby"]').textContent(), '대전');
  for (const variant of ['칼라', '오와레', '망갈라']) {
    assert.ok(await page.locator('.help-section h2', { hasText: variant }).count(), `rules of ${variant}`);
  }
  await shoot(page, '4-help-ko');

  await page.locator('[data-nav="leaderboard"]').click();
  await page.waitForURL(/\/leaderboard\/kalah$/);
  await page.getByTestId('my-rank').waitFor();
  assert.match(await page.getByTestId('my-rank').textContent(), /칼라|게스트/);
  await shoot(page, '4-leaderboard-ko');

  await page.getByTestId('me').click();
  await page.getByTestId('profile').waitFor();
  await page.getByTestId('chart-empty').waitFor();
  assert.equal(await page.getByTestId('profile-name').textContent(), await page.getByTestId('me').getAttribute('title'));
  await shoot(page, '4-profile-ko');

  // The choice is the player's, and it sticks.
  await page.getByTestId('lang-switch').click();
  await page.reload();
  await page.getByTestId('profile').waitFor();
  assert.equal(await page.locator('[data-nav="leaderboard"]').textContent(), 'Leaderboard');
  assertNoPageErrors(page);
});
