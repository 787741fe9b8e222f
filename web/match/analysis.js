// The analysis of a finished game under its result: a chart of the value
// after each move (seat 0's final lead under best play, in stones), the
// biggest mistakes with the best move, and whether the values are proved
// (Kalah, by the solver) or estimated (the Advanced engine). The server
// works it out once per game, one game at a time, and says when to retry.

import { h, svg } from '../dom.js';
import { t } from '../i18n.js';
import { getAsMe } from '../api.js';

const W = 640;
const H = 200;
const PAD = { left: 36, right: 12, top: 12, bottom: 24 };

function valueChart(moves, names) {
  const points = moves.filter((m) => m.after !== null).map((m) => ({ ply: m.ply, value: m.after }));
  if (points.length === 0) return null;
  const span = Math.max(4, ...points.map((p) => Math.abs(p.value)));
  const last = moves[moves.length - 1].ply;
  const innerW = W - PAD.left - PAD.right;
  const innerH = H - PAD.top - PAD.bottom;
  const x = (ply) => PAD.left + (last <= 1 ? innerW / 2 : ((ply - 1) / (last - 1)) * innerW);
  const y = (v) => PAD.top + (1 - (v + span) / (2 * span)) * innerH;
  const path = points.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.ply).toFixed(1)},${y(p.value).toFixed(1)}`).join(' ');
  return svg('svg', {
    viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'data-testid': 'analysis-chart',
    'aria-label': t('analysis_chart_label', { first: names[0], second: names[1] }), preserveAspectRatio: 'xMidYMid meet',
  },
  svg('line', { x1: PAD.left, x2: W - PAD.right, y1: y(0), y2: y(0), class: 'chart-grid' }),
  svg('text', { x: PAD.left - 6, y: y(span) + 10, 'text-anchor': 'end', class: 'chart-axis' }, `+${Math.round(span)}`),
  svg('text', { x: PAD.left - 6, y: y(-span), 'text-anchor': 'end', class: 'chart-axis' }, `−${Math.round(span)}`),
  svg('text', { x: PAD.left + 4, y: y(span) + 10, class: 'chart-axis' }, names[0]),
  svg('text', { x: PAD.left + 4, y: y(-span) - 4, class: 'chart-axis' }, names[1]),
  svg('path', { d: path, class: 'chart-line' }),
  svg('text', { x: W - PAD.right, y: H - 6, 'text-anchor': 'end', class: 'chart-axis' }, t('analysis_ply', { ply: last })));
}

function stones(value) {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

function mistakes(moves, names) {
  const worst = moves.filter((m) => m.loss !== null && m.loss >= 1)
    .sort((a, b) => b.loss - a.loss || a.ply - b.ply)
    .slice(0, 3);
  if (worst.length === 0) return h('p', { class: 'analysis-none' }, t('analysis_no_mistakes'));
  return h('ol', { class: 'analysis-mistakes', 'data-testid': 'analysis-mistakes' },
    worst.map((m) => h('li', {}, t('analysis_mistake', {
      ply: m.ply, name: names[m.seat], pit: m.pit, loss: stones(m.loss), best: m.best.join(', '),
    }))));
}

function render(box, analysis, names) {
  const exact = analysis.moves.some((m) => m.exact);
  const estimated = analysis.moves.some((m) => !m.exact && m.loss !== null);
  const notes = [];
  if (exact) notes.push(t('analysis_exact'));
  if (estimated) notes.push(t('analysis_estimated'));
  if (!analysis.complete) notes.push(t('analysis_partial'));
  box.replaceChildren(
    h('h3', {}, t('analysis_title')),
    h('div', { class: 'chart-box' }, valueChart(analysis.moves, names)),
    mistakes(analysis.moves, names),
    h('p', { class: 'analysis-note' }, notes.join(' ')),
  );
}

// Fills `box` with game `id`'s analysis; `names` are the seats' names.
// Asked as the player signed in: a game's own players are never told to
// come back, and a busy server's refusals are waited out by the API layer.
export async function showAnalysis(box, id, names) {
  box.replaceChildren(h('p', { class: 'analysis-note' }, t('analysis_loading')));
  try {
    const analysis = await getAsMe(`/v1/games/${id}/analysis`);
    if (!box.isConnected) return;
    if (analysis.moves.length === 0) {
      box.replaceChildren();
      return;
    }
    render(box, analysis, names);
  } catch {
    box.replaceChildren(h('p', { class: 'analysis-note' }, t('analysis_failed')));
  }
}
