#!/usr/bin/env python3
"""What one move costs each part of a deployment, for `deploy/bench.sh costs`.

    bench-costs.py snapshot DATABASE_URL REDIS_URL > before.json
    bench-costs.py timed CLIENT.json COMMAND...   (runs the load client, weighs its CPU)
    bench-costs.py report before.json after.json loadgen.json [OUT.md] [CLIENT.json]
    bench-costs.py floor DATABASE_URL ROWS CLIENTS SECONDS [OUT.json]
    bench-costs.py parts before.json after.json RUN.json [CLIENT.json] [METRICS.txt] > parts.json

A snapshot reads the counters that the run moves:
- the CPU time of every Postgres and Redis process (/proc);
- Postgres's commits in the bench database and its WAL position;
- Redis's commands by name;
- the bytes through the loopback interface: every hop of a one-machine
  deployment (client, Postgres, Redis) crosses it;
- where the server loads `pg_stat_statements` (shared_preload_libraries),
  each statement's calls and time in the bench database, so the report
  can say which statements a move pays for.

The report divides their change by the moves the load generator counted.
The server's own CPU per move comes from the load generator, which measures
it over the same window as the moves. Postgres and Redis are measured over
the whole run, warm-up included, so their figures are a little high.
"""

import json
import os
import re
import subprocess
import sys


def cpu_seconds(name):
    """CPU seconds (user + system) of the processes whose name contains
    `name`, with their reaped children's (a Postgres backend that exits
    during the run is counted in the postmaster's)."""
    ticks = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                text = stat.read()
        except OSError:
            continue
        comm = text[text.index("(") + 1 : text.rindex(")")]
        if name in comm:
            fields = text[text.rindex(")") + 2 :].split()
            ticks += sum(int(field) for field in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def psql(url, query):
    return subprocess.run(
        ["psql", url, "-Atc", query], check=True, capture_output=True, text=True
    ).stdout.strip()


def redis_commands(url):
    text = subprocess.run(
        ["redis-cli", "-u", url, "INFO", "commandstats"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return {
        m.group(1): int(m.group(2))
        for m in re.finditer(r"cmdstat_([\w|]+):calls=(\d+)", text)
    }


def loopback_bytes():
    with open("/proc/net/dev") as dev:
        for line in dev:
            name, _, rest = line.partition(":")
            if name.strip() == "lo":
                fields = rest.split()
                return int(fields[0]) + int(fields[8])
    return 0


def moves_stored(database_url, database):
    """The moves `database` holds (ours: `game_moves` without its
    placeholders; the peer's: `peer_moves`), or None where it has none."""
    url = database_url.rsplit("/", 1)[0] + "/" + database
    for query in (
        "SELECT count(*) FROM game_moves WHERE pit > 0",
        "SELECT count(*) FROM peer_moves",
    ):
        try:
            return int(psql(url, query))
        except subprocess.CalledProcessError:
            continue
    return None


def statements(database_url, database):
    """Calls and milliseconds of each statement run in `database`, or {}
    where the server does not load pg_stat_statements."""
    try:
        psql(database_url, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        text = psql(
            database_url,
            "SELECT queryid, calls, total_exec_time, "
            "regexp_replace(left(query, 90), '\\s+', ' ', 'g') "
            "FROM pg_stat_statements WHERE dbid = "
            f"(SELECT oid FROM pg_database WHERE datname = '{database}')",
        )
    except subprocess.CalledProcessError:
        return {}
    found = {}
    for line in text.splitlines():
        queryid, calls, millis, query = line.split("|", 3)
        found[queryid] = {"calls": int(calls), "ms": float(millis), "query": query}
    return found


def statement_deltas(before, after):
    """Each statement run between two snapshots: (milliseconds, calls,
    query), the most time first."""
    rows = []
    for queryid, now in after.get("statements", {}).items():
        then = before.get("statements", {}).get(queryid, {"calls": 0, "ms": 0.0})
        calls, millis = now["calls"] - then["calls"], now["ms"] - then["ms"]
        if calls:
            rows.append((millis, calls, now["query"]))
    rows.sort(reverse=True)
    return rows


def statements_per_move(before, after, moves, top=12):
    """The statements that took the most time between two snapshots."""
    rows = statement_deltas(before, after)
    if not rows:
        return []
    lines = ["", "| statement | calls a move | µs a move |", "|---|---|---|"]
    for millis, calls, query in rows[:top]:
        lines.append(f"| `{query.replace('|', '¦')}` | {calls / moves:.3f} | {millis * 1e3 / moves:.1f} |")
    return lines


def snapshot(database_url, redis_url, database=None):
    """`database`: whose commits to count (default: `database_url`'s own);
    read through `database_url`, so it need not exist yet."""
    database = database or database_url.rsplit("/", 1)[1]
    return {
        "postgres_cpu": cpu_seconds("postgres"),
        "redis_cpu": cpu_seconds("redis-server"),
        "commits": int(
            psql(
                database_url,
                "SELECT COALESCE((SELECT xact_commit FROM pg_stat_database "
                f"WHERE datname = '{database}'), 0)",
            )
        ),
        "wal_lsn": psql(database_url, "SELECT pg_current_wal_lsn()"),
        "moves_stored": moves_stored(database_url, database),
        "redis": redis_commands(redis_url),
        "loopback": loopback_bytes(),
        "database_url": database_url,
        "statements": statements(database_url, database),
    }


def timed(out, command):
    """Runs the load client and records the CPU it used."""
    import resource

    code = subprocess.run(command).returncode
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, "w") as file:
        json.dump({"cpu_seconds": usage.ru_utime + usage.ru_stime}, file)
    return code


def floor(database_url, rows, clients, seconds, out=None):
    """What Postgres's CPU costs to commit a row durably at the least: pgbench
    inserting `rows` narrow rows (a move's columns, its primary key) a
    transaction from `clients` connections, fsync on."""
    import tempfile

    psql(database_url, "DROP TABLE IF EXISTS floor_moves")
    psql(
        database_url,
        "CREATE TABLE floor_moves (game_id uuid, ply int, pit smallint, "
        "played_at timestamptz, PRIMARY KEY (game_id, ply))",
    )
    with tempfile.NamedTemporaryFile("w", suffix=".sql") as script:
        script.write(
            "INSERT INTO floor_moves SELECT gen_random_uuid(), ply, 3, now() "
            f"FROM generate_series(1, {rows}) ply;\n"
        )
        script.flush()
        start = cpu_seconds("postgres")
        text = subprocess.run(
            ["pgbench", "-n", "-M", "prepared", "-c", str(clients), "-j", "2",
             "-T", str(seconds), "-f", script.name, database_url],
            check=True, capture_output=True, text=True,
        ).stdout
        spent = cpu_seconds("postgres") - start
    psql(database_url, "DROP TABLE floor_moves")
    commits = int(re.search(r"actually processed: (\d+)", text).group(1))
    if out:
        with open(out, "w") as file:
            json.dump(
                {
                    "rows": rows,
                    "clients": clients,
                    "commits": commits,
                    "postgres_cpu_us_per_row": spent * 1e6 / (commits * rows),
                },
                file,
            )
    print(
        f"Postgres floor: {commits} commits of {rows} rows from {clients} clients in "
        f"{seconds} s ({commits * rows / seconds:.0f} rows/s); Postgres CPU "
        f"{spent * 1e6 / (commits * rows):.1f} µs a row, {spent * 1e6 / commits:.0f} µs a commit"
    )


def report(before, after, run, client=None):
    moves = run["moves_per_second"] * run["seconds"]
    if not moves:
        print("no moves: nothing to divide by")
        return
    server = run.get("server") or {}
    wal = int(
        psql(
            after["database_url"],
            f"SELECT pg_wal_lsn_diff('{after['wal_lsn']}', '{before['wal_lsn']}')",
        )
    )
    commands = {
        name: calls - before["redis"].get(name, 0)
        for name, calls in after["redis"].items()
    }
    busiest = sorted(
        ((calls, name) for name, calls in commands.items() if calls), reverse=True
    )[:5]
    per = lambda value: value / moves
    rows = [
        f"Costs of one move: {run['label']}, {run['players']} players, think "
        f"{run['think_ms']} ms, {moves:.0f} moves in {run['seconds']:.0f} s "
        f"({run['moves_per_second']:.0f} moves/s, round trip p99 "
        f"{run['move_round_trip']['p99_ms']:.1f} ms)",
        "",
        "| cost | per move |",
        "|---|---|",
        f"| server CPU (the arena process) | {per(server.get('cpu_cores', 0) * run['seconds']) * 1e6:.0f} µs |",
        f"| Postgres CPU (every backend and helper) | {per(after['postgres_cpu'] - before['postgres_cpu']) * 1e6:.0f} µs |",
        f"| Postgres commits | {per(after['commits'] - before['commits']):.3f} |",
        f"| Postgres WAL | {per(wal):.0f} bytes |",
        f"| Redis CPU | {per(after['redis_cpu'] - before['redis_cpu']) * 1e6:.0f} µs |",
        f"| Redis commands | {per(sum(commands.values())):.2f} ({', '.join(f'{name} {per(calls):.2f}' for calls, name in busiest)}) |",
        *(
            [f"| load client CPU (loadgen) | {per(client['cpu_seconds']) * 1e6:.0f} µs |"]
            if client
            else []
        ),
        f"| bytes through loopback (client, Postgres and Redis hops) | {per(after['loopback'] - before['loopback']):.0f} |",
        *statements_per_move(before, after, moves),
    ]
    print("\n".join(rows))
    return "\n".join(rows) + "\n"


def batch_size(metrics_text):
    """The mean moves a flush wrote (the game-room's `game_write_batch_size`
    histogram), from a /metrics page."""
    values = {}
    for line in metrics_text.splitlines():
        for name in ("game_write_batch_size_sum", "game_write_batch_size_count"):
            if line.startswith(name + " ") or line.startswith(name + "{"):
                values[name] = values.get(name, 0) + float(line.rsplit(" ", 1)[1])
    count = values.get("game_write_batch_size_count", 0)
    return values.get("game_write_batch_size_sum", 0) / count if count else None


def parts(before, after, run, client=None, metrics=None):
    """One run's cost per move, part by part: the server's CPU (from the
    run's own window), Postgres's and Redis's (over the whole run), Redis's
    commands and publishes, the load client's CPU."""
    moves = run["moves_per_second"] * run["seconds"]
    per = lambda value: value / moves if moves else 0
    # Postgres and Redis are weighed between the snapshots, warm-up
    # included: divided by the moves stored between them, where the
    # database counts them, rather than by the window's.
    stored = (after.get("moves_stored") or 0) - (before.get("moves_stored") or 0)
    per_stored = (lambda value: value / stored) if stored > 0 else per
    commands = {
        name: calls - before["redis"].get(name, 0)
        for name, calls in after["redis"].items()
    }
    publishes = sum(
        calls for name, calls in commands.items() if name in ("publish", "spublish")
    )
    server = run.get("server") or {}
    client_cpu = (
        client["cpu_seconds"]
        if client
        else (run.get("client") or {}).get("cpu_cores", 0) * run["seconds"]
    )
    # Where pg_stat_statements is loaded: the statements a move pays for,
    # each with its calls a move (1 is a move's own; 0.02 is a game's).
    top = statement_deltas(before, after)
    return {
        "label": run.get("label"),
        "moves_per_second": run["moves_per_second"],
        "p50_ms": run["move_round_trip"]["p50_ms"],
        "p99_ms": run["move_round_trip"]["p99_ms"],
        "server_cpu_us": per(server.get("cpu_cores", 0) * run["seconds"]) * 1e6,
        "moves_stored": stored,
        "postgres_cpu_us": per_stored(after["postgres_cpu"] - before["postgres_cpu"]) * 1e6,
        "commits": per_stored(after["commits"] - before["commits"]),
        "redis_cpu_us": per_stored(after["redis_cpu"] - before["redis_cpu"]) * 1e6,
        "redis_commands": per_stored(sum(commands.values())),
        "redis_publishes": per_stored(publishes),
        "redis_busiest": {
            name: round(per_stored(calls), 4)
            for calls, name in sorted(
                ((calls, name) for name, calls in commands.items() if calls), reverse=True
            )[:8]
        },
        # The client's whole run (warm-up included) over the window's moves:
        # a little high, like Postgres's and Redis's.
        "client_cpu_us": per(client_cpu) * 1e6,
        "batch_size": batch_size(metrics) if metrics else None,
        "statements": [
            {"query": query, "calls": per_stored(calls), "exec_us": per_stored(millis * 1e3)}
            for millis, calls, query in top[:10]
        ],
    }


def main():
    if sys.argv[1] == "snapshot":
        database = sys.argv[4] if len(sys.argv) > 4 else None
        json.dump(snapshot(sys.argv[2], sys.argv[3], database), sys.stdout)
    elif sys.argv[1] == "report":
        load = lambda path: json.load(open(path))
        client = load(sys.argv[6]) if len(sys.argv) > 6 else None
        text = report(load(sys.argv[2]), load(sys.argv[3]), load(sys.argv[4]), client)
        if text and len(sys.argv) > 5:
            with open(sys.argv[5], "w") as out:
                out.write(text)
    elif sys.argv[1] == "timed":
        sys.exit(timed(sys.argv[2], sys.argv[3:]))
    elif sys.argv[1] == "floor":
        out = sys.argv[6] if len(sys.argv) > 6 else None
        floor(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), out)
    elif sys.argv[1] == "parts":
        load = lambda path: json.load(open(path))
        client = load(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[5] != "-" else None
        metrics = open(sys.argv[6]).read() if len(sys.argv) > 6 else None
        json.dump(parts(load(sys.argv[2]), load(sys.argv[3]), load(sys.argv[4]), client, metrics), sys.stdout)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
