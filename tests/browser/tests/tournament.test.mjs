// An arena tournament in the browser: a registered player makes a private
// arena, a friend opens its address and joins; both are paired at once,
// play, and come back to the tournament page by themselves, where the
// standings have moved; a third person watches the top game from the
// tournament page. Korean on a phone, English on a desktop.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  DESKTOP, PHONE, assertNoPageErrors, launch, newPage, registerAccount, shoot, signIn,
} from '../lib/harness.mjs';
import { myScore, playOne } from '../lib/tournament.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('a private arena: made, joined by its address, two games played, the standings move, the top game watched', { timeout: 150_000 }, async () => {
  const suffix = Math.random().toString(36).slice(2, 7);
  const [annName, benName] = [`ann_${suffix}`, `ben_${suffix}`];
  await registerAccount(annName);
  await registerAccount(benName);
  const ann = await newPage(browser, { viewport: PHONE, locale: 'ko-KR' });
  const ben = await newPage(browser, { viewport: DESKTOP });
  await signIn(ann, annName);
  await signIn(ben, benName);

  await ann.getByTestId('nav-tournaments').click();
  await ann.getByTestId('tournament-name').fill('금요일 아레나');
  await ann.getByTestId('tournament-create').click();
  await ann.waitForURL(/\/tournament\/[0-9a-f-]{36}\?code=[A-Z0-9]{8}$/);
  const address = ann.url();
  await ann.getByTestId('tournament-code').waitFor();
  assert.match(await ann.getByTestId('tournament-countdown').textContent(), /뒤 종료/);
  await shoot(ann, '44-tournament-made-ko');
  await ann.getByTestId('tournament-join').click();
  await ann.getByTestId('tournament-pause').waitFor();

  await ben.goto(new URL(address).pathname + new URL(address).search);
  await ben.getByTestId('tournament-join').click();

  // Paired at once; Ann goes berserk and wins the first game (too short
  // for the berserk point: 7 moves are needed).
  await playOne(ann, ben, { berserk: true });
  assert.equal(await myScore(ann), 2);
  assert.equal(await myScore(ben), 0);
  await shoot(ann, '44-tournament-standings-ko');

  // Alone together, they meet again after the rematch wait: a third
  // person watches that game from the tournament page.
  const watcher = await newPage(browser, { viewport: DESKTOP });
  await watcher.goto(new URL(address).pathname);
  await watcher.getByTestId('tournament-top-game').click({ timeout: 30_000 });
  await watcher.waitForURL(/\/watch\/[0-9a-f-]{36}$/);
  await watcher.locator('[data-testid="game"][data-status="live"]').waitFor();
  await playOne(ann, ben);
  assert.equal(await myScore(ann), 4);
  const sheet = await ann.locator('[data-testid="standing"].me .tournament-sheet').textContent();
  assert.equal(sheet.trim(), '2 2');
  await shoot(ben, '44-tournament-standings-en');
  assertNoPageErrors(ann, ben, watcher);
});
