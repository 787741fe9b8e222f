// "Play by buttons": the board again as plain buttons beside it (below it
// on a narrow screen), laid out the same way, each with its count. It is
// for whoever finds the pits hard to hit or read (a small screen, a
// screen reader, a keyboard), and the whole board where there is no 3D.
// One press plays: these are buttons, not stones to aim at.

import { h, setText } from './dom.js';
import { t } from './i18n.js';

export function createPanel({ onPlay }) {
  const pits = [[], []];
  const stores = [];
  const grid = h('div', { class: 'panel-grid' });
  const title = h('h2', { class: 'panel-title', id: 'panel-title' });
  const el = h('section', { class: 'play-panel', 'data-testid': 'panel', 'aria-labelledby': 'panel-title' }, title, grid);

  for (const seat of [0, 1]) {
    for (let pit = 1; pit <= 6; pit += 1) {
      const button = h('button', {
        type: 'button',
        class: 'panel-pit',
        'data-testid': `panel-pit-${seat}-${pit}`,
        dataset: { seat: String(seat), pit: String(pit) },
        disabled: true,
        onclick: () => {
          if (button.dataset.playable === 'true') onPlay(seat, pit);
        },
      }, h('span', { class: 'panel-number' }), h('span', { class: 'panel-count' }));
      pits[seat].push(button);
      grid.append(button);
    }
    const store = h('div', { class: 'panel-store', 'data-testid': `panel-store-${seat}`, role: 'img' },
      h('span', { class: 'panel-store-label' }), h('span', { class: 'panel-count' }));
    stores.push(store);
    grid.append(store);
  }

  // The same view the board gets: whose row is at the bottom, what may be
  // played, the last move (orange on both).
  function update({ board, bottom, playableSeat, legal, last, owner, storeLabel }) {
    setText(title, t('panel_title'));
    const legalSet = new Set(legal || []);
    for (const seat of [0, 1]) {
      pits[seat].forEach((button, index) => {
        const pit = index + 1;
        // The bottom row reads 1..6 left to right; the top row is seen
        // from across the table, as on the board.
        button.style.gridRow = seat === bottom ? '2' : '1';
        button.style.gridColumn = String(seat === bottom ? pit + 1 : 8 - pit);
        const count = board.pits[seat][index] ?? 0;
        setText(button.querySelector('.panel-number'), String(pit));
        setText(button.querySelector('.panel-count'), String(count));
        const playable = seat === playableSeat && legalSet.has(pit);
        button.disabled = !playable;
        button.dataset.playable = String(playable);
        const isLast = Boolean(last && last.seat === seat && last.pit === pit);
        button.classList.toggle('is-last', isLast);
        button.dataset.last = String(isLast);
        button.setAttribute('aria-label', t('pit_label', { owner: owner(seat), pit, count })
          + (isLast ? `, ${t('last_move')}` : ''));
      });
      const store = stores[seat];
      store.style.gridRow = '1 / span 2';
      store.style.gridColumn = seat === bottom ? '8' : '1';
      const label = storeLabel(seat);
      const count = board.score[seat] ?? 0;
      setText(store.querySelector('.panel-store-label'), label);
      setText(store.querySelector('.panel-count'), String(count));
      store.dataset.count = String(count);
      store.setAttribute('aria-label', `${label}: ${count}`);
    }
  }

  return { el, update };
}
