// What every browser test needs: the browser, pages with a guest session,
// the layout check, screenshots, and reading the board off the page.

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const BASE = process.env.ARENA_URL;
if (!BASE) throw new Error('ARENA_URL is not set: run the tests through tests/browser/run.sh');
const ARTIFACTS = process.env.ARTIFACTS || path.resolve(import.meta.dirname, '../../artifacts/browser');
mkdirSync(ARTIFACTS, { recursive: true });

export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 900 };

export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      // WebGL in software (the 3D board), as on a machine without a GPU.
      '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
}

// A fresh browser profile: its own localStorage, so its own guest.
// `touch`: a phone's touch screen (taps are touch pointers).
export async function newPage(browser, { viewport = DESKTOP, locale = 'en-US', touch = false } = {}) {
  const context = await browser.newContext({ viewport, locale, baseURL: BASE, hasTouch: touch, isMobile: touch });
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (error) => page.errors.push(error.message));
  page.setDefaultTimeout(15_000);
  return page;
}

export function assertNoPageErrors(...pages) {
  for (const page of pages) assert.deepEqual(page.errors, [], 'uncaught errors in the page');
}

// Nothing may stick out past the right edge: neither the document (which
// would scroll sideways) nor any visible element.
export async function checkLayout(page, label) {
  const problems = await page.evaluate(() => {
    const found = [];
    const width = window.innerWidth;
    const scroll = document.documentElement.scrollWidth;
    if (scroll > width) found.push(`document scrollWidth ${scroll} > innerWidth ${width}`);
    for (const el of document.body.querySelectorAll('*')) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) continue;
      const style = getComputedStyle(el);
      if (style.visibility === 'hidden' || style.display === 'none') continue;
      if (box.right > width + 0.5) {
        const id = el.dataset.testid ? `[data-testid=${el.dataset.testid}]` : '';
        const cls = typeof el.className === 'string' && el.className ? `.${el.className.split(' ').join('.')}` : '';
        found.push(`${el.tagName.toLowerCase()}${id}${cls} ends at ${box.right.toFixed(1)} > ${width}`);
      }
    }
    return found.slice(0, 12);
  });
  assert.deepEqual(problems, [], `${label}: content overflows the viewport`);
}

// Checks the layout and saves a full-page screenshot at phone and desktop
// widths, then puts the page back at the size it had.
export async function shoot(page, name) {
  const original = page.viewportSize();
  for (const size of [PHONE, DESKTOP]) {
    await page.setViewportSize(size);
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    await checkLayout(page, `${name} at ${size.width} px`);
    await page.screenshot({ path: path.join(ARTIFACTS, `${name}-${size.width}.png`), fullPage: true });
  }
  await page.setViewportSize(original);
}

// The board as the page shows it (counts per seat, pit 1..6 from that
// seat's left) and the game's progress.
export async function readGame(page) {
  return page.evaluate(() => {
    const game = document.querySelector('[data-testid="game"]');
    if (!game) return null;
    const count = (testid) => Number(document.querySelector(`[data-testid="${testid}"]`).dataset.count);
    return {
      ply: Number(game.dataset.ply),
      version: Number(game.dataset.version),
      status: game.dataset.status,
      turn: game.dataset.turn === '' ? null : Number(game.dataset.turn),
      you: game.dataset.you === '' ? null : Number(game.dataset.you),
      bottom: Number(document.querySelector('[data-testid="board"]').dataset.bottom),
      pits: [0, 1].map((seat) => [1, 2, 3, 4, 5, 6].map((pit) => count(`pit-${seat}-${pit}`))),
      stores: [0, 1].map((seat) => count(`store-${seat}`)),
    };
  });
}

export async function waitForGame(page) {
  await page.waitForURL(/\/(game|watch)\/[0-9a-f-]{36}$/);
  // The page of the game in the address bar, not the one it replaces (which
  // can still be on screen, over, for a moment after the address changes).
  await page.waitForFunction(() => {
    const game = document.querySelector('[data-testid="game"]');
    return game?.dataset.status && location.pathname.endsWith(`/${game.dataset.id}`);
  });
  return readGame(page);
}

// Alice invites from the lobby, Bob opens her link and joins; returns the
// game as Alice's page shows it once both are in.
export async function startFriendGame(alice, bob, { variant } = {}) {
  await alice.goto('/lobby');
  if (variant) await alice.getByTestId('invite-variant').selectOption(variant);
  await alice.getByTestId('invite-create').click();
  await alice.waitForURL(/\/invite\/[A-Za-z0-9_-]+$/);
  await bob.goto(await alice.getByTestId('invite-url').inputValue());
  await bob.getByTestId('invite-join').click();
  await waitForGame(bob);
  return waitForGame(alice);
}

export function playablePits(page) {
  return page.locator('[data-testid^="pit-"][data-playable="true"]');
}

// Waits until the page's game has moved past `ply` (or ended).
export async function waitPastPly(page, ply) {
  await page.waitForFunction((before) => {
    const game = document.querySelector('[data-testid="game"]');
    return game && (Number(game.dataset.ply) > before || game.dataset.status !== 'live');
  }, ply);
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A game against the AI from the lobby's card; the game as the page shows
// it once it is on screen.
export async function startAiGame(page, { variant = 'kalah', level = 'beginner', side = 'first' } = {}) {
  await page.goto('/');
  await page.getByTestId('ai-variant').selectOption(variant);
  await page.getByTestId('ai-level').selectOption(level);
  await page.getByTestId('ai-side').selectOption(side);
  await page.getByTestId('ai-start').click();
  return waitForGame(page);
}

// Until it is my turn with a pit to play, past `ply`.
export async function waitForMyTurn(page, pastPly) {
  await page.waitForFunction((ply) => {
    const game = document.querySelector('[data-testid="game"]');
    return game && Number(game.dataset.ply) > ply && game.dataset.turn === game.dataset.you
      && document.querySelector('[data-testid^="pit-"][data-playable="true"]');
  }, pastPly);
  return readGame(page);
}

// Plays my side to the end: `move(state, n)` makes my n-th move (n from
// 0); returns how many I made.
export async function playToEnd(page, move) {
  let moves = 0;
  for (;;) {
    await page.waitForFunction(() => {
      const game = document.querySelector('[data-testid="game"]');
      return game.dataset.status !== 'live'
        || (game.dataset.turn === game.dataset.you && document.querySelector('[data-testid^="pit-"][data-playable="true"]'));
    }, null, { timeout: 30_000 });
    const state = await readGame(page);
    if (state.status !== 'live') return moves;
    await move(state, moves);
    moves += 1;
    await waitPastPly(page, state.ply);
    assert.ok(moves < 200, 'the game ends');
  }
}

export const PASSWORD = 'correct horse battery';

// A call to the server under test, as a script would make it.
export async function callApi(method, path, body, token) {
  const headers = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${BASE}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

// A registered account made through the API: { id, token }.
export async function registerAccount(name) {
  const guest = await callApi('POST', '/v1/auth/guest', {});
  const session = await callApi('POST', '/v1/auth/register', { username: name, password: PASSWORD }, guest.body.access_token);
  assert.equal(session.status, 201, JSON.stringify(session.body));
  return { id: session.body.player.id, token: session.body.access_token };
}

// Signs in through the header's account dialog.
export async function signIn(page, name) {
  await page.goto('/lobby');
  await page.getByTestId('sign-in').click();
  await page.getByRole('tab').nth(1).click();
  await page.getByTestId('account-username').fill(name);
  await page.getByTestId('account-password').fill(PASSWORD);
  await page.getByTestId('account-submit').click();
  await page.getByTestId('logout-header').waitFor();
}
