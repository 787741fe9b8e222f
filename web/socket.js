// A WebSocket that keeps itself open: it reconnects with jittered
// exponential backoff, says `hello` (auth, then `sync`) on every opening,
// pings every 10 s and treats 25 s of silence as a dead line (a laptop that
// slept or a Wi-Fi switch leaves a socket that never reports closing).

const PING_MS = 10_000;
const SILENCE_MS = 25_000;
const MAX_BACKOFF_MS = 10_000;
// After the server said it is restarting (1012), try again this often for
// a while: the instance (or another) is back within a second or two, and
// the usual backoff would keep the player waiting past it.
const RESTART_RETRY_MS = 400;
const RESTART_WINDOW_MS = 20_000;

// Close codes from the server (mancala_proto::error).
export const CLOSE = {
  policy: 1008,
  tooBig: 1009,
  restart: 1012,
  tryAgain: 1013,
  elsewhere: 4001,
  roomClosed: 4002,
};

function wsBase(httpBase) {
  const url = new URL(httpBase || location.origin);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.origin;
}

export class LiveSocket {
  constructor({ path, hello = async () => [], onMessage, onStatus = () => {} }) {
    this.path = path;
    this.hello = hello;
    this.onMessage = onMessage;
    this.onStatus = onStatus;
    // The page's own origin (the proxy in front of every instance), and
    // where the next connection goes (an `elsewhere` may point past it).
    this.home = wsBase(null);
    this.base = this.home;
    this.ws = null;
    this.attempts = 0;
    this.stopped = true;
    this.retryTimer = null;
    this.pingTimer = null;
    this.lastSeen = 0;
    this.redirected = false;
    this.restartedAt = 0;
    this.status = 'idle';
    this.wake = () => { if (!this.isOpen()) this.reconnectSoon(0); };
    this.onVisible = () => { if (document.visibilityState === 'visible') this.wake(); };
    // The device lost its network: the socket is as good as gone, so say so
    // now (no green dots, no buttons that need the server) rather than
    // after the silence timeout; `online` reconnects.
    this.lost = () => { if (this.ws) this.afterClose(0, 'offline'); };
  }

  start() {
    if (!this.stopped) return;
    this.stopped = false;
    window.addEventListener('online', this.wake);
    window.addEventListener('offline', this.lost);
    document.addEventListener('visibilitychange', this.onVisible);
    this.connect();
  }

  stop() {
    this.stopped = true;
    window.removeEventListener('online', this.wake);
    window.removeEventListener('offline', this.lost);
    document.removeEventListener('visibilitychange', this.onVisible);
    clearTimeout(this.retryTimer);
    this.detach(true);
    this.setStatus('stopped');
  }

  isOpen() {
    return this.status === 'open';
  }

  send(message) {
    if (!this.isOpen()) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  // `elsewhere`: another instance hosts the game. Its own close (4001)
  // follows; the next connection goes to the new base at once.
  // Without an address (the other instance never said where it is), the
  // page's own origin, whose proxy routes to whoever hosts the game.
  moveTo(httpBase) {
    const next = httpBase ? wsBase(httpBase) : this.home;
    // Sent back to where we are: the old host's lease has not run out yet
    // (a crashed instance), so keep backing off until it does.
    this.redirected = next !== this.base;
    this.base = next;
    if (this.redirected) this.attempts = 0;
  }

  setStatus(status, detail) {
    this.status = status;
    this.onStatus(status, detail);
  }

  connect() {
    if (this.stopped) return;
    this.detach(false);
    this.setStatus(this.attempts === 0 ? 'connecting' : 'reconnecting');
    let ws;
    try {
      ws = new WebSocket(this.base + this.path);
    } catch {
      this.reconnectSoon();
      return;
    }
    this.ws = ws;
    ws.onopen = async () => {
      let greeting;
      try {
        greeting = await this.hello();
      } catch {
        if (this.ws === ws) ws.close();
        return;
      }
      if (this.ws !== ws || ws.readyState !== WebSocket.OPEN) return;
      for (const message of greeting) ws.send(JSON.stringify(message));
      this.lastSeen = Date.now();
      this.setStatus('open');
      this.pingTimer = setInterval(() => this.heartbeat(), PING_MS);
    };
    ws.onmessage = (event) => {
      if (this.ws !== ws) return;
      this.lastSeen = Date.now();
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      // Backoff restarts only once the server accepted us: a socket that
      // opens and is refused at once (a bad token) must not retry hot.
      if (message.t !== 'error' && message.t !== 'elsewhere') this.attempts = 0;
      if (message.t !== 'pong') this.onMessage(message);
    };
    ws.onclose = (event) => {
      if (this.ws !== ws) return;
      this.afterClose(event.code, event.reason);
    };
  }

  heartbeat() {
    if (Date.now() - this.lastSeen > SILENCE_MS) {
      this.afterClose(0, 'silent');
      return;
    }
    this.send({ t: 'ping' });
  }

  afterClose(code, reason) {
    const wasOpen = this.status === 'open';
    this.detach(true);
    if (this.stopped) return;
    this.setStatus('closed', { code, reason });
    if (this.stopped) return;
    if (code === CLOSE.roomClosed) {
      this.stop();
      return;
    }
    if (code === CLOSE.restart) this.restartedAt = Date.now();
    const redirected = code === CLOSE.elsewhere && this.redirected;
    this.redirected = false;
    // A host we were sent to that does not answer (it died, or its address
    // is not reachable from here): back to the page's origin, which routes
    // to whichever instance hosts the game now.
    if (!wasOpen && code !== CLOSE.elsewhere && this.base !== this.home) this.base = this.home;
    // A socket refused with 1012 (the instance is stopping) retries on the
    // restart period rather than at once, which would spin until it exits.
    const now = redirected || (wasOpen && code !== CLOSE.policy && code !== CLOSE.elsewhere);
    this.reconnectSoon(now ? 0 : undefined);
  }

  reconnectSoon(delay) {
    if (this.stopped) return;
    clearTimeout(this.retryTimer);
    const restarting = Date.now() - this.restartedAt < RESTART_WINDOW_MS;
    const backoff = restarting ? RESTART_RETRY_MS : Math.min(MAX_BACKOFF_MS, 500 * 2 ** this.attempts);
    const wait = delay ?? backoff * (0.75 + Math.random() * 0.5);
    this.attempts += 1;
    this.retryTimer = setTimeout(() => this.connect(), wait);
  }

  detach(closeIt) {
    clearInterval(this.pingTimer);
    this.pingTimer = null;
    const ws = this.ws;
    this.ws = null;
    if (!ws) return;
    ws.onopen = ws.onmessage = ws.onclose = null;
    if (closeIt && ws.readyState <= WebSocket.OPEN) {
      try { ws.close(1000); } catch { /* already gone */ }
    }
  }
}
