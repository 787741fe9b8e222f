// A player with games not played is told so in the lobby: a warning one
// offence before the ban, then the ban with its time left counting down
// and the ranked queues closed, after a refused join and after a reload.
// The offences are written in the database as a game's end writes them
// (by account only, so other tests' guests on this address are untouched).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { DESKTOP, assertNoPageErrors, launch, newPage, shoot } from '../lib/harness.mjs';

const DATABASE = process.env.ARENA_DATABASE_URL;

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

function sql(statement) {
  return execFileSync('psql', [DATABASE, '-qAtc', statement]).toString().trim();
}

function offend(player, count) {
  sql(`INSERT INTO fair_play_offences (game_id, player_id, kind, at)
       SELECT gen_random_uuid(), '${player}', 'no_start', now() FROM generate_series(1, ${count})`);
}

test('the lobby warns, then shows the ranked ban with its time left', { timeout: 90_000, skip: !DATABASE && 'ARENA_DATABASE_URL is not set' }, async () => {
  const page = await newPage(browser, { viewport: DESKTOP });
  await page.goto('/lobby');
  await page.waitForFunction(() => /\d/.test(document.querySelector('[data-testid="stat-online"] .stat-value')?.textContent));
  const player = await page.evaluate((key) => JSON.parse(localStorage.getItem(key)).player.id, 'mancala.session');
  const notice = page.getByTestId('fair-play-notice');
  try {
    // Two offences (one fewer than the default ban): a warning at sign-in.
    offend(player, 2);
    await page.reload();
    await notice.filter({ hasText: 'A warning: 2 games not played' }).waitFor();
    assert.ok(await page.getByTestId('queue-join').isEnabled(), 'a warning still lets one play');

    // The third: the next join is refused, and the lobby says for how long.
    offend(player, 1);
    await page.getByTestId('queue-join').click();
    await notice.filter({ hasText: /Ranked play opens again in (9|10) min/ }).waitFor();
    assert.ok(await page.getByTestId('queue-join').isDisabled(), 'the ranked queues are closed meanwhile');
    assert.equal(await page.getByTestId('queue-rows').count(), 0, 'no queue is shown as waited in');
    await shoot(page, '40-ranked-banned');

    // A reload (or a later visit) is told at sign-in, in Korean as well.
    await page.reload();
    await notice.filter({ hasText: /Ranked play opens again in (9|10) min/ }).waitFor();
    const korean = await newPage(browser, { viewport: DESKTOP, locale: 'ko-KR' });
    await korean.goto('/');
    // The page's own first visit makes a guest: once it has been saved,
    // not before (it would overwrite the session put in its place).
    await korean.waitForFunction((key) => localStorage.getItem(key), 'mancala.session');
    await korean.evaluate(([key, value]) => localStorage.setItem(key, value),
      ['mancala.session', await page.evaluate((key) => localStorage.getItem(key), 'mancala.session')]);
    await korean.goto('/lobby');
    await korean.getByTestId('fair-play-notice').filter({ hasText: /(9|10)분 뒤에 랭크 대국이 다시 열립니다/ }).waitFor();
    assertNoPageErrors(page, korean);
  } finally {
    sql(`DELETE FROM fair_play_offences WHERE player_id = '${player}'`);
  }
});
