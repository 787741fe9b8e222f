#!/usr/bin/env python3
"""The summary of `deploy/bench.sh peers`: each system's moves/s and round
trip, then what each part spends a move (server, Postgres, Redis, load
client), and the ratios the throughput issue asks for, into
FOLDER/summary.md.

    bench-peers.py FOLDER
"""

import json
import pathlib
import sys

NAMES = {
    "arena": "Mancala Arena (durable)",
    "colyseus-durable": "Colyseus, durable",
    "colyseus-memory": "Colyseus, in memory",
}


def main(folder):
    def load(name):
        path = folder / name
        return json.loads(path.read_text()) if path.exists() else None

    rows = [
        "| games | system | moves/s | move round trip p50 / p99 | server CPU | CPU per move | server peak RSS | errors |",
        "|---|---|---|---|---|---|---|---|",
    ]
    parts = [
        "| games | system | server CPU | Postgres CPU | Postgres commits | Redis CPU | Redis commands (publishes) | load client CPU |",
        "|---|---|---|---|---|---|---|---|",
    ]
    ratios = []
    floor = load("floor.json")
    counts = sorted(
        {int(p.stem.split("-")[1]) for p in folder.glob("arena-*.json") if p.stem.count("-") == 1}
    )
    for count in counts:
        runs = {key: load(f"{key}-{count}.json") for key in NAMES}
        costs = {key: load(f"{key}-{count}-parts.json") for key in NAMES}
        for key, run in runs.items():
            if not run:
                continue
            server = run.get("server") or {}
            rtt = run["move_round_trip"]
            cores = server.get("cpu_cores", 0)
            per_move = cores * 1e6 / run["moves_per_second"] if run["moves_per_second"] else 0
            errors = run["errors"]
            errors = sum(errors.values()) if isinstance(errors, dict) else len(errors)
            rows.append(
                f"| {count} | {NAMES[key]} | {run['moves_per_second']:.0f} | {rtt['p50_ms']:.1f} / {rtt['p99_ms']:.1f} ms "
                f"| {cores:.2f} | {per_move:.0f} µs | {server.get('rss_peak_mb', 0):.0f} MB | {errors} |"
            )
            cost = costs[key]
            if cost:
                parts.append(
                    f"| {count} | {NAMES[key]} | {cost['server_cpu_us']:.0f} µs | {cost['postgres_cpu_us']:.0f} µs "
                    f"| {cost['commits']:.3f} | {cost['redis_cpu_us']:.1f} µs "
                    f"| {cost['redis_commands']:.3f} ({cost['redis_publishes']:.3f}) | {cost['client_cpu_us']:.0f} µs |"
                )
        ours, durable, memory = (runs[key] for key in NAMES)
        mine, in_memory = costs["arena"], costs["colyseus-memory"]
        if ours and durable and memory:
            ratios.append(
                f"- {count} games: moves/s {ours['moves_per_second'] / durable['moves_per_second']:.2f}x the durable peer, "
                f"{ours['moves_per_second'] / memory['moves_per_second']:.2f}x the in-memory peer; p99 "
                f"{ours['move_round_trip']['p99_ms']:.1f} ms vs {memory['move_round_trip']['p99_ms']:.1f} ms in memory"
            )
        if mine and in_memory and in_memory["server_cpu_us"]:
            ratios.append(
                f"- {count} games: our server's CPU a move {mine['server_cpu_us']:.0f} µs, "
                f"{mine['server_cpu_us'] / in_memory['server_cpu_us']:.2f}x the in-memory peer's server "
                f"({in_memory['server_cpu_us']:.0f} µs)"
            )
        if mine and floor:
            ratios.append(
                f"- {count} games: Postgres's CPU a move {mine['postgres_cpu_us']:.0f} µs, "
                f"{mine['postgres_cpu_us'] / floor['postgres_cpu_us_per_row']:.2f}x the floor "
                f"({floor['postgres_cpu_us_per_row']:.1f} µs a row at {floor['rows']} rows a commit; "
                f"our mean batch {mine['batch_size'] or 0:.1f})"
            )
        if mine and mine.get("statements"):
            ratios.append(f"- {count} games: Postgres's statements by execution time a move (calls a move):")
            for statement in mine["statements"]:
                ratios.append(
                    f"  - `{statement['query'].replace('|', '¦')}`: {statement['exec_us']:.1f} µs ({statement['calls']:.3f})"
                )
        if mine:
            busiest = ", ".join(f"{name} {calls:.3f}" for name, calls in mine.get("redis_busiest", {}).items())
            ratios.append(
                f"- {count} games: Redis publishes a move {mine['redis_publishes']:.3f}, "
                f"Redis commands a move {mine['redis_commands']:.3f} ({busiest})"
            )
    text = (
        "\n".join(rows)
        + "\n\nWhat each part spends a move (ours: every part over the measured window, warm-up"
        " left out, Postgres and Redis over the moves stored in it; the peers: their servers and"
        " load clients over the window, Postgres and Redis between snapshots around the whole run):\n\n"
        + "\n".join(parts)
        + "\n\n"
        + "\n".join(ratios)
        + "\n"
    )
    (folder / "summary.md").write_text(text)
    print(text)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(pathlib.Path(sys.argv[1]))
