// A busy server and a limited one, as a player meets them: a 503 with
// `Retry-After` is waited out with a countdown on screen and the request
// goes again by itself; a visitor over the limit of new players from one
// network is told that, and when they can start. (The server's own
// refusals are tested against the real process elsewhere; here the
// browser's side of them, the answers stood in by Playwright.)

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PHONE, assertNoPageErrors, launch, newPage, waitForGame } from '../lib/harness.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

function busy(seconds) {
  return {
    status: 503,
    headers: { 'retry-after': String(seconds), 'content-type': 'application/json' },
    body: JSON.stringify({ code: 'unavailable', message: `the server is busy; try again in ${seconds} s`, retry_after: seconds }),
  };
}

test('a busy server is waited out with a countdown, and the game starts', { timeout: 60_000 }, async () => {
  const page = await newPage(browser);
  await page.goto('/');
  await page.getByTestId('lobby').waitFor();
  let refused = 0;
  await page.route('**/v1/ai-games', async (route) => {
    if (refused < 2) {
      refused += 1;
      await route.fulfill(busy(2));
    } else {
      await route.continue();
    }
  });
  await page.getByTestId('ai-start').click();
  const bar = page.getByTestId('busy-bar');
  await bar.waitFor();
  assert.match(await bar.textContent(), /busy.*Trying again in [12] s/);
  const game = await waitForGame(page);
  assert.equal(game.status, 'live');
  assert.equal(refused, 2, 'asked again after each refusal');
  await bar.waitFor({ state: 'detached' });
  assert.equal(await page.getByTestId('toast-error').count(), 0, 'no error shown');
  assertNoPageErrors(page);
});

test('a server busy for too long is shown as an error with its wait', { timeout: 60_000 }, async () => {
  const page = await newPage(browser);
  await page.goto('/');
  await page.getByTestId('lobby').waitFor();
  await page.route('**/v1/ai-games', (route) => route.fulfill(busy(600)));
  await page.getByTestId('ai-start').click();
  await page.getByText('Please try again in 600 s').waitFor();
  assert.equal(await page.getByTestId('busy-bar').count(), 0);
  assertNoPageErrors(page);
});

test('a new visitor over the sign-up limit is told what it is, in Korean too', { timeout: 60_000 }, async () => {
  for (const [locale, expected] of [['en-US', /new players.*your network.*12 min/], ['ko-KR', /새 플레이어.*12분/]]) {
    const page = await newPage(browser, { viewport: PHONE, locale });
    await page.route('**/v1/auth/guest', (route) => route.fulfill({
      status: 429,
      headers: { 'retry-after': '700', 'content-type': 'application/json' },
      body: JSON.stringify({ code: 'rate_limited', message: 'too many requests', retry_after: 700 }),
    }));
    await page.goto('/');
    const error = page.getByTestId('boot-error');
    await error.waitFor();
    assert.match(await error.textContent(), expected);
    assert.doesNotMatch(await error.textContent(), /finish a game|대국을 끝내/);
    assertNoPageErrors(page);
    await page.context().close();
  }
});
