// A player who comes back, in a browser that keeps its profile (its cache,
// its cookies and storage) as every real browser does: reloads, visits a
// page seen before, goes back and forward, opens a game in a second tab,
// comes back the next day, and leaves a page open for an hour. Every page
// must show, not a blank page: browsers revalidate what they keep, and
// the server must answer that with a 304 the browser can use.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import {
  BASE, DESKTOP, assertNoPageErrors, playablePits, readGame, startAiGame, waitForGame, waitPastPly,
} from '../lib/harness.mjs';

const profile = mkdtempSync(path.join(tmpdir(), 'arena-profile-'));

// The same profile every time, as a browser reopened on the same machine.
function openBrowser() {
  return chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: DESKTOP,
    locale: 'en-US',
    baseURL: BASE,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
}

function watch(page) {
  page.errors = [];
  page.on('pageerror', (error) => page.errors.push(error.message));
  page.setDefaultTimeout(15_000);
  // Whether each load of the page itself asked with the ETag of a kept
  // copy (a revalidation: Chromium reports the copy's own 200 once the
  // server said 304, so the request's headers are what tell).
  page.revalidations = [];
  page.on('response', async (response) => {
    if (response.request().resourceType() !== 'document') return;
    const sent = await response.request().allHeaders().catch(() => ({}));
    page.revalidations.push('if-none-match' in sent);
  });
  return page;
}

async function newTab(context) {
  return watch(await context.newPage());
}

// What the page shows: the app's own content in <main>, not a blank page
// or the "Loading…" it starts with.
async function shows(page, testid) {
  await page.getByTestId(testid).waitFor({ state: 'visible' });
  const text = (await page.locator('main').innerText()).trim();
  assert.ok(text.length > 20, `main has content: ${JSON.stringify(text)}`);
}

let context;
let gameUrl;
let playerName;

before(async () => { context = await openBrowser(); });
// One hook, in this order: Chromium writes into its profile until it has
// closed, so removing the folder first fails (and left Chromium running,
// which kept the test process alive).
after(async () => {
  await context?.close();
  rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
});

test('page addresses revalidate with a 304 and answer HEAD', async () => {
  const first = await fetch(`${BASE}/`);
  assert.equal(first.status, 200);
  const etag = first.headers.get('etag');
  assert.ok(etag, 'an ETag');
  const length = (await first.arrayBuffer()).byteLength;
  for (const address of ['/', '/lobby', '/help', '/leaderboard/kalah', '/index.html']) {
    const started = performance.now();
    const again = await fetch(`${BASE}${address}`, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304, address);
    assert.equal((await again.arrayBuffer()).byteLength, 0);
    assert.ok(performance.now() - started < 1000, `${address} answered at once`);
    const head = await fetch(`${BASE}${address}`, { method: 'HEAD' });
    assert.equal(head.status, 200, `HEAD ${address}`);
    assert.equal(Number(head.headers.get('content-length')), length, `HEAD ${address}`);
    assert.equal(head.headers.get('cache-control'), 'no-cache');
  }
  const icon = await fetch(`${BASE}/icon.svg`);
  assert.equal(icon.status, 200);
});

test('reload, a second visit, back and forward all show the page', { timeout: 90_000 }, async () => {
  const page = await newTab(context);
  await page.goto('/');
  await shows(page, 'lobby');
  playerName = await page.getByTestId('me').getAttribute('title');
  await page.reload();
  await shows(page, 'lobby');
  await page.goto('/help');
  await shows(page, 'help');
  await page.reload();
  await shows(page, 'help');
  // A second visit to a page seen before, typed in: the browser has it.
  await page.goto('/');
  await shows(page, 'lobby');
  await page.goto('/leaderboard/kalah');
  await page.getByTestId('my-rank').waitFor();
  await page.goBack();
  await shows(page, 'lobby');
  await page.goBack();
  await shows(page, 'help');
  await page.goForward();
  await shows(page, 'lobby');
  await page.reload();
  await shows(page, 'lobby');
  // The browser did revalidate its kept copy, and the page showed.
  assert.ok(page.revalidations.filter(Boolean).length >= 3, `revalidated: ${page.revalidations}`);
  assert.equal(await page.getByTestId('me').getAttribute('title'), playerName, 'the same guest');
  assertNoPageErrors(page);
  await page.close();
});

test('a game reloads, opens in a second tab and plays in both', { timeout: 90_000 }, async () => {
  const page = await newTab(context);
  const start = await startAiGame(page);
  gameUrl = page.url();
  await playablePits(page).first().click();
  await waitPastPly(page, start.ply);
  const plyBefore = await page.waitForFunction(() => {
    const game = document.querySelector('[data-testid="game"]');
    return game.dataset.turn === game.dataset.you && Number(game.dataset.ply) > 0 && game.dataset.ply;
  }).then((ply) => ply.jsonValue());

  await page.reload();
  const reloaded = await waitForGame(page);
  assert.equal(String(reloaded.ply), plyBefore, 'the same game, where it was');

  const second = await newTab(context);
  await second.goto(gameUrl);
  const there = await waitForGame(second);
  assert.equal(there.ply, reloaded.ply);
  assert.equal(there.you, reloaded.you, 'the same player in both tabs');
  // A move in one tab shows in the other.
  await playablePits(second).first().click();
  await waitPastPly(page, reloaded.ply);
  assert.ok((await readGame(page)).ply > reloaded.ply);

  // Away and back through history.
  await page.goto('/help');
  await shows(page, 'help');
  await page.goBack();
  await waitForGame(page);
  assertNoPageErrors(page, second);
  await second.close();
  await page.close();
});

test('the next day: the browser reopens on the same profile', { timeout: 90_000 }, async () => {
  await context.close();
  context = await openBrowser();
  const page = await newTab(context);
  await page.goto('/');
  await shows(page, 'lobby');
  assert.equal(await page.getByTestId('me').getAttribute('title'), playerName, 'still the same guest');
  await page.goto(gameUrl);
  const game = await waitForGame(page);
  assert.ok(game.ply > 0, 'the game as it was left');
  assert.ok(page.revalidations.every(Boolean), `from the kept copy: ${page.revalidations}`);
  assertNoPageErrors(page);
  await page.close();
});

test('a lobby left open for an hour still works', { timeout: 90_000 }, async () => {
  const page = await newTab(context);
  await page.clock.install();
  await page.goto('/');
  await shows(page, 'lobby');
  await page.getByTestId('stat-online').filter({ hasText: /\d/ }).waitFor();
  // An hour passes for the page: its access token long expired by its own
  // clock, its timers due.
  await page.clock.fastForward('01:00:00');
  await page.clock.runFor(5_000);
  await shows(page, 'lobby');
  // Still a working page: the figures come, and a game starts.
  await page.getByTestId('stat-online').filter({ hasText: /\d/ }).waitFor();
  await page.getByTestId('ai-start').click();
  const game = await waitForGame(page);
  assert.equal(game.status, 'live');
  assert.equal(await page.getByTestId('me').getAttribute('title'), playerName, 'the same player after an hour');
  assertNoPageErrors(page);
  await page.close();
});
