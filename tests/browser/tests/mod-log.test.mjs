// The audit log reads in the page's language: what each action changed
// (a role from and to, the old and new names, a mark, a ban's hours, the
// sanction it made) under translated labels, with roles and marks by
// their names and nothing empty ("since: null") shown; in Korean and
// English, at 390 and 1280 px.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  DESKTOP, PASSWORD, PHONE, assertNoPageErrors, callApi, grant, launch, newPage, registerAccount, shoot, signIn,
} from '../lib/harness.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

// The details each entry shows, by action, newest first.
async function detailsByAction(page) {
  await page.getByTestId('mod-log-entry').first().waitFor();
  return page.getByTestId('mod-log-entry').evaluateAll((rows) => rows.map((row) => ({
    action: row.dataset.action,
    details: row.querySelector('[data-testid="mod-log-details"]')?.textContent ?? '',
    text: row.textContent,
  })));
}

test('the audit log\'s details read in Korean and English, with nothing empty', { timeout: 120_000 }, async () => {
  const suffix = Math.random().toString(36).slice(2, 7);
  const [bossName, trollName, newName] = [`boss_${suffix}`, `troll_${suffix}`, `calm_${suffix}`];
  await registerAccount(bossName);
  grant(bossName, 'admin');
  const troll = await registerAccount(trollName);
  // The admin acts through the API (signed in again: the grant ended the
  // account's sessions): a rename, a mark over every game, a ban.
  const login = await callApi('POST', '/v1/auth/login', { username: bossName, password: PASSWORD });
  assert.equal(login.status, 200, JSON.stringify(login.body));
  const act = async (body) => {
    const answer = await callApi('POST', `/v1/mod/players/${troll.id}/actions`, body, login.body.access_token);
    assert.ok(answer.status < 300, JSON.stringify(answer.body));
  };
  await act({ action: 'rename', reason: '이름 정리', name: newName });
  await act({ action: 'mark', mark: 'booster', reason: '부스팅' });
  await act({ action: 'ban_ranked', hours: 48, reason: '랭크 방해' });

  const boss = await newPage(browser, { viewport: PHONE, locale: 'ko-KR' });
  await signIn(boss, bossName);
  await boss.goto('/mod/log');
  let rows = await detailsByAction(boss);
  assert.deepEqual(rows.map((row) => row.action), ['ban_ranked', 'mark', 'rename', 'set_role']);
  const ko = Object.fromEntries(rows.map((row) => [row.action, row.details]));
  // No key of the server's details, no "null", anywhere in an entry.
  for (const row of rows) {
    assert.doesNotMatch(row.text, /\b(from|to|since|hours|sanction|mark|kind|reports_closed|null|undefined)\b/, `${row.action}: ${row.text}`);
  }
  assert.match(ko.set_role, /플레이어 → 관리자/);
  assert.match(ko.rename, new RegExp(`${trollName} → ${newName}`));
  assert.match(ko.mark, /표시: 부스팅/);
  assert.match(ko.mark, /제재 #\d+/);
  assert.match(ko.ban_ranked, /기간 48시간/);
  assert.match(ko.ban_ranked, /제재 #\d+/);
  await shoot(boss, '55-mod-log-details-ko');

  await boss.getByTestId('lang-switch').click();
  await boss.getByTestId('mod-log-entry').first().filter({ hasText: 'banned from ranked play' }).waitFor();
  rows = await detailsByAction(boss);
  const en = Object.fromEntries(rows.map((row) => [row.action, row.details]));
  assert.match(en.set_role, /Player → Admin/);
  assert.match(en.rename, new RegExp(`${trollName} → ${newName}`));
  assert.match(en.mark, /mark: booster/);
  assert.doesNotMatch(en.mark, /since|null/);
  assert.match(en.ban_ranked, /for 48 h/);
  assert.match(en.ban_ranked, /sanction #\d+/);
  await boss.setViewportSize(DESKTOP);
  await shoot(boss, '55-mod-log-details-en');
  assertNoPageErrors(boss);
});
