// Words and numbers shown to players, in the chosen language.

import { has, locale, t } from './i18n.js';

export const VARIANTS = ['kalah', 'oware', 'mangala'];

export function variantOf(spec) {
  return typeof spec === 'string' ? spec : spec?.variant ?? 'kalah';
}

export function variantName(spec) {
  return t(`variant_${variantOf(spec)}`);
}

// Kalah has stores; Oware and Mangala keep captured stones aside.
export function hasStores(spec) {
  return variantOf(spec) === 'kalah';
}

export function timeControlLabel(tc) {
  if (!tc) return t('untimed');
  return `${Math.round(tc.initial_secs / 60)}+${tc.increment_secs}`;
}

// Queue names are `variant:minutes+increment` (APP_QUEUES); the server
// lists them in name order, players expect the faster clock first.
export function sortQueues(queues) {
  const rank = (q) => VARIANTS.indexOf(q.variant) * 1e6 + q.time_control.initial_secs * 100 + q.time_control.increment_secs;
  return [...queues].sort((a, b) => rank(a) - rank(b));
}

export function parseQueue(name) {
  const match = /^([a-z]+):(\d+)\+(\d+)$/.exec(name);
  if (!match) return null;
  return {
    name,
    variant: match[1],
    time_control: { initial_secs: Number(match[2]) * 60, increment_secs: Number(match[3]) },
  };
}

export function clock(ms) {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const minutes = Math.floor(total / 60);
  const seconds = total % 60;
  return `${minutes}:${String(seconds).padStart(2, '0')}`;
}

export function seconds(ms) {
  return t('seconds_short', { n: Math.max(0, Math.ceil(ms / 1000)) });
}

export function number(value, digits = 0) {
  return new Intl.NumberFormat(locale(), { maximumFractionDigits: digits }).format(value);
}

export function signed(value) {
  const rounded = Math.round(value);
  return rounded > 0 ? `+${rounded}` : String(rounded);
}

export function date(iso) {
  const when = new Date(iso);
  if (Number.isNaN(when.getTime())) return '';
  return new Intl.DateTimeFormat(locale(), { dateStyle: 'medium', timeStyle: 'short' }).format(when);
}

export function shortDate(iso) {
  const when = new Date(iso);
  if (Number.isNaN(when.getTime())) return '';
  return new Intl.DateTimeFormat(locale(), { month: 'short', day: 'numeric' }).format(when);
}

export function levelName(level) {
  return has(`level_${level}`) ? t(`level_${level}`) : level;
}

// A seat's display name: AI seats show their level in words.
export function seatName(seat) {
  if (!seat) return '';
  if (seat.ai) return t('ai_named', { level: levelName(seat.ai) });
  return seat.name;
}

export function errorMessage(error) {
  const code = error?.code || 'internal';
  const key = `err_${code}`;
  // A busy server says when to come back: over HTTP in `Retry-After`
  // (ApiError.retryAfter), on a socket in the error's `retry_after`.
  const wait = error?.retryAfter ?? error?.retry_after;
  if (code === 'unavailable' && wait > 0) return t('err_unavailable_wait', { n: wait });
  if (code === 'rate_limited' && error?.context === 'signup') {
    return t('err_signup_limited', { wait: waitText(wait) });
  }
  if (code === 'ranked_banned') return t('err_ranked_banned', { wait: waitText(wait) });
  // Refused with the player's own rated game named: no engine help now.
  if (code === 'not_allowed' && (error?.gameId || error?.game_id)) return t('err_engine_barred');
  return has(key) ? t(key) : t('err_internal');
}

// A wait in the largest unit that reads naturally: "45 s", "12 min".
export function waitText(seconds) {
  if (!(seconds > 0)) return t('wait_a_while');
  if (seconds < 90) return t('seconds_short', { n: Math.ceil(seconds) });
  if (seconds < 90 * 60) return t('minutes_short', { n: Math.ceil(seconds / 60) });
  return t('hours_short', { n: Math.ceil(seconds / 3600) });
}

export function reasonText(reason) {
  return reason && has(`reason_${reason}`) ? t(`reason_${reason}`) : '';
}
