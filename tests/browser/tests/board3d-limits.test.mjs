// The 3D board turned and zoomed as far as it goes, on a phone and on a
// desktop: every pit, count and store label stays inside the picture (or
// is hidden and cannot be pressed), none lies under the view buttons, the
// view buttons bring the zoom back to 1, long names stay on one line, and
// the picture is as tall as the board in it, with no empty bands.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { PHONE, assertNoPageErrors, launch, newPage, startAiGame, waitForGame } from '../lib/harness.mjs';

const ARTIFACTS = process.env.ARTIFACTS || path.resolve(import.meta.dirname, '../../artifacts/browser');
const WIDE = { width: 1280, height: 800 };
// The widest a pit's ring is drawn outside its button (last move and
// playable at once).
const RING = 7;
// An empty band this tall above or below the board is too much.
const MAX_BAND = 20;
// Wheel clicks enough to go from one end of the zoom to the other.
const ZOOM_CLICKS = 12;

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

// Two frames: the board draws on the next animation frame after a change.
function settle(page) {
  return page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
}

// A point of the bare picture (no pit, store or button over it), nearest
// to where `fx`, `fy` (fractions of the canvas) asks.
async function barePoint(page, fx, fy) {
  const point = await page.evaluate(([wantX, wantY]) => {
    const canvas = document.querySelector('[data-testid="board3d"] canvas');
    const box = canvas.getBoundingClientRect();
    const want = [box.left + box.width * wantX, box.top + box.height * wantY];
    const candidates = [];
    for (let y = box.top + 2; y < box.bottom - 2; y += 3) {
      for (let x = box.left + 2; x < box.right - 2; x += 3) candidates.push({ x, y, d: Math.hypot(x - want[0], y - want[1]) });
    }
    candidates.sort((a, b) => a.d - b.d);
    return candidates.find(({ x, y }) => document.elementFromPoint(x, y) === canvas) ?? null;
  }, [fx, fy]);
  assert.ok(point, 'some of the picture is bare');
  return point;
}

// A mouse drag on the picture by (dx, dy), in steps, starting where it is
// bare (so the drag turns the view) on the side it moves away from, and
// ending inside the viewport.
async function drag(page, dx, dy) {
  await settle(page); // a view button just pressed may reshape the canvas
  const from = await barePoint(page, dx < 0 ? 0.98 : 0.02, dy < 0 ? 0.98 : 0.02);
  const size = page.viewportSize();
  const to = [Math.max(2, Math.min(size.width - 2, from.x + dx)), Math.max(2, Math.min(size.height - 2, from.y + dy))];
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move(to[0], to[1], { steps: 12 });
  await page.mouse.up();
  await settle(page);
}

// The wheel, `clicks` times, at a point of the picture (fractions of it).
async function wheel(page, clicks, fx = 0.5, fy = 0.5) {
  const box = await page.getByTestId('board3d').locator('canvas').boundingBox();
  await page.mouse.move(box.x + box.width * fx, box.y + box.height * fy);
  for (let i = 0; i < Math.abs(clicks); i += 1) await page.mouse.wheel(0, clicks < 0 ? -100 : 100);
  await settle(page);
}

// Two fingers on the bare picture moving apart (or together) by `spread`
// px each, through the DevTools protocol's touch events.
async function pinch(page, spread) {
  const left = await barePoint(page, 0.4, 0.5);
  const right = await barePoint(page, 0.6, 0.5);
  const cdp = await page.context().newCDPSession(page);
  const points = (d) => [{ x: left.x - d, y: left.y, id: 1 }, { x: right.x + d, y: right.y, id: 2 }];
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: points(0) });
  for (let step = 1; step <= 10; step += 1) {
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: points((spread * step) / 10) });
  }
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await cdp.detach();
  await settle(page);
}

function zoomOf(page) {
  return page.getByTestId('board3d').evaluate((el) => Number(el.dataset.zoom));
}

// Everything laid over the picture that shows must lie inside the canvas
// (pits with their rings), away from the view buttons, and a store label
// on one line; what does not show must not take a press either. With
// `whole`, the whole board is in the picture and everything must show.
async function overlayProblems(page, whole) {
  return page.evaluate(({ ring, whole }) => {
    const wrap = document.querySelector('[data-testid="board3d"]');
    const canvas = wrap.querySelector('canvas').getBoundingClientRect();
    const bar = wrap.querySelector('.board3d-views').getBoundingClientRect();
    const problems = [];
    const inside = (box, pad) => box.left - pad >= canvas.left - 0.5 && box.right + pad <= canvas.right + 0.5
      && box.top - pad >= canvas.top - 0.5 && box.bottom + pad <= canvas.bottom + 0.5;
    const overlaps = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    const name = (el) => el.dataset.testid || `${el.className} of ${el.parentElement.dataset.testid}`;
    const round = (box) => [box.left, box.top, box.right, box.bottom].map((v) => Math.round(v)).join(',');
    if (!inside(bar, 0)) problems.push(`the view buttons ${round(bar)} outside the canvas ${round(canvas)}`);
    for (const el of wrap.querySelectorAll('.pit, .store, .store-label, .count')) {
      const box = el.getBoundingClientRect();
      if (!el.checkVisibility({ visibilityProperty: true, opacityProperty: true }) || box.width === 0) {
        if (whole) problems.push(`${name(el)} is hidden with the whole board in the picture`);
        const pit = el.closest('.pit');
        const x = box.left + box.width / 2;
        const y = box.top + box.height / 2;
        if (pit && x >= 0 && y >= 0 && x < innerWidth && y < innerHeight && document.elementFromPoint(x, y)?.closest('.pit') === pit) {
          problems.push(`${name(el)} is hidden but takes a press`);
        }
        continue;
      }
      const isPit = el.classList.contains('pit');
      if (!inside(box, isPit ? ring : 0)) problems.push(`${name(el)} ${round(box)} outside the canvas ${round(canvas)}`);
      if (isPit && overlaps(box, bar)) problems.push(`${name(el)} ${round(box)} under the view buttons ${round(bar)}`);
      if (el.classList.contains('store-label')) {
        const line = parseFloat(getComputedStyle(el).lineHeight) || parseFloat(getComputedStyle(el).fontSize) * 1.3;
        if (box.height > line * 1.5) problems.push(`${name(el)} "${el.textContent}" wraps (${Math.round(box.height)} px high)`);
      }
    }
    return problems;
  }, { ring: RING, whole });
}

async function assertOverlaysInside(page, label, { whole = false } = {}) {
  assert.deepEqual(await overlayProblems(page, whole), [], `${label}: what lies over the 3D board`);
}

// The empty bands above and below the board as drawn: rows of the canvas
// with no board in them (nothing but the page's background), counting
// the view buttons' strip as used.
async function emptyBands(page) {
  const canvas = page.getByTestId('board3d').locator('canvas');
  const box = await canvas.boundingBox();
  const png = (await page.screenshot({ clip: box })).toString('base64');
  return page.evaluate(async ({ png: data }) => {
    const wrap = document.querySelector('[data-testid="board3d"]');
    const area = wrap.querySelector('canvas').getBoundingClientRect();
    const bar = wrap.querySelector('.board3d-views').getBoundingClientRect();
    let node = wrap;
    let background = 'rgba(0, 0, 0, 0)';
    while (node && /rgba\(0, 0, 0, 0\)|transparent/.test(background)) {
      background = getComputedStyle(node).backgroundColor;
      node = node.parentElement;
    }
    const bg = background.match(/\d+/g).map(Number);
    const image = await createImageBitmap(await (await fetch(`data:image/png;base64,${data}`)).blob());
    const scratch = new OffscreenCanvas(image.width, image.height);
    const context = scratch.getContext('2d');
    context.drawImage(image, 0, 0);
    const pixels = context.getImageData(0, 0, image.width, image.height).data;
    const scale = image.width / area.width;
    const barBottom = Math.max(0, (bar.bottom - area.top) * scale);
    const barLeft = (bar.left - area.left) * scale;
    const rows = [];
    for (let y = 0; y < image.height; y += 1) {
      let differing = 0;
      for (let x = 0; x < image.width; x += 1) {
        if (y < barBottom && x >= barLeft) continue;
        const i = (y * image.width + x) * 4;
        if (Math.abs(pixels[i] - bg[0]) + Math.abs(pixels[i + 1] - bg[1]) + Math.abs(pixels[i + 2] - bg[2]) > 36) differing += 1;
      }
      if (differing > image.width * 0.02) rows.push(y);
    }
    if (rows.length === 0) return { above: area.height, below: area.height, height: area.height };
    const first = rows[0];
    const last = rows[rows.length - 1];
    return {
      above: Math.max(0, first - barBottom) / scale,
      below: (image.height - 1 - last) / scale,
      height: area.height,
    };
  }, { png });
}

async function assertNoBands(page, label) {
  const bands = await emptyBands(page);
  assert.ok(bands.above <= MAX_BAND && bands.below <= MAX_BAND,
    `${label}: empty bands of ${bands.above.toFixed(0)} px above and ${bands.below.toFixed(0)} px below the board in a ${bands.height.toFixed(0)} px canvas`);
}

async function limits(page, width) {
  const three = page.getByTestId('board3d');
  await three.waitFor();
  await settle(page);
  for (const view of ['oblique', 'above']) {
    await page.getByTestId(`view-${view}`).click();
    await settle(page);
    await assertNoBands(page, `${width} px, ${view}`);
    await assertOverlaysInside(page, `${width} px, ${view}`, { whole: true });
  }
  // Far past every limit: each drag turns the view more than it may go.
  const far = Math.min(width - 20, 600);
  for (const [dx, dy] of [[-far, -300], [far, -300], [-far, 300], [far, 300]]) {
    await page.getByTestId('view-oblique').click();
    const label = `${width} px, dragged by ${dx},${dy}`;
    await drag(page, dx, dy);
    assert.equal(await three.getAttribute('data-view'), 'custom');
    await drag(page, dx, dy);
    await assertOverlaysInside(page, label, { whole: true });
    // Zoomed in as far as it goes towards a corner (the one the drag
    // started from), then all the way out.
    const [fx, fy] = [dx < 0 ? 0.95 : 0.05, dy < 0 ? 0.9 : 0.1];
    await wheel(page, -ZOOM_CLICKS, fx, fy);
    assert.equal(await three.getAttribute('data-zoom'), '2.20', `${label}: zoomed in to the limit`);
    await assertOverlaysInside(page, `${label}, zoomed in at ${fx},${fy}`);
    await wheel(page, ZOOM_CLICKS, fx, fy);
    assert.equal(await three.getAttribute('data-zoom'), '1.00', `${label}: zoomed out to the limit`);
    await assertOverlaysInside(page, `${label}, zoomed out`, { whole: true });
  }
  // The view buttons bring the zoom back.
  await wheel(page, -ZOOM_CLICKS, 0.3, 0.3);
  assert.ok(await zoomOf(page) > 1.5, 'the wheel zooms in');
  await page.getByTestId('view-above').click();
  assert.equal(await three.getAttribute('data-zoom'), '1.00', '"From above" resets the zoom');
  await wheel(page, -ZOOM_CLICKS, 0.7, 0.7);
  await page.getByTestId('view-oblique').click();
  assert.equal(await three.getAttribute('data-zoom'), '1.00', '"Oblique" resets the zoom');
  assert.equal(await three.getAttribute('data-view'), 'oblique');
  await settle(page);
  await assertOverlaysInside(page, `${width} px, oblique again`, { whole: true });
  await assertNoBands(page, `${width} px, oblique again`);
}

// Turned as far as it goes one way and tilted to an end, zoomed all the
// way in at a point, for the screenshots.
async function atLimits(page, width, dx, dy, name) {
  await page.getByTestId('view-oblique').click();
  await drag(page, dx, dy);
  await drag(page, dx, dy);
  await wheel(page, -ZOOM_CLICKS, 0.8, 0.6);
  await assertOverlaysInside(page, `${width} px at the limits (${name})`);
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}-${width}.png`), fullPage: true });
}

async function shootLimits(page, width) {
  const far = Math.min(width - 20, 600);
  await atLimits(page, width, far, 300, 'board3d-limits');
  await atLimits(page, width, -far, -300, 'board3d-limits-low');
  await page.getByTestId('view-oblique').click();
  await settle(page);
  await page.screenshot({ path: path.join(ARTIFACTS, `board3d-oblique-${width}.png`), fullPage: true });
}

test('on a phone, in Korean: the 3D board turned, zoomed and pinched to its limits keeps everything inside', { timeout: 180_000 }, async () => {
  const page = await newPage(browser, { viewport: PHONE, locale: 'ko-KR', touch: true });
  await startAiGame(page);
  await limits(page, PHONE.width);
  // Two fingers apart zoom in; the view buttons never cover a pit.
  await page.getByTestId('view-above').click();
  await pinch(page, 120);
  assert.ok(await zoomOf(page) > 1.3, `a pinch zooms in (${await zoomOf(page)})`);
  await assertOverlaysInside(page, 'phone, pinched from above');
  await pinch(page, -60);
  await assertOverlaysInside(page, 'phone, pinched back a little');
  await page.getByTestId('view-above').click();
  assert.equal(await page.getByTestId('board3d').getAttribute('data-zoom'), '1.00');
  await shootLimits(page, PHONE.width);
  assertNoPageErrors(page);
});

test('on a desktop: the 3D board turned and zoomed to its limits keeps everything inside', { timeout: 180_000 }, async () => {
  const page = await newPage(browser, { viewport: WIDE });
  await startAiGame(page);
  await limits(page, WIDE.width);
  await shootLimits(page, WIDE.width);
  assertNoPageErrors(page);
});

test('a watcher sees whole names on the stores, on one line, at both widths', { timeout: 90_000 }, async () => {
  const player = await newPage(browser, { viewport: WIDE });
  await startAiGame(player);
  const id = player.url().split('/').pop();
  for (const [viewport, locale] of [[PHONE, 'ko-KR'], [WIDE, 'en-US']]) {
    const watcher = await newPage(browser, { viewport, locale });
    await watcher.goto(`/watch/${id}`);
    await waitForGame(watcher);
    await watcher.getByTestId('board3d').waitFor();
    await settle(watcher);
    // Watchers have seat 0 at the bottom; each store says its player's
    // whole name to a screen reader too (board3d-labels.test.mjs checks
    // the label on screen).
    for (const [seat, where] of [[0, 'bottom'], [1, 'top']]) {
      const name = await watcher.getByTestId(`name-${where}`).textContent();
      assert.ok((await watcher.getByTestId(`store-${seat}`).getAttribute('aria-label')).includes(name), `store ${seat} says ${name}`);
    }
    await assertOverlaysInside(watcher, `watching at ${viewport.width} px`, { whole: true });
    await watcher.screenshot({ path: path.join(ARTIFACTS, `board3d-watch-${viewport.width}.png`), fullPage: true });
    assertNoPageErrors(watcher);
  }
  assertNoPageErrors(player);
});
