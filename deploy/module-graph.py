#!/usr/bin/env python3
"""The module graph of one crate, from its `use` lines and `crate::`/`super::`
paths: which module (file) reaches into which, the circles (strongly
connected groups of modules), and the imports that go against the crate's
declared layers.

    deploy/module-graph.py services/game-room/src [--edges] [--layers FILE]

A module is a file (`a/b.rs` and `a/b/mod.rs` are `a::b`). An edge a -> b
means a names something of b (or of a module inside b: the edge goes to
the deepest module the path reaches). A module naming its own parent or
child is one module split in files, and is not counted as a circle.

Layers (`--layers`, or `layers.txt` beside the crate's `Cargo.toml`) list
the crate's top modules from the bottom up, one layer a line (modules of a
layer separated by spaces); a module may name modules of its own layer or
below. Exits 1 when there is a circle or an import against the layers.
"""

import re
import sys
from pathlib import Path

USE = re.compile(r"\buse\s+((?:crate|super|self)(?:::[^;]*)?);", re.S)
INLINE = re.compile(r"\b((?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+)")


def module_of(src: Path, path: Path) -> tuple:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def expand(path: str) -> list:
    """`a::{b, c::{d, e}}` -> [`a::b`, `a::c::d`, `a::c::e`]."""
    path = re.sub(r"\s+", "", path)
    start = path.find("{")
    if start < 0:
        return [path]
    prefix, inner = path[:start], path[start + 1 : path.rfind("}")]
    parts, depth, current = [], 0, ""
    for char in inner:
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += char == "{"
        depth -= char == "}"
        current += char
    parts.append(current)
    out = []
    for part in filter(None, parts):
        out.extend(expand(prefix + part))
    return out


def resolve(here: tuple, is_dir: bool, path: str) -> tuple:
    segments = path.split("::")
    base = list(here) if is_dir else list(here)
    if segments[0] == "crate":
        base, segments = [], segments[1:]
    else:
        # `super` and `self` are relative to the module the file is.
        while segments and segments[0] in ("super", "self"):
            if segments[0] == "super":
                base = base[:-1]
            segments = segments[1:]
    return tuple(base + [s for s in segments if s not in ("self", "*")])


def graph(src: Path):
    files = {}
    for path in sorted(src.rglob("*.rs")):
        files[module_of(src, path)] = path
    modules = set(files)
    edges = {}
    for module, path in files.items():
        text = path.read_text()
        # Tests and test-only modules are not part of the structure.
        text = re.split(r"#\[cfg\(test\)\]\s*mod\s+tests\s*\{", text)[0]
        text = re.sub(r"//[^\n]*", "", text)
        names = []
        for match in USE.finditer(text):
            names.extend(expand(match.group(1)))
        names.extend(m.group(1) for m in INLINE.finditer(text))
        is_dir = path.name in ("mod.rs", "lib.rs", "main.rs")
        for name in names:
            target = resolve(module, is_dir, name)
            while target and target not in modules:
                target = target[:-1]
            if not target or target == module:
                continue
            related = target[: len(module)] == module or module[: len(target)] == target
            if related:
                continue
            edges.setdefault(module, set()).add(target)
    return modules, edges


def circles(modules, edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    sys.setrecursionlimit(10_000)
    for v in sorted(modules):
        if v not in index:
            visit(v)
    return out


def name(module: tuple) -> str:
    return "::".join(module) or "crate"


def main():
    args = sys.argv[1:]
    src = Path(args[0])
    modules, edges = graph(src)
    layers_file = None
    if "--layers" in args:
        layers_file = Path(args[args.index("--layers") + 1])
    elif (src.parent / "layers.txt").exists():
        layers_file = src.parent / "layers.txt"
    if "--edges" in args:
        for module in sorted(edges):
            for target in sorted(edges[module]):
                print(f"{name(module)} -> {name(target)}")
    found = circles(modules, edges)
    for group in found:
        print("circle:", " <-> ".join(name(m) for m in group))
    against = []
    if layers_file:
        rank = {}
        for level, line in enumerate(layers_file.read_text().splitlines()):
            line = line.split("#")[0]
            for top in line.split():
                rank[top] = level
        for module, targets in edges.items():
            for target in targets:
                a, b = rank.get(module[0]), rank.get(target[0])
                if a is None or b is None:
                    against.append(f"unlayered: {name(module)} -> {name(target)}")
                elif b > a:
                    against.append(f"upward: {name(module)} -> {name(target)}")
        for line in sorted(against):
            print(line)
    count = sum(len(t) for t in edges.values())
    print(f"{len(modules)} modules, {count} edges, {len(found)} circles, "
          f"{len(against)} imports against the layers")
    sys.exit(1 if found or against else 0)


if __name__ == "__main__":
    main()
