// A player who closed the browser in the middle of a game with a friend
// comes back to `/` and finds the way back to it at the top of the lobby
// ("Your games in progress"), in Korean and English, on the same profile
// (a browser that keeps its storage); the link takes them to the game,
// as a player, where it was. Once the game is over the lobby no longer
// offers it.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  DESKTOP, PHONE, assertNoPageErrors, keptProfile, launch, newPage, playablePits, readGame, shoot, startFriendGame,
  waitForGame, waitPastPly,
} from '../lib/harness.mjs';

let browser;
let profile;
before(async () => { browser = await launch(); });
after(async () => {
  await profile?.remove();
  await browser?.close();
});

test('after closing the browser mid-game, the lobby leads back to the game', { timeout: 120_000 }, async () => {
  profile = keptProfile({ viewport: PHONE, locale: 'ko-KR' });
  await profile.open();
  const alice = await profile.page();
  const bob = await newPage(browser, { viewport: DESKTOP });
  await startFriendGame(alice, bob, { variant: 'kalah' });
  const gameId = alice.url().split('/').pop();

  // Each side moves (a game both have begun), and Alice's turn comes back.
  let state = await readGame(alice);
  let bobMoved = false;
  while (!(bobMoved && state.turn === 0)) {
    const mover = state.turn === 0 ? alice : bob;
    bobMoved ||= mover === bob;
    await playablePits(mover).first().click();
    await waitPastPly(alice, state.ply);
    state = await readGame(alice);
  }
  const left = state;
  assertNoPageErrors(alice);

  // Alice closes her browser, and opens it again on the same profile.
  await profile.close();
  await profile.open();
  const back = await profile.page();
  await back.goto('/');
  const mine = back.getByTestId('my-games');
  await mine.waitFor();
  assert.equal(await mine.locator('h2').textContent(), '진행 중인 내 대국');
  const row = mine.getByTestId('my-game');
  assert.equal(await row.count(), 1, 'one game in progress');
  assert.equal(await row.getAttribute('data-game-id'), gameId);
  assert.equal(await row.getByTestId('my-game-return').textContent(), '대국으로 돌아가기');
  assert.match(await row.textContent(), /칼라/);
  // At the top of the lobby, before everything else.
  const first = await back.evaluate(() => document.querySelector('.lobby-main > :not(h1)').querySelector('[data-testid="my-games"]') !== null);
  assert.ok(first, 'the games in progress come first');
  await shoot(back, '51-lobby-my-games-ko');
  await back.getByTestId('lang-switch').click();
  await mine.locator('h2').filter({ hasText: 'Your games in progress' }).waitFor();
  assert.equal(await row.getByTestId('my-game-return').textContent(), 'Return to the game');
  await shoot(back, '51-lobby-my-games-en');

  // The link: the same game, as its player, where it was left.
  await row.getByTestId('my-game-return').click();
  await back.waitForURL(new RegExp(`/game/${gameId}$`));
  const game = await waitForGame(back);
  await back.locator('[data-testid="game"][data-status="live"]').waitFor();
  assert.equal(game.status, 'live');
  assert.equal(game.you, 0, 'Alice holds her seat');
  assert.equal(await back.getByTestId('game').getAttribute('data-you'), '0');
  assert.equal(game.ply, left.ply, 'where it was left');
  // And it plays on: Alice's move reaches Bob.
  await back.waitForFunction(() => document.querySelector('[data-testid^="pit-"][data-playable="true"]'));
  await playablePits(back).first().click();
  await waitPastPly(bob, left.ply);
  assert.ok((await readGame(bob)).ply > left.ply, 'Bob sees the move');

  // Over: the lobby, opened again, no longer offers it.
  await bob.getByTestId('resign').click();
  await bob.getByTestId('confirm-ok').click();
  await back.getByTestId('result').waitFor();
  await back.goto('/');
  await back.getByTestId('lobby').waitFor();
  await back.getByTestId('stat-online').filter({ hasText: /\d/ }).waitFor();
  await back.waitForTimeout(500);
  assert.equal(await back.getByTestId('my-games').count(), 0, 'no game in progress now');
  assertNoPageErrors(back, bob);
});
