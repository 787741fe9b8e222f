// A server that is full answers 503 with `Retry-After` and has done
// nothing: the request is worth sending again once that time is up. While
// any request waits so, a bar at the top counts down to the next try, so
// a busy evening reads as "wait 12 s", not as an error.

import { h, setText } from './dom.js';
import { t } from './i18n.js';

// Tries of one request before its error is shown after all.
export const BUSY_TRIES = 5;
// The longest wait asked for that a request sits out; longer, and the
// error is shown with the wait in it.
const LONGEST_WAIT_S = 120;

const waits = new Map(); // one per waiting request: when it tries again (ms)
let next = 0;
let bar = null;
let ticking = null;

function draw() {
  if (waits.size === 0) {
    bar?.remove();
    bar = null;
    clearInterval(ticking);
    ticking = null;
    return;
  }
  if (!bar) {
    bar = h('div', { class: 'busy-bar', role: 'status', 'aria-live': 'polite', 'data-testid': 'busy-bar' });
    document.body.prepend(bar);
  }
  const soonest = Math.min(...waits.values());
  const seconds = Math.max(0, Math.ceil((soonest - Date.now()) / 1000));
  setText(bar, t('busy_retrying', { n: seconds }));
  bar.dataset.seconds = String(seconds);
}

// Whether a failed request should wait and go again: a refusal that
// says when (`retryAfter` seconds), within reason.
export function worthRetrying(error, attempt) {
  return error?.status === 503 && error.retryAfter > 0
    && error.retryAfter <= LONGEST_WAIT_S && attempt < BUSY_TRIES;
}

// Waits `seconds`, shown in the bar with everything else waiting.
export function sitOut(seconds) {
  const id = (next += 1);
  waits.set(id, Date.now() + seconds * 1000);
  draw();
  if (!ticking) ticking = setInterval(draw, 250);
  return new Promise((done) => {
    setTimeout(() => {
      waits.delete(id);
      draw();
      done();
    }, seconds * 1000);
  });
}
