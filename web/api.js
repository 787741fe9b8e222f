// REST calls and the session behind them. The session (access + refresh
// token) lives in localStorage so a reload, a second tab or a shared invite
// link opened later are the same player. Refresh tokens work once and a
// reused one revokes the whole sign-in (theft detection), so refreshing is
// serialised across tabs with a Web Lock and re-reads storage first: a tab
// that lost the race adopts the winner's tokens instead of replaying the
// spent one.

import { getLang } from './i18n.js';
import { sitOut, worthRetrying } from './busy.js';

const KEY = 'mancala.session';
const listeners = new Set();

export class ApiError extends Error {
  constructor(code, message, status = 0, retryAfter = null, gameId = null) {
    super(message || code);
    this.code = code;
    this.status = status;
    this.retryAfter = retryAfter;
    // The game the error is about (the ranked game still on).
    this.gameId = gameId;
  }
}

let session = read();

function read() {
  try {
    const parsed = JSON.parse(localStorage.getItem(KEY) || 'null');
    return parsed && parsed.access_token && parsed.refresh_token ? parsed : null;
  } catch {
    return null;
  }
}

function save(next, why = 'changed') {
  session = next;
  try {
    if (next) localStorage.setItem(KEY, JSON.stringify(next));
    else localStorage.removeItem(KEY);
  } catch { /* storage unavailable: the session lasts this page */ }
  tell(why);
}

function tell(why) {
  for (const fn of listeners) fn(session?.player ?? null, why);
}

window.addEventListener('storage', (event) => {
  if (event.key !== KEY) return;
  const stored = read();
  const samePlayer = stored?.player?.id === session?.player?.id;
  session = stored;
  for (const fn of listeners) fn(stored?.player ?? null, samePlayer ? 'refreshed' : 'changed');
});

function jwtExpiry(token) {
  try {
    const payload = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    const exp = JSON.parse(atob(payload)).exp;
    return typeof exp === 'number' ? exp * 1000 : null;
  } catch {
    return null;
  }
}

function fromAnswer(body) {
  // The local clock may disagree with the server's; expires_in is relative,
  // so it is the safer of the two when they differ.
  const relative = Date.now() + body.expires_in * 1000;
  const absolute = jwtExpiry(body.access_token);
  return {
    player: body.player,
    access_token: body.access_token,
    refresh_token: body.refresh_token,
    expires_at: absolute ? Math.min(absolute, relative) : relative,
  };
}

export function currentPlayer() {
  return session?.player ?? null;
}

// The role the access token carries (`player`, `moderator`, `admin`): it
// shows the moderators' pages; the server checks it on every call.
export function currentRole() {
  try {
    const payload = session.access_token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(atob(payload)).role || 'player';
  } catch {
    return 'player';
  }
}

export function onSessionChange(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

// One request, sent again while the server says it is too busy to take
// it now (it did nothing with it) and when to come back.
async function raw(method, path, body, token) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await once(method, path, body, token);
    } catch (error) {
      if (!worthRetrying(error, attempt)) throw error;
      await sitOut(error.retryAfter);
    }
  }
}

async function once(method, path, body, token) {
  // The interface's language first: a new guest's name is made in it.
  const headers = { 'accept-language': `${getLang()}, en;q=0.5` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError('network', 'network error');
  }
  if (response.status === 204) return null;
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
  if (!response.ok) {
    const code = data?.code || (response.status >= 500 ? 'unavailable' : 'internal');
    const retry = Number(response.headers.get('retry-after')) || null;
    throw new ApiError(code, data?.message, response.status, retry, data?.game_id ?? null);
  }
  return data;
}

export async function ensureSession() {
  if (!session) await startGuest();
  return session.player;
}

let starting = null;

// Whether a guest is being made now: meanwhile the header waits for it
// rather than offer to sign in for the moment that takes.
export function makingGuest() {
  return starting !== null;
}

function startGuest() {
  if (!starting) {
    starting = raw('POST', '/v1/auth/guest')
      .then((body) => {
        // Signed in meanwhile (the page offers it once no guest could be
        // made, and "try again" may be on its way): that session stands,
        // and the guest is let go.
        if (session) {
          raw('POST', '/v1/auth/logout', { refresh_token: body.refresh_token }).catch(() => {});
          return;
        }
        save(fromAnswer(body), 'guest');
      })
      .catch((error) => {
        // A refusal here is the limit on new players from one address,
        // which deserves its own words.
        if (error.code === 'rate_limited') error.context = 'signup';
        throw error;
      })
      .finally(() => {
        starting = null;
        // None made: whoever waited for it hears there is no session.
        if (!session) tell('no_guest');
      });
    if (!session) tell('making_guest');
  }
  return starting;
}

function withLock(fn) {
  if (navigator.locks?.request) return navigator.locks.request('mancala-session', fn);
  return fn();
}

let refreshing = null;
function refresh() {
  if (!refreshing) {
    refreshing = withLock(refreshLocked).finally(() => { refreshing = null; });
  }
  return refreshing;
}

async function refreshLocked() {
  const stored = read();
  if (stored && session && stored.refresh_token !== session.refresh_token) {
    session = stored;
    if (stored.expires_at - Date.now() > 30_000) return;
  }
  if (!session) {
    await startGuest();
    return;
  }
  const spent = session;
  try {
    const body = await raw('POST', '/v1/auth/refresh', { refresh_token: spent.refresh_token });
    save(fromAnswer(body), 'refreshed');
  } catch (error) {
    if (error.status !== 401) throw error;
    // The sign-in is over (expired, revoked, or replayed elsewhere): carry
    // on as a fresh guest rather than leave the page unusable.
    save(null, 'lost');
    await startGuest();
    window.dispatchEvent(new CustomEvent('sessionlost', { detail: { wasGuest: spent.player.guest } }));
  }
}

// A token that stays valid for at least `minValidMs`: sockets call this
// before `auth`, since a token that expires mid-handshake is refused.
export async function freshToken(minValidMs = 60_000) {
  if (!session) await ensureSession();
  if (session.expires_at - Date.now() <= minValidMs) await refresh();
  return session.access_token;
}

export async function forceRefresh() {
  await refresh();
  return session.access_token;
}

const AUTH_CODES = new Set(['token_expired', 'token_invalid', 'unauthenticated']);

export async function api(method, path, body, { auth = true } = {}) {
  if (!auth) return raw(method, path, body);
  const token = await freshToken();
  try {
    return await raw(method, path, body, token);
  } catch (error) {
    if (error.status !== 401 || !AUTH_CODES.has(error.code)) throw error;
    await refresh();
    return raw(method, path, body, session.access_token);
  }
}

export const get = (path, opts) => api('GET', path, undefined, { auth: false, ...opts });
// A read that is answered better for someone signed in (a player's own
// game's analysis goes first), without making a guest of a visitor.
export const getAsMe = (path) => (session ? api('GET', path) : raw('GET', path));
export const post = (path, body, opts) => api('POST', path, body, opts);

export async function register(username, password) {
  const token = await freshToken();
  const body = await raw('POST', '/v1/auth/register', { username, password }, token);
  save(fromAnswer(body), 'registered');
}

export async function login(username, password) {
  const body = await raw('POST', '/v1/auth/login', { username, password });
  const previous = session;
  save(fromAnswer(body), 'login');
  // A guest left behind cannot be reached again; end its sign-in.
  if (previous?.player?.guest) {
    raw('POST', '/v1/auth/logout', { refresh_token: previous.refresh_token }).catch(() => {});
  }
}

export async function logout() {
  const previous = session;
  save(null, 'logout');
  if (previous) {
    await raw('POST', '/v1/auth/logout', { refresh_token: previous.refresh_token }).catch(() => {});
  }
  await startGuest();
}

// Closes the signed-in account (the server ends every session of it),
// then carries on as a new guest, as after signing out.
export async function closeAccount(password) {
  await api('POST', '/v1/me/close', { password });
  save(null, 'logout');
  await startGuest();
}
