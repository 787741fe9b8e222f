// The pages around the games: a Korean browser gets Korean, the rules, the
// leaderboard and a profile, all fitting at phone and desktop widths; the
// leaderboard's own row readable; the site's icon where browsers look.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DESKTOP, PHONE, assertNoPageErrors, launch, newPage, shoot } from '../lib/harness.mjs';

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

// WCAG's contrast ratio of two computed `rgb()` colours (opaque).
function contrast(a, b) {
  const luminance = (css) => {
    const [r, g, b] = css.match(/[\d.]+/g).slice(0, 3).map((v) => {
      const c = Number(v) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

// Issue 39: the header's `.me` (white, for the brown header) reached the
// leaderboard's `li.me` and wrote the player's own row white on mint.
test('my own row on the leaderboard is readable', { timeout: 60_000 }, async () => {
  const page = await newPage(browser, { viewport: DESKTOP });
  await page.goto('/lobby');
  const id = (await page.getByTestId('me').getAttribute('href')).split('/').pop();
  // Ranking needs ten settled games; the page only needs a row that is mine.
  await page.route((url) => url.pathname === '/v1/leaderboard/kalah', (route) => route.fulfill({
    json: {
      variant: 'kalah',
      entries: [
        { rank: 1, player: '00000000-0000-4000-8000-000000000001', name: 'someone', rating: 1712, rd: 60, games: 40 },
        { rank: 2, player: id, name: 'me', rating: 1650, rd: 70, games: 12 },
      ],
    },
  }));
  await page.locator('[data-nav="leaderboard"]').click();
  const mine = page.locator('[data-testid="leaderboard"] li.me');
  await mine.waitFor();
  assert.equal(await page.locator('[data-testid="leaderboard"] li').count(), 2);
  const colours = await mine.evaluate((row) => {
    const style = (el) => getComputedStyle(el);
    return {
      background: style(row).backgroundColor,
      rank: style(row.querySelector('.rank')).color,
      name: style(row.querySelector('.lb-name')).color,
      rating: style(row.querySelector('.lb-rating')).color,
      display: style(row).display,
    };
  });
  assert.equal(colours.display, 'grid', 'laid out as the other rows');
  for (const part of ['rank', 'name', 'rating']) {
    const ratio = contrast(colours[part], colours.background);
    assert.ok(ratio >= 4.5, `the ${part} on my row: ${colours[part]} on ${colours.background} is ${ratio.toFixed(2)}:1`);
  }
  // The header's own link keeps its light text on the dark header.
  const header = await page.getByTestId('me').evaluate((el) => getComputedStyle(el).color);
  assert.equal(header, 'rgb(255, 247, 234)');
  await shoot(page, '39-leaderboard-own-row');
  assertNoPageErrors(page);
});

test('the site has an icon where browsers and crawlers look for it', { timeout: 30_000 }, async () => {
  const page = await newPage(browser, { viewport: PHONE });
  const ico = await page.request.get('/favicon.ico');
  assert.equal(ico.status(), 200);
  assert.match(ico.headers()['content-type'], /^image\//);
  const body = await ico.body();
  assert.deepEqual([...body.subarray(0, 4)], [0, 0, 1, 0], 'an ICO file');
  assert.ok(body.readUInt16LE(4) >= 2, 'more than one size');
  await page.goto('/lobby');
  const icons = await page.locator('link[rel="icon"]').evaluateAll((links) => links.map((link) => new URL(link.href).pathname));
  assert.deepEqual(icons.sort(), ['/favicon.ico', '/icon.svg']);
  for (const path of icons) assert.equal((await page.request.get(path)).status(), 200, path);
  assertNoPageErrors(page);
});
