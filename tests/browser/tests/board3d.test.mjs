// The 3D board: it appears where WebGL works (software WebGL here), its
// viewpoint buttons turn it, and a whole game against the AI is played
// on it, alternating the pits over the 3D picture and the button panel,
// in Korean. Without WebGL the flat board stays (covered by the flat
// board's tests when WebGL is off).

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  DESKTOP, PHONE, assertNoPageErrors, launch, newPage, playToEnd, readGame, shoot, startAiGame,
} from '../lib/harness.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('a whole game on the 3D board and the panel, in Korean', { timeout: 180_000 }, async () => {
  const page = await newPage(browser, { viewport: DESKTOP, locale: 'ko-KR' });
  await startAiGame(page);
  const three = page.getByTestId('board3d');
  await three.waitFor();
  assert.equal(await three.getAttribute('data-view'), 'oblique');
  assert.equal(await page.getByTestId('view-above').textContent(), '위에서');
  await shoot(page, '20-3d-oblique');
  await page.getByTestId('view-above').click();
  assert.equal(await three.getAttribute('data-view'), 'above');
  await shoot(page, '20-3d-above');
  await page.getByTestId('view-oblique').click();
  // Dragging the picture turns the view.
  const box = await three.locator('canvas').boundingBox();
  await page.mouse.move(box.x + 20, box.y + 20);
  await page.mouse.down();
  await page.mouse.move(box.x + 120, box.y + 60, { steps: 5 });
  await page.mouse.up();
  assert.equal(await three.getAttribute('data-view'), 'custom');
  await page.getByTestId('view-oblique').click();
  // The wheel zooms in (and is the picture's, not the page's).
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.wheel(0, -300);
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="board3d"]').dataset.zoom) > 1);
  await page.mouse.wheel(0, 300);

  // The game: my pits over the picture and the panel's buttons in turn.
  const moves = await playToEnd(page, async (state, n) => {
    const pit = Number(await page.locator('[data-testid^="pit-0-"][data-playable="true"]').first().getAttribute('data-pit'));
    await page.getByTestId(n % 2 === 0 ? `pit-0-${pit}` : `panel-pit-0-${pit}`).click();
    // Each pit's button stays over its hollow while the counts change
    // (their bump animation once shifted them): a row is level.
    await page.waitForFunction((ply) => Number(document.querySelector('[data-testid="game"]').dataset.ply) > ply, state.ply);
    const rows = await page.evaluate(() => [0, 1].map((seat) => [1, 2, 3, 4, 5, 6]
      .map((p) => document.querySelector(`[data-testid="pit-${seat}-${p}"]`).getBoundingClientRect())
      .map((box) => box.y + box.height / 2)));
    for (const row of rows) assert.ok(Math.max(...row) - Math.min(...row) < 3, `a row of pits is level: ${row}`);
  });
  await page.getByTestId('result').waitFor();
  const end = await readGame(page);
  assert.equal(end.stores[0] + end.stores[1], 48, 'every stone in a store at the end');
  assert.ok(moves >= 4, `a whole game (${moves} moves of mine)`);
  // The analysis under the result: the value chart, the mistakes, and
  // that the late values are the solver's, in Korean.
  await page.getByTestId('analysis-chart').waitFor({ timeout: 60_000 });
  const analysis = await page.getByTestId('analysis').textContent();
  assert.match(analysis, /분석/);
  assert.match(analysis, /솔버가 증명한 값은 정확합니다/);
  assert.match(analysis, /한 알 이상 손해 본 수가 없습니다|손해 \(최선:/);
  await shoot(page, '20-3d-game-over');
  await page.setViewportSize(PHONE);
  await three.waitFor();
  assertNoPageErrors(page);
});

test('without WebGL the flat board and the panel play', { timeout: 60_000 }, async () => {
  const page = await newPage(browser, { viewport: PHONE });
  // A browser that has no WebGL: every WebGL context is refused.
  await page.addInitScript(() => {
    const original = HTMLCanvasElement.prototype.getContext;
    HTMLCanvasElement.prototype.getContext = function getContext(kind, ...rest) {
      return /webgl/i.test(kind) ? null : original.call(this, kind, ...rest);
    };
  });
  const start = await startAiGame(page);
  assert.equal(await page.getByTestId('board3d').count(), 0, 'no 3D board');
  assert.ok(await page.getByTestId('board').isVisible(), 'the flat board');
  await page.getByTestId('panel-pit-0-3').click();
  await page.waitForFunction((ply) => Number(document.querySelector('[data-testid="game"]').dataset.ply) > ply, start.ply);
  await shoot(page, '20-no-webgl');
  assertNoPageErrors(page);
});

test('each game has tips, history and questions, in both languages', { timeout: 60_000 }, async () => {
  for (const locale of ['en-US', 'ko-KR']) {
    const page = await newPage(browser, { viewport: DESKTOP, locale });
    await page.goto('/help');
    for (const game of ['kalah', 'oware', 'mangala']) {
      for (const part of ['tips', 'history', 'faq']) {
        const section = page.getByTestId(`help-${game}-${part}`);
        await section.waitFor();
        assert.ok((await section.textContent()).length > 80, `${locale} ${game} ${part} says something`);
      }
    }
    const question = page.getByTestId('help-kalah-faq').locator('details').first();
    await question.locator('summary').click();
    assert.ok(await question.locator('p').isVisible(), 'an answer opens');
    await shoot(page, `20-help-${locale}`);
    assertNoPageErrors(page);
  }
});

test('on a phone, a whole game on the 3D board by two taps a move, in Korean', { timeout: 180_000 }, async () => {
  const page = await newPage(browser, { viewport: PHONE, locale: 'ko-KR', touch: true });
  await startAiGame(page);
  await page.getByTestId('board3d').waitFor();
  const moves = await playToEnd(page, async (state, n) => {
    const pits = page.locator('[data-testid^="pit-0-"][data-playable="true"]');
    const pit = pits.nth(n % (await pits.count()));
    await pit.tap();
    assert.equal((await readGame(page)).ply, state.ply, 'the first tap only selects');
    await pit.tap();
  });
  await page.getByTestId('result').waitFor();
  assert.match(await page.locator('[data-testid="result"] .result-title').textContent(), /이겼습니다|졌습니다|무승부/);
  assert.ok(moves >= 4, `a whole game (${moves} moves of mine)`);
  await shoot(page, '20-3d-phone-two-taps');
  assertNoPageErrors(page);
});
