// What every browser test needs: the browser, pages with a guest session,
// the layout check, screenshots, and reading the board off the page.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const BASE = process.env.ARENA_URL;
if (!BASE) throw new Error('ARENA_URL is not set: run the tests through tests/browser/run.sh');
const ARTIFACTS = process.env.ARTIFACTS || path.resolve(import.meta.dirname, '../../artifacts/browser');
mkdirSync(ARTIFACTS, { recursive: true });

export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 900 };

const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  // WebGL in software (the 3D board), as on a machine without a GPU.
  '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
  });
}

// What every page of a test gets: its uncaught errors collected (for
// assertNoPageErrors) and a shorter wait than Playwright's.
export function watchPage(page) {
  page.errors = [];
  page.on('pageerror', (error) => page.errors.push(error.message));
  page.setDefaultTimeout(15_000);
  return page;
}

// A fresh browser profile: its own localStorage, so its own guest.
// `touch`: a phone's touch screen (taps are touch pointers); `baseURL`:
// another server than the shared one (startArena).
export async function newPage(browser, { viewport = DESKTOP, locale = 'en-US', touch = false, baseURL = BASE } = {}) {
  const context = await browser.newContext({ viewport, locale, baseURL, hasTouch: touch, isMobile: touch });
  return watchPage(await context.newPage());
}

// A browser that keeps its profile (cache, cookies, storage) in a folder,
// as a real one does between visits: `open()` starts it on that profile
// (again after `close()`), `remove()` closes it and deletes the folder.
// `profile.context` is the open browser, `profile.page()` a new tab.
export function keptProfile({ viewport = DESKTOP, locale = 'en-US', baseURL = BASE } = {}) {
  const folder = mkdtempSync(path.join(tmpdir(), 'arena-profile-'));
  const profile = {
    folder,
    context: null,
    async open() {
      profile.context = await chromium.launchPersistentContext(folder, {
        executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
        headless: true,
        viewport,
        locale,
        baseURL,
        args: CHROMIUM_ARGS,
      });
      return profile.context;
    },
    async page() {
      return watchPage(await profile.context.newPage());
    },
    async close() {
      await profile.context?.close();
      profile.context = null;
    },
    // Chromium writes into its profile until it has closed: close first.
    async remove() {
      await profile.close();
      rmSync(folder, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    },
  };
  return profile;
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

// A call to the server under test, as a script would make it (`base`:
// another server than the shared one).
export async function callApi(method, path, body, token, { base = BASE } = {}) {
  const headers = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  let parsed = null;
  try { parsed = text ? JSON.parse(text) : null; } catch { parsed = text; }
  return { status: response.status, body: parsed };
}

// A registered account made through the API: { id, token }.
export async function registerAccount(name, { base = BASE } = {}) {
  const guest = await callApi('POST', '/v1/auth/guest', {}, undefined, { base });
  assert.equal(guest.status, 201, JSON.stringify(guest.body));
  const session = await callApi('POST', '/v1/auth/register', { username: name, password: PASSWORD }, guest.body.access_token, { base });
  assert.equal(session.status, 201, JSON.stringify(session.body));
  return { id: session.body.player.id, token: session.body.access_token };
}

// The site owner's command line (`mancala-admin grant`) against the
// shared server's stores: gives the account `name` a role.
export function grant(name, role) {
  execFileSync(process.env.ARENA_ADMIN_BIN, ['grant', name, role, '--reason', 'the site owner'], {
    env: {
      ...process.env,
      DATABASE_URL: process.env.ARENA_DATABASE_URL,
      REDIS_URL: process.env.ARENA_REDIS_URL,
      APP_REDIS_PREFIX: process.env.ARENA_REDIS_PREFIX,
    },
  });
}

// SQL against the shared server's database, standing in for time passing.
export function sql(statement) {
  return execFileSync('psql', [process.env.ARENA_DATABASE_URL, '-qAtc', statement]).toString().trim();
}

// A wait that does not keep the test's process alive by itself.
function later(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// A second arena for one test, with the DEFAULT settings (the shared one
// run.sh starts is set for tests: short waits, a high limit on new
// players): the same binary and client, against a database and a Redis
// prefix of its own. Returns { base, log(), stop() }; stop() ends it
// (SIGTERM, SIGKILL after 10 s) and drops its database and keys.
export async function startArena() {
  const bin = process.env.ARENA_BIN;
  const pg = ['-h', process.env.ARENA_PG_HOST || '127.0.0.1', '-p', process.env.ARENA_PG_PORT || '5432', '-U', process.env.ARENA_PG_USER || 'postgres'];
  const redisUrl = process.env.ARENA_REDIS_URL || 'redis://127.0.0.1:6379';
  if (!bin) throw new Error('ARENA_BIN is not set: run the tests through tests/browser/run.sh');
  const suffix = randomBytes(6).toString('hex');
  const db = `browser_own_${suffix}`;
  const prefix = `browser_own_${suffix}:`;
  execFileSync('psql', ['-q', ...pg, '-d', 'postgres', '-c', `CREATE DATABASE "${db}"`]);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const user = process.env.ARENA_PG_USER || 'postgres';
  const host = process.env.ARENA_PG_HOST || '127.0.0.1';
  const pgPort = process.env.ARENA_PG_PORT || '5432';
  const child = spawn(bin, ['--bind', `127.0.0.1:${port}`], {
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: `postgres://${user}@${host}:${pgPort}/${db}`,
      REDIS_URL: redisUrl,
      APP_REDIS_PREFIX: prefix,
      APP_WEB_DIR: process.env.ARENA_WEB_DIR || path.resolve(import.meta.dirname, '../../../web'),
      APP_PUBLIC_URL: base,
      APP_LOG_FORMAT: 'pretty',
      RUST_LOG: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  let running = true;
  // Never left running past the test's process, whatever happened.
  const orphan = () => { if (running) child.kill('SIGKILL'); };
  process.once('exit', orphan);
  exited.then(() => { running = false; process.off('exit', orphan); });
  const ready = new Promise((resolve) => {
    const read = (chunk) => {
      output += chunk.toString();
      if (output.includes('Mancala Arena is ready')) resolve(true);
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
  });
  let stopped = false;
  async function stop() {
    if (stopped) return;
    stopped = true;
    if (running) {
      child.kill('SIGTERM');
      const gone = await Promise.race([exited.then(() => true), later(10_000).then(() => false)]);
      if (!gone) {
        child.kill('SIGKILL');
        await exited;
      }
    }
    try {
      execFileSync('psql', ['-q', ...pg, '-d', 'postgres', '-c', `DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`], { stdio: 'ignore' });
    } catch { /* left for the machine's owner; named browser_own_* */ }
    try {
      const keys = execFileSync('redis-cli', ['-u', redisUrl, '--scan', '--pattern', `${prefix}*`]).toString().split('\n').filter(Boolean);
      for (let i = 0; i < keys.length; i += 500) execFileSync('redis-cli', ['-u', redisUrl, 'DEL', ...keys.slice(i, i + 500)], { stdio: 'ignore' });
    } catch { /* no redis-cli: the keys expire or stay under their prefix */ }
  }
  const outcome = await Promise.race([
    ready,
    exited.then(({ code, signal }) => new Error(`the second arena exited before it was ready (${code ?? signal}):\n${output.slice(-4000)}`)),
    later(30_000).then(() => new Error(`the second arena was not ready within 30 s:\n${output.slice(-4000)}`)),
  ]);
  if (outcome instanceof Error) {
    await stop();
    throw outcome;
  }
  return { base, stop, log: () => output };
}

// Signs in through the header's account dialog.
export async function signIn(page, name) {
  await page.goto('/lobby');
  // The guest first: until it is made, the header's sign-in has no
  // register tab (no guest to upgrade).
  await page.getByTestId('me').waitFor();
  await page.getByTestId('sign-in').click();
  await page.getByRole('tab').nth(1).click();
  await page.getByTestId('account-username').fill(name);
  await page.getByTestId('account-password').fill(PASSWORD);
  await page.getByTestId('account-submit').click();
  await page.getByTestId('logout-header').waitFor();
}
