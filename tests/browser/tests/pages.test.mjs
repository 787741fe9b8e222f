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

test('an unknown address shows the client\'s own not-found page, never the API\'s JSON or a file', { timeout: 60_000 }, async () => {
  const page = await newPage(browser, { viewport: PHONE, locale: 'ko-KR' });
  for (const path of ['/no-such-page', '/.git/config', '/..%2fREADME.md', '/strings/', '/match']) {
    const response = await page.goto(path);
    assert.equal(response.status(), 404, path);
    assert.match(response.headers()['content-type'], /^text\/html/, path);
    await page.getByTestId('not-found').waitFor();
    assert.equal(await page.locator('main h1').textContent(), '페이지를 찾을 수 없습니다', path);
    const body = await page.locator('body').textContent();
    assert.doesNotMatch(body, /"code"|\[core\]|Mancala Arena.*README/, path);
  }
  await shoot(page, '4-not-found-ko');
  // Its way out leads back to play.
  await page.getByTestId('not-found').locator('a').click();
  await page.waitForURL(/\/lobby$/);
  assertNoPageErrors(page);
});
