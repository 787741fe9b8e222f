// An address that may make no more guests: a server of its own with the
// default limit on new players per address (the shared one is set high
// so other tests are not limited), an account registered first, then
// the rest of the limit spent. A fresh browser is told why it cannot
// start, in both languages, and can still sign in to the account (from
// the header and from the message); signed in, the site works, and the
// browser, reopened on its kept profile, is still signed in.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  PASSWORD, PHONE, assertNoPageErrors, callApi, checkLayout, keptProfile, registerAccount, shoot, startAiGame, startArena,
} from '../lib/harness.mjs';

let arena;
let profile;
before(async () => { arena = await startArena(); });
after(async () => {
  await profile?.remove();
  await arena?.stop();
});

// What the page shows in <main>, once it shows something of its own.
async function mainText(page) {
  return (await page.locator('main').innerText()).trim();
}

test('when the address may make no more guests, the page says why and signing in works', { timeout: 150_000 }, async () => {
  const name = `limited_${Math.random().toString(36).slice(2, 7)}`;
  const account = await registerAccount(name, { base: arena.base });

  // The rest of the address's new players, spent by a script.
  let refused = null;
  for (let made = 0; made < 2000 && !refused; made += 1) {
    const answer = await callApi('POST', '/v1/auth/guest', {}, undefined, { base: arena.base });
    if (answer.status === 429) refused = answer;
    else assert.equal(answer.status, 201, JSON.stringify(answer.body));
  }
  assert.ok(refused, 'the default limit refuses a new guest within 2,000');
  assert.equal(refused.body.code, 'rate_limited');

  // A fresh browser, on a profile it keeps.
  profile = keptProfile({ viewport: PHONE, baseURL: arena.base });
  await profile.open();
  const page = await profile.page();
  await page.goto('/');
  const error = page.getByTestId('boot-error');
  await error.waitFor();
  assert.match(await error.textContent(), /Too many new players have started from your network.*sign in/);
  // Two ways to sign in: the header and the message.
  const header = page.getByTestId('account').getByTestId('sign-in');
  assert.ok(await header.isVisible(), 'the header offers to sign in');
  assert.equal((await header.textContent()).trim(), 'Sign in');
  assert.equal((await page.getByTestId('boot-sign-in').textContent()).trim(), 'Sign in');
  assert.equal(await page.getByTestId('me').count(), 0, 'nobody is signed in');
  await shoot(page, '50-signup-limited-en');

  // In Korean, the same.
  await page.getByTestId('lang-switch').click();
  await page.getByTestId('boot-error').filter({ hasText: '새 플레이어가 너무 많이' }).waitFor();
  assert.match(await page.getByTestId('boot-error').textContent(), /로그인하세요/);
  assert.equal((await header.textContent()).trim(), '로그인');
  assert.equal((await page.getByTestId('boot-sign-in').textContent()).trim(), '로그인');
  await shoot(page, '50-signup-limited-ko');
  await page.getByTestId('lang-switch').click();
  await page.getByTestId('boot-error').filter({ hasText: 'Too many new players' }).waitFor();

  // The message's button opens the sign-in (only: registering needs a guest).
  await page.getByTestId('boot-sign-in').click();
  const dialog = page.getByTestId('account-dialog');
  await dialog.waitFor();
  assert.deepEqual(await dialog.getByRole('tab').allTextContents(), ['Sign in']);
  await dialog.getByTestId('account-username').fill(name);
  await dialog.getByTestId('account-password').fill(PASSWORD);
  await checkLayout(page, 'the sign-in dialog at 390 px');
  await dialog.getByTestId('account-submit').click();

  // Signed in: the app starts as for anyone, with the player in the header.
  await page.getByTestId('lobby').waitFor();
  assert.equal(await page.getByTestId('me').getAttribute('title'), name);
  await page.getByTestId('logout-header').waitFor();
  assert.equal(await page.getByTestId('boot-error').count(), 0);
  await page.getByTestId('stat-online').filter({ hasText: /\d/ }).waitFor();
  await shoot(page, '50-signed-in-after-limit');
  assertNoPageErrors(page);

  // A reload, and the browser reopened on the same profile: still signed
  // in, still working (a game against the AI starts).
  await page.reload();
  await page.getByTestId('lobby').waitFor();
  assert.equal(await page.getByTestId('me').getAttribute('title'), name, 'signed in after a reload');
  assertNoPageErrors(page);
  await profile.close();
  await profile.open();
  const again = await profile.page();
  await again.goto('/');
  await again.getByTestId('lobby').waitFor();
  assert.equal(await again.getByTestId('me').getAttribute('title'), name, 'signed in after the browser reopened');
  assert.ok((await mainText(again)).length > 20);
  const game = await startAiGame(again);
  assert.equal(game.status, 'live');
  assert.equal(game.you, 0);
  const mine = await callApi('GET', '/v1/me/games', undefined, account.token, { base: arena.base });
  assert.equal(mine.status, 200);
  assert.ok(mine.body.some((g) => again.url().endsWith(g.game_id)), 'the game is the account\'s');
  // A new guest is still refused meanwhile: nothing above made one.
  assert.equal((await callApi('POST', '/v1/auth/guest', {}, undefined, { base: arena.base })).status, 429);
  assertNoPageErrors(again);
});
