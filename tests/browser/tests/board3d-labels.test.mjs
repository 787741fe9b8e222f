// The 3D board's store labels say whose store it is in full, on a 390 px
// phone as on a desktop, in English and Korean: never cut short with
// "…" ("Oppon…", "Your st…"), for a player (yours / the opponent's, or
// what each captured in Oware) and for a watcher (the players' names).

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DESKTOP, PHONE, assertNoPageErrors, launch, newPage, shoot, startAiGame, waitForGame } from '../lib/harness.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

function settle(page) {
  return page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
}

// Each store label as shown: its text, whether it shows at all, whether
// its text overflows its box (what "…" hides), whether it lies inside
// the picture, and on how many lines.
async function labels(page) {
  await settle(page);
  return page.evaluate(() => {
    const canvas = document.querySelector('[data-testid="board3d"] canvas').getBoundingClientRect();
    return [0, 1].map((seat) => {
      const el = document.querySelector(`[data-testid="store-${seat}"] .store-label`);
      const box = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      const line = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.3;
      return {
        seat,
        text: el.textContent,
        shown: el.checkVisibility({ visibilityProperty: true, opacityProperty: true }) && box.width > 0,
        overflows: el.scrollWidth > el.clientWidth,
        scrollWidth: el.scrollWidth,
        clientWidth: el.clientWidth,
        inside: box.left >= canvas.left - 0.5 && box.right <= canvas.right + 0.5 && box.top >= canvas.top - 0.5 && box.bottom <= canvas.bottom + 0.5,
        oneLine: box.height <= line * 1.5,
        fontPx: parseFloat(style.fontSize),
      };
    });
  });
}

async function assertWhole(page, expected, label) {
  const found = await labels(page);
  for (const entry of found) {
    const where = `${label}, store ${entry.seat} (${JSON.stringify(entry)})`;
    assert.equal(entry.text, expected[entry.seat], `${where}: the label's text`);
    assert.ok(entry.shown, `${where}: shows`);
    assert.ok(!entry.overflows, `${where}: shows whole (scrollWidth ${entry.scrollWidth} > clientWidth ${entry.clientWidth})`);
    assert.ok(entry.inside, `${where}: inside the picture`);
    assert.ok(entry.oneLine, `${where}: on one line`);
    assert.ok(entry.fontPx >= 8, `${where}: readable (${entry.fontPx} px)`);
  }
}

const PLAYER = {
  'en-US': { kalah: ['Your store', 'Opponent’s store'], oware: ['You captured', 'Opponent captured'] },
  'ko-KR': { kalah: ['내 창고', '상대 창고'], oware: ['내가 따낸 돌', '상대가 따낸 돌'] },
};

for (const locale of ['en-US', 'ko-KR']) {
  test(`a player's store labels show whole at 390 and 1280 px, in ${locale}`, { timeout: 120_000 }, async () => {
    for (const variant of ['kalah', 'oware']) {
      const page = await newPage(browser, { viewport: PHONE, locale });
      await startAiGame(page, { variant });
      await page.getByTestId('board3d').waitFor();
      const expected = PLAYER[locale][variant];
      await assertWhole(page, expected, `${variant}, oblique at 390 px`);
      await page.getByTestId('view-above').click();
      await assertWhole(page, expected, `${variant}, from above at 390 px`);
      await page.getByTestId('view-oblique').click();
      await shoot(page, `53-store-labels-${variant}-${locale}`);
      await page.setViewportSize(DESKTOP);
      await assertWhole(page, expected, `${variant} at 1280 px`);
      await page.setViewportSize(PHONE);
      await assertWhole(page, expected, `${variant}, back at 390 px`);
      assertNoPageErrors(page);
      await page.context().close();
    }
  });
}

test('a watcher\'s store labels name the players whole at 390 px', { timeout: 90_000 }, async () => {
  const player = await newPage(browser, { viewport: DESKTOP });
  await startAiGame(player);
  const id = player.url().split('/').pop();
  for (const locale of ['en-US', 'ko-KR']) {
    const watcher = await newPage(browser, { viewport: PHONE, locale });
    await watcher.goto(`/watch/${id}`);
    await waitForGame(watcher);
    await watcher.getByTestId('board3d').waitFor();
    const names = [await watcher.getByTestId('name-bottom').textContent(), await watcher.getByTestId('name-top').textContent()];
    const expected = locale === 'en-US' ? names.map((name) => `${name}’s store`) : names.map((name) => `${name}의 창고`);
    await assertWhole(watcher, expected, `watching in ${locale} at 390 px`);
    await shoot(watcher, `53-store-labels-watch-${locale}`);
    assertNoPageErrors(watcher);
  }
  assertNoPageErrors(player);
});
