'use strict';
// Closed-loop load client for the Colyseus peer server.
//
//   node loadclient.js --games N --duration-secs S [--warmup-secs W]
//        [--url ws://127.0.0.1:2567] [--json out.json] [--label NAME]
//        [--server-pid PID] [--workers K]
//
// 2N players are kept busy. Each joins a "kalah" room with joinOrCreate,
// plays a random legal move the moment it is its turn (zero think time),
// and when the game ends joins a new room. Players start evenly over the
// first two thirds of the warm-up; the warm-up is left out of the figures.
//
// A move's round trip runs from the send to the mover's receipt of the
// "moved" broadcast for that ply. Only moves sent and acknowledged inside
// the measured window count; moves_per_second is that count over the
// window. Every round trip is kept, so the percentiles are exact, also
// when --workers K splits the players over K worker threads.

const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const { performance } = require('node:perf_hooks');
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');
const kalah = require('./kalah');

// Epoch milliseconds with sub-millisecond resolution, comparable between
// worker threads (each has its own performance.now() origin).
function now() {
  return performance.timeOrigin + performance.now();
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---------------------------------------------------------------- players

// Drives `players` players until `windowEnd`; resolves with the raw results.
async function drive({ url, players, windowStart, windowEnd, rampEnd }) {
  const { Client } = require('colyseus.js');
  const client = new Client(url);
  const samples = new Float64Array(1 << 16);
  const res = {
    samples,
    count: 0,
    moves: 0, // acknowledged inside the window (sent inside it too)
    gamesFinished: 0, // games that ended inside the window (seat 0 counts them)
    gamesStarted: 0,
    errors: {},
  };
  let rtts = samples;
  let stopping = false;
  const rooms = new Set();

  function error(kind) {
    // After the window, players of other workers are already leaving: what
    // follows from that is not an error.
    if (stopping || now() > windowEnd) return;
    res.errors[kind] = (res.errors[kind] || 0) + 1;
  }

  function record(sentAt, ackAt) {
    if (sentAt < windowStart || ackAt > windowEnd) return;
    if (res.count === rtts.length) {
      const bigger = new Float64Array(rtts.length * 2);
      bigger.set(rtts);
      rtts = bigger;
    }
    rtts[res.count++] = ackAt - sentAt;
    res.moves += 1;
  }

  // Plays one game in `room`; resolves when it is over or broken.
  function playGame(room) {
    return new Promise((resolve) => {
      let seat = -1;
      let board = null;
      let ply = 0;
      let pendingPly = 0;
      let sentAt = 0;
      let done = false;

      function finish(leave) {
        if (done) return;
        done = true;
        rooms.delete(room);
        if (leave) room.leave(true).catch(() => {});
        resolve();
      }

      function move() {
        const pits = kalah.legalPits(board, seat);
        if (pits.length === 0) {
          error('no_legal_move');
          return finish(true);
        }
        const pit = pits[Math.floor(Math.random() * pits.length)];
        pendingPly = ply + 1;
        sentAt = now();
        room.send('move', { pit, ply: pendingPly });
      }

      room.onMessage('start', (m) => {
        if (stopping) return;
        seat = m.seats.indexOf(room.sessionId);
        if (seat < 0) {
          error('not_seated');
          return finish(true);
        }
        board = m.board;
        ply = m.ply;
        if (seat === 0) res.gamesStarted += 1;
        if (m.turn === seat) move();
      });

      room.onMessage('moved', (m) => {
        const t = now();
        if (stopping || done) return;
        if (m.by === seat && m.ply === pendingPly) {
          record(sentAt, t);
          pendingPly = 0;
        }
        board = m.board;
        ply = m.ply;
        if (m.over) {
          if (seat === 0 && t >= windowStart && t <= windowEnd) res.gamesFinished += 1;
          return finish(true);
        }
        if (m.turn === seat) move();
      });

      room.onMessage('error', (m) => {
        error(`server_${m && m.code}`);
        finish(true); // the opponent gets "abandoned" and rejoins too
      });

      room.onMessage('abandoned', () => {
        error('abandoned');
        finish(true);
      });

      room.onLeave(() => {
        if (!done) error('disconnected');
        finish(false);
      });

      room.onError((code) => {
        error(`room_error_${code}`);
      });
    });
  }

  async function player(startAt) {
    const delay = startAt - now();
    if (delay > 0) await sleep(delay);
    while (!stopping) {
      let room;
      try {
        room = await client.joinOrCreate('kalah');
      } catch (e) {
        error('join_failed');
        await sleep(200);
        continue;
      }
      if (stopping) {
        room.onMessage('*', () => {}); // drop what the server still sends
        room.leave(true).catch(() => {});
        break;
      }
      rooms.add(room);
      await playGame(room);
    }
  }

  const t0 = now();
  const spread = Math.max(0, rampEnd - t0);
  const loops = [];
  for (let i = 0; i < players; i++) {
    loops.push(player(t0 + (spread * i) / players));
  }

  await sleep(Math.max(0, windowEnd - now()));
  stopping = true;
  res.samples = rtts.slice(0, res.count);

  // Let the server see clean leaves; do not wait long for it.
  for (const room of rooms) room.leave(true).catch(() => {});
  await Promise.race([Promise.allSettled(loops), sleep(1000)]);
  return res;
}

if (!isMainThread) {
  drive(workerData).then(
    (res) => parentPort.postMessage(res, [res.samples.buffer]),
    (e) => {
      throw e;
    },
  );
  return;
}

// ---------------------------------------------------------------- main

function parseArgs(argv) {
  const opts = {
    games: 100,
    durationSecs: 20,
    warmupSecs: 3,
    url: 'ws://127.0.0.1:2567',
    json: null,
    label: 'colyseus-0.16',
    serverPid: null,
    workers: 1,
  };
  const take = (i) => {
    if (i + 1 >= argv.length) usage(`${argv[i]} needs a value`);
    return argv[i + 1];
  };
  for (let i = 0; i < argv.length; i += 2) {
    const a = argv[i];
    switch (a) {
      case '--games': opts.games = Number(take(i)); break;
      case '--duration-secs': opts.durationSecs = Number(take(i)); break;
      case '--warmup-secs': opts.warmupSecs = Number(take(i)); break;
      case '--url': opts.url = take(i); break;
      case '--json': opts.json = take(i); break;
      case '--label': opts.label = take(i); break;
      case '--server-pid': opts.serverPid = Number(take(i)); break;
      case '--workers': opts.workers = Number(take(i)); break;
      case '-h': case '--help': usage(null); break;
      default: usage(`unknown option ${a}`);
    }
  }
  if (!(Number.isInteger(opts.games) && opts.games > 0)) usage('--games must be a positive integer');
  if (!(opts.durationSecs > 0)) usage('--duration-secs must be positive');
  if (!(opts.warmupSecs >= 0)) usage('--warmup-secs must be >= 0');
  if (!(Number.isInteger(opts.workers) && opts.workers > 0)) usage('--workers must be a positive integer');
  if (opts.serverPid !== null && !(Number.isInteger(opts.serverPid) && opts.serverPid > 0)) {
    usage('--server-pid must be a pid');
  }
  return opts;
}

function usage(problem) {
  const text =
    'usage: node loadclient.js --games N --duration-secs S [--warmup-secs W] ' +
    '[--url ws://127.0.0.1:2567] [--json out.json] [--label NAME] [--server-pid PID] [--workers K]';
  if (problem) {
    console.error(`loadclient: ${problem}\n${text}`);
    process.exit(2);
  }
  console.log(text);
  process.exit(0);
}

// ---- server figures from /proc

let clockTicks = 100;
try {
  clockTicks = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
} catch (_) {
  // keep 100, the Linux default
}

function cpuSeconds(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(rest[14 - 3]);
    const stime = Number(rest[15 - 3]);
    return (utime + stime) / clockTicks;
  } catch (_) {
    return null;
  }
}

function rssMb(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return m ? Number(m[1]) / 1024 : null;
  } catch (_) {
    return null;
  }
}

function percentile(sorted, q) {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil(q * sorted.length)); // nearest rank
  return sorted[rank - 1];
}

function round(x, digits) {
  if (x === null || x === undefined || !Number.isFinite(x)) return null;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

function runWorker(data) {
  return new Promise((resolve, reject) => {
    const w = new Worker(__filename, { workerData: data });
    let result = null;
    w.once('message', (m) => { result = m; });
    w.once('error', reject);
    w.once('exit', (code) => {
      if (result !== null) resolve(result);
      else reject(new Error(`worker exited with ${code} and no result`));
    });
  });
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const players = 2 * opts.games;
  const start = now();
  const rampEnd = start + (opts.warmupSecs * 1000 * 2) / 3;
  const windowStart = start + opts.warmupSecs * 1000;
  const windowEnd = windowStart + opts.durationSecs * 1000;

  // Server sampling: RSS every second for the whole run, CPU at the
  // window's edges.
  const pid = opts.serverPid;
  let rssPeak = null;
  let cpuAtStart = null;
  let cpuAtEnd = null;
  let wallAtStart = null;
  let wallAtEnd = null;
  const clientCpuStart = { v: null };
  let clientCpuEnd = null;
  const sampleRss = () => {
    if (pid === null) return;
    const r = rssMb(pid);
    if (r !== null && (rssPeak === null || r > rssPeak)) rssPeak = r;
  };
  sampleRss();
  const rssTimer = setInterval(sampleRss, 1000);
  setTimeout(() => {
    wallAtStart = now();
    if (pid !== null) cpuAtStart = cpuSeconds(pid);
    clientCpuStart.v = process.cpuUsage();
  }, Math.max(0, windowStart - now()));
  setTimeout(() => {
    wallAtEnd = now();
    if (pid !== null) cpuAtEnd = cpuSeconds(pid);
    clientCpuEnd = process.cpuUsage(clientCpuStart.v || undefined);
    sampleRss();
  }, Math.max(0, windowEnd - now()));

  // Split the players over the workers, an even number each where possible.
  let parts;
  if (opts.workers === 1) {
    parts = [drive({ url: opts.url, players, windowStart, windowEnd, rampEnd })];
  } else {
    const per = [];
    let left = players;
    for (let k = 0; k < opts.workers; k++) {
      const share = Math.ceil(left / (opts.workers - k) / 2) * 2;
      per.push(Math.min(share, left));
      left -= per[k];
    }
    parts = per
      .filter((n) => n > 0)
      .map((n) => runWorker({ url: opts.url, players: n, windowStart, windowEnd, rampEnd }));
  }
  const results = await Promise.all(parts);
  clearInterval(rssTimer);

  // Merge exactly: every sample from every part.
  const total = results.reduce((s, r) => s + r.count, 0);
  const all = new Float64Array(total);
  let off = 0;
  const errors = {};
  let moves = 0;
  let gamesFinished = 0;
  for (const r of results) {
    all.set(r.samples.subarray(0, r.count), off);
    off += r.count;
    moves += r.moves;
    gamesFinished += r.gamesFinished;
    for (const [k, v] of Object.entries(r.errors)) errors[k] = (errors[k] || 0) + v;
  }
  all.sort();

  // Samples are selected by the nominal window; CPU time is divided by the
  // wall time between its two readings (timers may fire a little late).
  const windowSecs = (windowEnd - windowStart) / 1000;
  const sampledSecs = (wallAtEnd - wallAtStart) / 1000;
  const server = { pid, cpu_cores: null, rss_peak_mb: round(rssPeak, 1) };
  if (cpuAtStart !== null && cpuAtEnd !== null) {
    server.cpu_cores = round((cpuAtEnd - cpuAtStart) / sampledSecs, 3);
  }
  const clientCpu = clientCpuEnd
    ? round((clientCpuEnd.user + clientCpuEnd.system) / 1e6 / sampledSecs, 3)
    : null;

  const out = {
    label: opts.label,
    games: opts.games,
    workers: opts.workers,
    warmup_secs: opts.warmupSecs,
    seconds: round(windowSecs, 3),
    moves,
    moves_per_second: round(moves / windowSecs, 1),
    games_finished: gamesFinished,
    move_round_trip: {
      count: total,
      p50_ms: round(percentile(all, 0.5), 3),
      p95_ms: round(percentile(all, 0.95), 3),
      p99_ms: round(percentile(all, 0.99), 3),
      max_ms: round(total ? all[total - 1] : null, 3),
    },
    errors,
    server,
    client: { cpu_cores: clientCpu },
  };
  if (opts.json) fs.writeFileSync(opts.json, JSON.stringify(out, null, 2) + '\n');

  const errText = Object.keys(errors).length
    ? Object.entries(errors).map(([k, v]) => `${k}=${v}`).join(',')
    : '0';
  console.log(
    `${out.label}: games=${out.games} window=${out.seconds}s moves/s=${out.moves_per_second} ` +
      `rtt p50=${out.move_round_trip.p50_ms}ms p99=${out.move_round_trip.p99_ms}ms ` +
      `max=${out.move_round_trip.max_ms}ms (n=${total}) games_finished=${gamesFinished} ` +
      `errors=${errText} server cpu=${server.cpu_cores} cores rss_peak=${server.rss_peak_mb}MB ` +
      `client cpu=${clientCpu} cores`,
  );
  process.exit(0);
}

main().catch((e) => {
  console.error('loadclient failed:', e);
  process.exit(1);
});
