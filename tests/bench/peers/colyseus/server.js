'use strict';
// Peer benchmark server: authoritative Kalah(6, 4) rooms on Colyseus 0.16.
//
//   PEER_MODE=memory|durable  (default memory)
//   PORT                      (default 2567)
//   DATABASE_URL              (durable only; default
//                              postgres://postgres@127.0.0.1:5432/mancala_peer)
//   PG_POOL_MAX               (durable only; default 32, like our arena)
//
// Messages (Colyseus room messages, msgpack-encoded by the framework):
//   client -> server  "move"      {pit: 1..6, ply}
//   server -> both    "start"     {ply: 0, board, turn: 0, seats: [sessionId0, sessionId1]}
//   server -> both    "moved"     {ply, by, pit, board, turn, over}
//   server -> sender  "error"     {code, message, ply}
//   server -> rest    "abandoned" {by}   (the other player left mid-game)

const { randomUUID } = require('node:crypto');
const { Server, Room } = require('@colyseus/core');
const { WebSocketTransport } = require('@colyseus/ws-transport');
const kalah = require('./kalah');

const MODE = process.env.PEER_MODE || 'memory';
const PORT = Number(process.env.PORT || 2567);
const DATABASE_URL =
  process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/mancala_peer';
const PG_POOL_MAX = Number(process.env.PG_POOL_MAX || 32);

if (MODE !== 'memory' && MODE !== 'durable') {
  console.error(`PEER_MODE must be memory or durable, not ${JSON.stringify(MODE)}`);
  process.exit(2);
}

let pool = null; // pg.Pool in durable mode

const INSERT_MOVE =
  'INSERT INTO peer_moves (game_id, ply, seat, pit, played_at) VALUES ($1, $2, $3, $4, now())';

async function prepareDatabase() {
  const pg = require('pg');
  const target = new URL(DATABASE_URL);
  const dbName = decodeURIComponent(target.pathname.replace(/^\//, '')) || 'mancala_peer';

  // Create the database if it is missing, through the maintenance database.
  const adminUrl = new URL(DATABASE_URL);
  adminUrl.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [dbName]);
    if (found.rowCount === 0) {
      const quoted = '"' + dbName.replace(/"/g, '""') + '"';
      try {
        await admin.query(`CREATE DATABASE ${quoted}`);
      } catch (e) {
        if (e.code !== '42P04') throw e; // created meanwhile by someone else
      }
    }
  } finally {
    await admin.end();
  }

  pool = new pg.Pool({ connectionString: DATABASE_URL, max: PG_POOL_MAX });
  pool.on('error', (e) => console.error('pg pool error:', e.message));
  await pool.query(`CREATE TABLE IF NOT EXISTS peer_moves (
      game_id   text        NOT NULL,
      ply       int         NOT NULL,
      seat      smallint    NOT NULL,
      pit       smallint    NOT NULL,
      played_at timestamptz NOT NULL,
      PRIMARY KEY (game_id, ply)
    )`);
}

class KalahRoom extends Room {
  onCreate() {
    this.maxClients = 2;
    // Game state travels in explicit messages, not in Colyseus schema state,
    // so the periodic state-patch loop has nothing to do.
    this.setPatchRate(null);
    this.gameId = randomUUID();
    this.seatOf = new Map(); // sessionId -> 0 | 1
    this.seats = [];
    this.board = kalah.newBoard();
    this.turn = 0;
    this.ply = 0;
    this.started = false;
    this.over = false;
    this.pending = false; // a durable INSERT is in flight
    this.onMessage('move', (client, message) => {
      this.handleMove(client, message).catch((e) => {
        console.error(`room ${this.roomId}: move failed:`, e);
      });
    });
    // Anything else is answered with an error, not with a dropped socket.
    this.onMessage('*', (client, type) => {
      client.send('error', { code: 'unknown_type', message: String(type), ply: this.ply });
    });
  }

  onJoin(client) {
    const seat = this.seats.length;
    this.seats.push(client.sessionId);
    this.seatOf.set(client.sessionId, seat);
    if (this.seats.length === 2) {
      // Lock explicitly so the room never reopens to matchmaking when a
      // player leaves (Colyseus would otherwise unlock below maxClients).
      this.lock().catch((e) => console.error("lock failed:", e));
      this.started = true;
      this.broadcast('start', {
        ply: 0,
        board: this.board,
        turn: this.turn,
        seats: this.seats,
      });
    }
  }

  onLeave(client) {
    if (this.started && !this.over) {
      this.over = true;
      const by = this.seatOf.get(client.sessionId);
      this.broadcast('abandoned', { by }, { except: client });
    }
  }

  reject(client, code, message) {
    client.send('error', { code, message, ply: this.ply });
  }

  async handleMove(client, message) {
    const seat = this.seatOf.get(client.sessionId);
    if (!this.started) return this.reject(client, 'not_started', 'waiting for an opponent');
    if (this.over) return this.reject(client, 'game_over', 'the game is over');
    if (this.pending) return this.reject(client, 'busy', 'a move is being stored');
    if (seat !== this.turn) return this.reject(client, 'not_your_turn', 'not your turn');
    if (message === null || typeof message !== 'object') {
      return this.reject(client, 'bad_message', 'expected {pit, ply}');
    }
    const { pit, ply } = message;
    if (ply !== this.ply + 1) {
      return this.reject(client, 'bad_ply', `expected ply ${this.ply + 1}`);
    }
    const result = kalah.applyMove(this.board, seat, pit);
    if (result === null) return this.reject(client, 'illegal_pit', `pit ${pit} is not playable`);

    if (pool !== null) {
      this.pending = true;
      try {
        await pool.query(INSERT_MOVE, [this.gameId, ply, seat, pit]);
      } catch (e) {
        console.error(`room ${this.roomId}: INSERT failed:`, e.message);
        return this.reject(client, 'storage', 'the move could not be stored');
      } finally {
        this.pending = false;
      }
      if (this.over) return; // a player left while the INSERT ran
    }

    this.board = result.board;
    this.turn = result.turn;
    this.ply = ply;
    this.over = result.over;
    this.broadcast('moved', {
      ply,
      by: seat,
      pit,
      board: this.board,
      turn: this.turn,
      over: this.over,
    });
  }
}

async function main() {
  if (MODE === 'durable') {
    await prepareDatabase();
  }
  const gameServer = new Server({
    transport: new WebSocketTransport(),
    greet: false,
  });
  gameServer.define('kalah', KalahRoom);
  gameServer.onShutdown(async () => {
    if (pool !== null) await pool.end();
  });
  await gameServer.listen(PORT, '127.0.0.1');
  console.log(`peer-colyseus listening on 127.0.0.1:${PORT} mode=${MODE} pid=${process.pid}`);
}

main().catch((e) => {
  console.error('peer-colyseus failed to start:', e);
  process.exit(1);
});
