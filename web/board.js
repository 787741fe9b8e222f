// The board, drawn as a CSS grid: the seat at the bottom plays its pits
// 1..6 left to right into its store on the right; the seat at the top is
// seen from across the table, so its pit 1 is on the viewer's right and
// its store on the left. Sowing then runs counter-clockwise on screen, as
// on a real board.

import { h, setText } from './dom.js';
import { t } from './i18n.js';
import { hasStores } from './format.js';

const MAX_DRAWN_STONES = 14;

// Stones sit on rings around the centre, where the count is written, at
// fixed slightly irregular places so a pit looks the same from one move to
// the next instead of reshuffling.
const SPOTS = (() => {
  const spots = [];
  const ring = (count, radius, turn) => {
    for (let i = 0; i < count; i += 1) {
      const angle = turn + (i / count) * Math.PI * 2;
      const wobble = i % 2 ? 3 : -2;
      spots.push([50 + Math.cos(angle) * (radius + wobble), 50 + Math.sin(angle) * (radius + wobble)]);
    }
  };
  ring(7, 33, -Math.PI / 2);
  ring(7, 33, -Math.PI / 2 + Math.PI / 7);
  return spots;
})();
const STONE_HUES = ['#e9dcc4', '#cfd9d4', '#e8c8a8', '#d8d1e6', '#f0e2b8', '#c9dbe8'];

function stones(count) {
  const shown = Math.min(count, MAX_DRAWN_STONES);
  const list = [];
  for (let i = 0; i < shown; i += 1) {
    const [x, y] = SPOTS[i];
    list.push(h('span', {
      class: 'stone',
      style: `left:${x.toFixed(1)}%;top:${y.toFixed(1)}%;background:${STONE_HUES[i % STONE_HUES.length]}`,
    }));
  }
  return list;
}

// Touch forgives: the first tap on a pit selects it, a second tap on the
// same pit plays it. A mouse click (or Enter on a focused pit) plays at
// once. `onSelect` hears the selected pit ("seat-pit", or null).
function tapToPlay(onPlay, onSelect) {
  let pointer = 'mouse';
  let selected = null;
  function select(key) {
    selected = key;
    onSelect(key);
  }
  return {
    // Remember how the next click comes: `pointerdown` precedes it.
    pointerdown(event) { pointer = event.pointerType || 'mouse'; },
    click(seat, pit) {
      const key = `${seat}-${pit}`;
      const touch = pointer === 'touch' || pointer === 'pen';
      pointer = 'mouse';
      if (touch && selected !== key) {
        select(key);
        return;
      }
      select(null);
      onPlay(seat, pit);
    },
  };
}

export function createBoard({ onPlay }) {
  const pits = [[], []];
  const stores = [];
  const el = h('div', { class: 'board', role: 'group', 'data-testid': 'board' });
  const taps = tapToPlay(onPlay, (key) => {
    for (const seat of [0, 1]) {
      pits[seat].forEach((button, index) => button.classList.toggle('is-selected', key === `${seat}-${index + 1}`));
    }
  });
  el.addEventListener('pointerdown', (event) => taps.pointerdown(event));

  for (const seat of [0, 1]) {
    for (let pit = 1; pit <= 6; pit += 1) {
      const button = h('button', {
        type: 'button',
        class: 'pit',
        'data-testid': `pit-${seat}-${pit}`,
        dataset: { seat: String(seat), pit: String(pit), count: '0' },
        disabled: true,
        onclick: () => {
          if (button.classList.contains('is-playable')) taps.click(seat, pit);
        },
      }, h('span', { class: 'stones', 'aria-hidden': 'true' }), h('span', { class: 'count' }));
      pits[seat].push(button);
      el.append(button);
    }
    const store = h('div', { class: 'store', 'data-testid': `store-${seat}`, dataset: { seat: String(seat), count: '0' } },
      h('span', { class: 'count' }),
      h('span', { class: 'store-label' }));
    stores.push(store);
    el.append(store);
  }

  let drawn = false;

  function setCount(node, count, animate) {
    const before = Number(node.dataset.count);
    node.dataset.count = String(count);
    setText(node.querySelector('.count'), String(count));
    if (animate && before !== count) {
      node.classList.remove('bump');
      void node.offsetWidth; // restart the animation
      node.classList.add('bump');
    }
  }

  function update(view) {
    const { board, bottom, variant, playableSeat, legal, last, owner, storeLabel } = view;
    const top = 1 - bottom;
    el.dataset.bottom = String(bottom);
    el.setAttribute('aria-label', t('board_label'));
    const legalSet = new Set(legal || []);
    for (const seat of [0, 1]) {
      const row = seat === bottom ? 2 : 1;
      pits[seat].forEach((button, index) => {
        const pit = index + 1;
        const column = seat === bottom ? pit + 1 : 8 - pit;
        button.style.gridRow = String(row);
        button.style.gridColumn = String(column);
        const count = board.pits[seat][index] ?? 0;
        if (Number(button.dataset.count) !== count || !drawn) {
          button.querySelector('.stones').replaceChildren(...stones(count));
        }
        setCount(button, count, drawn);
        const playable = seat === playableSeat && legalSet.has(pit);
        if (!playable) button.classList.remove('is-selected');
        button.classList.toggle('is-playable', playable);
        button.disabled = !playable;
        button.dataset.playable = String(playable);
        const isLast = Boolean(last && last.seat === seat && last.pit === pit);
        button.classList.toggle('is-last', isLast);
        button.dataset.last = String(isLast);
        button.classList.toggle('is-top', seat === top);
        button.setAttribute('aria-label', t('pit_label', { owner: owner(seat), pit, count })
          + (isLast ? `, ${t('last_move')}` : ''));
      });
      const store = stores[seat];
      store.style.gridColumn = seat === bottom ? '8' : '1';
      store.style.gridRow = '1 / span 2';
      setCount(store, board.score[seat] ?? 0, drawn);
      const label = storeLabel ? storeLabel(seat) : hasStores(variant) ? t('store') : t('captured');
      setText(store.querySelector('.store-label'), label);
      store.setAttribute('aria-label', storeLabel
        ? `${label}: ${board.score[seat] ?? 0}`
        : t('store_label', { owner: owner(seat), what: label, count: board.score[seat] ?? 0 }));
      store.setAttribute('role', 'img');
    }
    el.classList.toggle('no-stores', !hasStores(variant));
    drawn = true;
  }

  function focusPit(seat, pit) {
    pits[seat]?.[pit - 1]?.focus();
  }

  return { el, update, focusPit, pits, stores };
}
