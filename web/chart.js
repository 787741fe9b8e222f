// A rating history as a hand-drawn SVG line chart: points evenly spaced by
// game (dates crowd when someone plays ten games in an evening), a few
// horizontal grid lines at round ratings, and the first and last dates.

import { svg } from './dom.js';
import { number, shortDate } from './format.js';

const W = 640;
const H = 240;
const PAD = { left: 44, right: 14, top: 14, bottom: 28 };

function niceStep(range) {
  const rough = range / 4;
  const power = 10 ** Math.floor(Math.log10(rough || 1));
  for (const factor of [1, 2, 5, 10]) {
    if (factor * power >= rough) return factor * power;
  }
  return 10 * power;
}

export function ratingChart(points, { label }) {
  const ratings = points.map((p) => p.rating);
  let low = Math.min(...ratings);
  let high = Math.max(...ratings);
  if (high - low < 40) {
    const mid = (high + low) / 2;
    low = mid - 20;
    high = mid + 20;
  }
  const step = niceStep(high - low);
  low = Math.floor(low / step) * step;
  high = Math.ceil(high / step) * step;
  const innerW = W - PAD.left - PAD.right;
  const innerH = H - PAD.top - PAD.bottom;
  const x = (i) => PAD.left + (points.length === 1 ? innerW / 2 : (i / (points.length - 1)) * innerW);
  const y = (r) => PAD.top + (1 - (r - low) / (high - low)) * innerH;

  const grid = [];
  for (let r = low; r <= high + 0.001; r += step) {
    grid.push(svg('line', { x1: PAD.left, x2: W - PAD.right, y1: y(r), y2: y(r), class: 'chart-grid' }));
    grid.push(svg('text', { x: PAD.left - 6, y: y(r) + 4, 'text-anchor': 'end', class: 'chart-axis' }, number(r)));
  }
  const path = points.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${y(p.rating).toFixed(1)}`).join(' ');
  const area = `${path} L${x(points.length - 1).toFixed(1)},${PAD.top + innerH} L${x(0).toFixed(1)},${PAD.top + innerH} Z`;
  const dots = points.length <= 60
    ? points.map((p, i) => svg('circle', { cx: x(i), cy: y(p.rating), r: 3, class: 'chart-dot' },
      svg('title', {}, `${shortDate(p.at)}: ${number(p.rating)}`)))
    : [];
  const first = points[0];
  const last = points[points.length - 1];
  return svg('svg', {
    viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': label, 'data-testid': 'rating-chart', preserveAspectRatio: 'xMidYMid meet',
  },
  grid,
  svg('path', { d: area, class: 'chart-area' }),
  svg('path', { d: path, class: 'chart-line' }),
  dots,
  svg('text', { x: PAD.left, y: H - 8, class: 'chart-axis' }, shortDate(first.at)),
  points.length > 1 ? svg('text', { x: W - PAD.right, y: H - 8, 'text-anchor': 'end', class: 'chart-axis' }, shortDate(last.at)) : null);
}
