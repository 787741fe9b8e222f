// How the standings of an arena read: a player who withdrew reads as
// withdrawn, not as paused (another player paused, for comparison); the
// score sheet shows whole beside a long name and the "on fire" marker on
// a 390 px phone, in Korean and English; and once the arena is over, its
// final standings carry no "on fire" (a streak means something only while
// games are still to come). The arena's end is brought forward in the
// database, as time passing would.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  DESKTOP, PHONE, assertNoPageErrors, callApi, launch, newPage, registerAccount, shoot, signIn, sql,
} from '../lib/harness.mjs';
import { makeArena, myScore, playOne } from '../lib/tournament.mjs';

const suffix = Math.random().toString(36).slice(2, 7);
// As long as a username may be (20), with the marker and the sheet beside it.
const annName = `Annabelle_Long_${suffix}`;
const names = { ben: `ben_${suffix}`, cat: `cat_${suffix}`, dan: `dan_${suffix}` };

let browser;
let arena;
let accounts;
before(async () => {
  browser = await launch();
  accounts = {
    ann: await registerAccount(annName),
    ben: await registerAccount(names.ben),
    cat: await registerAccount(names.cat),
    dan: await registerAccount(names.dan),
  };
  arena = await makeArena(accounts.ann.token, { name: 'Standings arena' });
  const path = `/v1/tournaments/${arena.id}`;
  // Cat joins and withdraws; Dan joins and pauses. Neither plays.
  for (const [who, step] of [['cat', 'withdraw'], ['dan', 'pause']]) {
    assert.equal((await callApi('POST', `${path}/join`, { code: arena.code }, accounts[who].token)).status, 204);
    assert.equal((await callApi('POST', `${path}/${step}`, undefined, accounts[who].token)).status, 204);
  }
  // Ann beats Ben twice: on fire, with a sheet of two wins.
  const ann = await newPage(browser, { viewport: DESKTOP });
  const ben = await newPage(browser, { viewport: DESKTOP });
  await signIn(ann, annName);
  await signIn(ben, names.ben);
  for (const page of [ann, ben]) {
    await page.goto(`/tournament/${arena.id}?code=${arena.code}`);
    await page.getByTestId('tournament-join').click();
    await page.getByTestId('tournament-pause').waitFor();
  }
  await playOne(ann, ben);
  await playOne(ann, ben);
  assert.equal(await myScore(ann), 4);
  assertNoPageErrors(ann, ben);
  // Both leave (no further pairing while the standings are read).
  await ann.context().close();
  await ben.context().close();
});
after(async () => { await browser?.close(); });

// A row of the standings, by player.
function rowOf(page, player) {
  return page.locator(`[data-testid="standing"][data-player="${player}"]`);
}

async function standingsPage(locale, viewport = PHONE) {
  const page = await newPage(browser, { viewport, locale });
  await page.goto(`/tournament/${arena.id}`);
  await rowOf(page, accounts.ann.id).waitFor();
  return page;
}

test('a withdrawn player reads as withdrawn, a paused one as paused, in both languages', { timeout: 60_000 }, async () => {
  for (const [locale, withdrawn, paused] of [['en-US', '(withdrawn)', '(paused)'], ['ko-KR', '(기권함)', '(쉬는 중)']]) {
    const page = await standingsPage(locale);
    const cat = await rowOf(page, accounts.cat.id).textContent();
    const dan = await rowOf(page, accounts.dan.id).textContent();
    assert.ok(cat.includes(withdrawn), `${locale}: Cat withdrew: ${cat}`);
    assert.ok(!cat.includes(paused), `${locale}: Cat is not "paused": ${cat}`);
    assert.ok(dan.includes(paused), `${locale}: Dan paused: ${dan}`);
    assert.ok(!dan.includes(withdrawn), `${locale}: Dan did not withdraw: ${dan}`);
    assert.equal(await rowOf(page, accounts.cat.id).getAttribute('data-state'), 'withdrawn');
    assert.equal(await rowOf(page, accounts.dan.id).getAttribute('data-state'), 'paused');
    assertNoPageErrors(page);
    await page.context().close();
  }
});

// Every part of a standings row that could be cut short: nothing in it
// overflows its box, and the sheet lies within the row. A push of the
// standings redraws the rows: a row caught as it is replaced (no box at
// all) is looked at again once the page has drawn the new one.
async function clipped(page, player) {
  for (let attempt = 0; ; attempt += 1) {
    const found = await clippedOnce(page, player);
    if (!found.includes('row has no box') || attempt >= 20) return found;
    await page.waitForTimeout(100);
  }
}

async function clippedOnce(page, player) {
  return rowOf(page, player).evaluate((row) => {
    const found = [];
    const rowBox = row.getBoundingClientRect();
    if (!row.isConnected || (rowBox.width === 0 && rowBox.height === 0)) return ['row has no box'];
    for (const el of [row, ...row.querySelectorAll('*')]) {
      const style = getComputedStyle(el);
      if (style.display === 'inline') continue; // no box of its own to overflow
      if (el.scrollWidth > el.clientWidth + 0.5) found.push(`${el.className || el.tagName}: scrollWidth ${el.scrollWidth} > clientWidth ${el.clientWidth} (${el.textContent})`);
      if (style.textOverflow === 'ellipsis' && style.overflow === 'hidden' && el.scrollWidth > el.clientWidth) found.push(`${el.className}: cut with …`);
    }
    for (const el of row.querySelectorAll('.tournament-sheet, .lb-name a, [data-testid="on-fire"]')) {
      const box = el.getBoundingClientRect();
      if (box.width === 0) found.push(`${el.className || el.tagName} has no width`);
      if (box.left < rowBox.left - 0.5 || box.right > rowBox.right + 0.5) found.push(`${el.className || el.tagName} [${box.left}, ${box.right}] outside the row [${rowBox.left}, ${rowBox.right}]`);
    }
    return found;
  });
}

test('the score sheet shows whole beside a long name and the marker at 390 px, in Korean and English', { timeout: 60_000 }, async () => {
  for (const [locale, fire] of [['ko-KR', '연승 중'], ['en-US', 'on fire']]) {
    const page = await standingsPage(locale);
    const ann = rowOf(page, accounts.ann.id);
    assert.equal((await ann.locator('.tournament-sheet').textContent()).trim(), '2 2');
    assert.equal(await ann.getByTestId('on-fire').textContent(), fire);
    assert.equal(await ann.locator('.lb-name a').textContent(), annName);
    assert.deepEqual(await clipped(page, accounts.ann.id), [], `${locale}: Ann's row at 390 px`);
    for (const who of ['ben', 'cat', 'dan']) assert.deepEqual(await clipped(page, accounts[who].id), [], `${locale}: ${who}'s row at 390 px`);
    assert.ok(await ann.locator('.tournament-sheet').isVisible());
    await shoot(page, `54-tournament-sheet-${locale}`);
    await page.setViewportSize(DESKTOP);
    assert.deepEqual(await clipped(page, accounts.ann.id), [], `${locale}: Ann's row at 1280 px`);
    assertNoPageErrors(page);
    await page.context().close();
  }
});

test('the final standings carry no "on fire"', { timeout: 60_000 }, async () => {
  const running = await standingsPage('en-US', DESKTOP);
  assert.equal(await running.getByTestId('tournament-countdown').getAttribute('data-status'), 'running');
  await rowOf(running, accounts.ann.id).getByTestId('on-fire').waitFor();
  // The arena's time runs out.
  sql(`UPDATE tournaments SET ends_at = now() - interval '1 second' WHERE id = '${arena.id}'`);
  for (const [locale, viewport] of [['en-US', DESKTOP], ['ko-KR', PHONE]]) {
    const page = await standingsPage(locale, viewport);
    await page.locator('[data-testid="tournament-countdown"][data-status="finished"]').waitFor();
    await page.getByTestId('podium').waitFor();
    const ann = rowOf(page, accounts.ann.id);
    assert.equal(await ann.getAttribute('data-score'), '4', 'the points stay');
    assert.equal(await ann.getByTestId('on-fire').count(), 0, `${locale}: no "on fire" once the arena is over`);
    assert.equal((await ann.locator('.tournament-sheet').textContent()).trim(), '2 2');
    await shoot(page, `54-tournament-final-${locale}`);
    assertNoPageErrors(page);
  }
  assertNoPageErrors(running);
});
