// The moderators' console and the players' side of moderation, in
// Korean, at 390 and 1280 px: a player reports another from their
// profile; the admin (made by `mancala-admin`, as the site's owner
// would) finds the report, opens the account, warns and bans it, reads
// the audit log and watches a live game; the warned player sees why and
// dismisses the warning; a player without the role gets no console.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  DESKTOP, PASSWORD, PHONE, assertNoPageErrors, callApi as call, grant, launch, newPage, registerAccount as account, shoot, signIn, startAiGame,
} from '../lib/harness.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('the console in Korean: a report, the account, a warning and a ban, the log, a live game', { timeout: 150_000 }, async () => {
  const suffix = Math.random().toString(36).slice(2, 7);
  const [bossName, trollName, victimName] = [`boss_${suffix}`, `troll_${suffix}`, `victim_${suffix}`];
  await account(bossName);
  grant(bossName, 'admin');
  const troll = await account(trollName);

  // The victim reports the troll from the troll's profile, on a phone.
  const victim = await newPage(browser, { viewport: PHONE, locale: 'ko-KR' });
  await account(victimName);
  await signIn(victim, victimName);
  await victim.goto(`/player/${troll.id}`);
  await victim.getByTestId('report').click();
  await victim.getByTestId('report-reason').selectOption('offensive_name');
  await victim.getByTestId('report-text').fill('이름이 불쾌합니다');
  await victim.getByTestId('report-send').click();
  await victim.getByTestId('report-dialog').waitFor({ state: 'detached' });
  // And starts a game against the AI, and stays at it (the live list
  // shows the games someone is at).
  await startAiGame(victim);

  // Nobody without the role sees a console.
  const nobody = await newPage(browser, { viewport: PHONE, locale: 'ko-KR' });
  await nobody.goto('/lobby');
  await nobody.getByTestId('me').waitFor();
  assert.equal(await nobody.getByTestId('nav-mod').isVisible(), false);
  await nobody.goto('/mod');
  await nobody.getByTestId('mod-forbidden').waitFor();

  const boss = await newPage(browser, { viewport: DESKTOP, locale: 'ko-KR' });
  await signIn(boss, bossName);
  await boss.getByTestId('nav-mod').click();
  const reported = boss.getByTestId('mod-reported').filter({ hasText: trollName });
  await reported.waitFor();
  assert.match(await reported.textContent(), /불쾌한 이름/);
  assert.match(await reported.textContent(), /이름이 불쾌합니다/);
  await shoot(boss, '43-mod-reports-ko');

  await reported.getByTestId('mod-open-account').click();
  await boss.getByTestId('mod-account-name').filter({ hasText: trollName }).waitFor();
  await boss.getByTestId('mod-action').selectOption('warn');
  await boss.getByTestId('mod-reason').fill('이름을 바꿔 주세요');
  await boss.getByTestId('mod-act').click();
  await boss.getByTestId('mod-sanction').filter({ hasText: '이름을 바꿔 주세요' }).waitFor();
  await boss.getByTestId('mod-action').selectOption('ban_ranked');
  await boss.getByTestId('mod-hours').fill('48');
  await boss.getByTestId('mod-reason').fill('랭크 게임 방해');
  await boss.getByTestId('mod-act').click();
  await boss.locator('[data-testid="mod-sanction"][data-kind="ranked_ban"][data-active="true"]').waitFor();
  await boss.getByTestId('mod-note-text').fill('경고 후 지켜볼 것');
  await boss.getByTestId('mod-add-note').click();
  await boss.getByTestId('mod-notes').filter({ hasText: '경고 후 지켜볼 것' }).waitFor();
  await shoot(boss, '43-mod-account-ko');

  // The troll's lobby says why ranked play is closed, and until when.
  const trollPage = await newPage(browser, { viewport: PHONE, locale: 'ko-KR' });
  await signIn(trollPage, trollName);
  const notices = trollPage.getByTestId('moderator-notices');
  await notices.waitFor();
  assert.match(await notices.textContent(), /운영자 경고: 이름을 바꿔 주세요/);
  assert.match(await notices.textContent(), /랭크 게임을 막았습니다: 랭크 게임 방해/);
  assert.match(await notices.textContent(), /(47|48)시간/);
  assert.ok(await trollPage.getByTestId('queue-join').isDisabled(), 'no ranked queue while banned');
  await shoot(trollPage, '43-sanction-notices-ko');
  await trollPage.getByTestId('notice-dismiss').click();
  await trollPage.getByTestId('moderator-notice-warning').waitFor({ state: 'detached' });
  await trollPage.reload();
  await trollPage.getByTestId('moderator-notice-ranked_ban').waitFor();
  assert.equal(await trollPage.getByTestId('moderator-notice-warning').count(), 0, 'a dismissed warning stays dismissed');

  // The audit log: each action once, newest first (other tests' lines on
  // this server come after ours).
  await boss.getByTestId('mod-tab-log').click();
  await boss.getByTestId('mod-log-entry').first().waitFor();
  const actions = await boss.getByTestId('mod-log-entry').evaluateAll((rows) => rows.map((row) => row.dataset.action));
  assert.deepEqual(actions.slice(0, 4), ['note', 'ban_ranked', 'warn', 'set_role']);
  await shoot(boss, '43-mod-log-ko');

  // The live games, and one of them watched.
  await boss.getByTestId('mod-tab-live').click();
  const row = boss.getByTestId('mod-live').getByTestId('game-row').first();
  await row.waitFor();
  await shoot(boss, '43-mod-live-ko');
  await row.click();
  await boss.waitForURL(/\/watch\/[0-9a-f-]{36}$/);
  await boss.locator('[data-testid="game"][data-status="live"]').waitFor();
  assertNoPageErrors(victim, nobody, boss, trollPage);
  void troll;
});

test('a player downloads their data and closes their account', { timeout: 90_000 }, async () => {
  const name = `leaver_${Math.random().toString(36).slice(2, 7)}`;
  await account(name);
  const page = await newPage(browser, { viewport: PHONE, locale: 'ko-KR' });
  await signIn(page, name);
  await page.getByTestId('me').click();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('my-data').click()]);
  assert.equal(download.suggestedFilename(), 'mancala-arena-data.json');
  const data = JSON.parse(await (await download.createReadStream()).toArray().then((chunks) => Buffer.concat(chunks).toString()));
  assert.equal(data.username, name);
  // Everything kept about the player, not only games and ratings.
  assert.ok(data.networks.length > 0 && data.sessions.length > 0, JSON.stringify(data));
  for (const key of ['fair_play', 'reports_filed', 'tournaments', 'invites']) assert.ok(Array.isArray(data[key]), key);
  await shoot(page, '43-my-account-ko');
  await page.getByTestId('close-account').click();
  // A wrong password says the password is wrong, not "you may not".
  await page.getByTestId('close-password').fill('not the password');
  await page.getByTestId('close-confirm').click();
  await page.getByText('비밀번호가 틀렸습니다.').waitFor();
  await page.getByTestId('close-password').fill(PASSWORD);
  await page.getByTestId('close-confirm').click();
  await page.getByTestId('close-dialog').waitFor({ state: 'detached' });
  // A new guest now; the closed account's username and password are
  // forgotten, so nothing signs in to it again.
  await page.getByTestId('sign-in').waitFor();
  const login = await call('POST', '/v1/auth/login', { username: name, password: PASSWORD });
  assert.equal(login.status, 401);
  assert.equal(login.body.code, 'invalid_credentials');
  // Its profile says it is closed, not that it is a guest's.
  await page.goto(`/player/${data.player.id}`);
  assert.equal(await page.getByTestId('profile-kind').textContent(), '닫힌 계정');
  assertNoPageErrors(page);
});
