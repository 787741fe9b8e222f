#!/usr/bin/env python3
"""Static checks of the deployment files in deploy/, against the code.

Nothing here builds an image or talks to a cluster. What it checks:

  yaml      every YAML file under deploy/ parses (all documents)
  env       every variable the Dockerfile, compose.yaml and the Kubernetes
            manifests set is one the binary that gets it reads: the names
            each binary declares, listed in deploy/settings.tsv (generated
            from the declarations, kept current by a test)
  commands  commands name binaries that the Dockerfile builds into the
            image and that Cargo.toml declares
  k8s       probes, resources, non-root pods, selectors, Service ports,
            Ingress backends, HPA and PDB targets, secret keys, grace
            periods, per-pod identities, shared secrets
  routes    every route the services register (`.route("...")`) and every
            client route of the web app, resolved through nginx.conf and
            through the Ingress rules (ingress-nginx's regex ordering):
            public routes reach their service, /internal and /metrics never
            do, client routes get the static app
  nginx     `nginx -t` on nginx.conf and web.nginx.conf when an nginx binary
            is found (PATH, or $NGINX_BIN); skipped otherwise
  kustomize `kubectl kustomize deploy/k8s` when kubectl is installed

Prints problems, then one summary line; exits 1 on any problem.
"""

from __future__ import annotations

import argparse
import fnmatch
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import yaml

# Settings that a split deployment must set whenever the binary reads them:
# their defaults suit one process on a laptop only.
MUST_SET = {
    "DATABASE_URL": "the default is a local Postgres",
    "REDIS_URL": "the default is a local Redis",
    "APP_INTERNAL_TOKEN": "a random token per process: matchmaking could not create games",
    "APP_GAME_ROOM_URL": "the default is 127.0.0.1, this process",
    "APP_PUBLIC_URL": "invite links would follow each request's Host, which only the proxy vouches for",
    "APP_INSTANCE_URL": "`elsewhere` would name a private address",
}

SAMPLE_PARAMS = {
    "id": "0193a5b2-7c1d-7e4f-8a9b-0c1d2e3f4a5b",
    "code": "Ab3dE9",
    "variant": "kalah",
}

SETTINGS_LIST = "deploy/settings.tsv"
ROUTE_LITERAL = re.compile(r'\.(?:api_)?route\(\s*"([^"]+)"')


# --------------------------------------------------------------- reporting


@dataclass
class Report:
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def fail(self, where: str, what: str) -> None:
        self.problems.append(f"{where}: {what}")

    def warn(self, where: str, what: str) -> None:
        self.warnings.append(f"{where}: {what}")


# ------------------------------------------------------------ Rust sources


def strip_cfg_test(src: str) -> str:
    """The source without its #[cfg(test)] items (modules and functions)."""
    out, i = [], 0
    while True:
        j = src.find("#[cfg(test)]", i)
        if j < 0:
            out.append(src[i:])
            return "".join(out)
        out.append(src[i:j])
        start = re.compile(r"[{;]").search(src, j + len("#[cfg(test)]"))
        if start is None:
            return "".join(out)
        if start.group() == ";":
            i = start.end()
            continue
        i = matching_brace(src, start.start()) + 1


def matching_brace(src: str, open_at: int) -> int:
    """Index of the brace closing the one at open_at; skips strings,
    character literals and comments."""
    depth, p, n = 0, open_at, len(src)
    while p < n:
        c = src[p]
        if src.startswith("//", p):
            p = src.find("\n", p)
            if p < 0:
                return n
            continue
        if src.startswith("/*", p):
            p = src.find("*/", p + 2)
            if p < 0:
                return n
            p += 2
            continue
        raw = re.match(r'r(#*)"', src[p : p + 10])
        if raw and (p == 0 or not (src[p - 1].isalnum() or src[p - 1] == "_")):
            end = src.find('"' + raw.group(1), p + len(raw.group(0)))
            p = n if end < 0 else end + 1 + len(raw.group(1))
            continue
        if c == '"':
            p += 1
            while p < n and src[p] != '"':
                p += 2 if src[p] == "\\" else 1
            p += 1
            continue
        if c == "'":
            lit = re.match(r"'(\\.|\\u\{[0-9a-fA-F]+\}|[^\\'])'", src[p : p + 12])
            if lit:
                p += len(lit.group(0))
                continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return p
        p += 1
    return n


@dataclass
class Package:
    name: str
    dir: str
    bins: list[str]
    deps: list[str]
    source: str = ""  # the crate's src/, test modules stripped


def declared_settings(root: str) -> dict[str, set[str]]:
    """binary -> the variables it declares (deploy/settings.tsv)."""
    declared: dict[str, set[str]] = {}
    with open(os.path.join(root, SETTINGS_LIST), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            binary, name = line.split("\t")[:2]
            declared.setdefault(binary, set()).add(name)
    return declared


class Workspace:
    def __init__(self, root: str):
        self.root = root
        manifest = tomllib.load(open(os.path.join(root, "Cargo.toml"), "rb"))
        ws = manifest["workspace"]
        self.rust_version = ws.get("package", {}).get("rust-version")
        self.packages: dict[str, Package] = {}
        for member in ws["members"]:
            path = os.path.join(root, member, "Cargo.toml")
            data = tomllib.load(open(path, "rb"))
            name = data["package"]["name"]
            bins = [b["name"] for b in data.get("bin", [])]
            if not bins and os.path.exists(os.path.join(root, member, "src/main.rs")):
                bins = [name]
            deps = list(data.get("dependencies", {}))
            pkg = Package(name, member, bins, deps)
            texts = []
            for rs in sorted(glob.glob(os.path.join(root, member, "src/**/*.rs"), recursive=True)):
                if rs.endswith("/testing.rs"):  # the `testing` feature's helpers
                    continue
                texts.append(strip_cfg_test(open(rs, encoding="utf-8").read()))
            pkg.source = "\n".join(texts)
            self.packages[name] = pkg
        self.bin_package = {b: p for p in self.packages.values() for b in p.bins}
        self.declared = declared_settings(root)

    def closure(self, package: str) -> list[Package]:
        seen, todo = [], [package]
        while todo:
            name = todo.pop()
            if name in seen or name not in self.packages:
                continue
            seen.append(name)
            todo.extend(self.packages[name].deps)
        return [self.packages[n] for n in seen]

    def reads(self, binary: str) -> set[str]:
        return self.declared.get(binary, set())

    def uses(self, binary: str, needle: str) -> bool:
        pkg = self.bin_package.get(binary)
        return pkg is not None and any(needle in p.source for p in self.closure(pkg.name))

    def routes(self, binary: str) -> list[str]:
        pkg = self.bin_package[binary]
        return ROUTE_LITERAL.findall(pkg.source)

    def client_routes(self) -> list[str] | None:
        path = os.path.join(self.root, "services/arena/src/web.rs")
        if not os.path.exists(path):
            return None
        m = re.search(r"CLIENT_ROUTES[^=]*=\s*&\[(.*?)\];", open(path).read(), re.S)
        return re.findall(r'"([^"]+)"', m.group(1)) if m else None


def sample_path(route: str) -> str:
    def value(m: re.Match) -> str:
        name = m.group(1).split(":")[0]
        return SAMPLE_PARAMS.get(name, "x1")

    return re.sub(r"\{([^}]+)\}", value, route)


# ---------------------------------------------------------------- Dockerfile


@dataclass
class Stage:
    base: str
    name: str | None
    env: dict[str, str] = field(default_factory=dict)
    cmd: list[str] | None = None
    entrypoint: list[str] | None = None
    healthcheck: list[str] | None = None
    copies: list[tuple[list[str], list[str], str]] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)


def exec_form(text: str) -> list[str]:
    text = text.strip()
    if text.startswith("["):
        return list(yaml.safe_load(text))
    return ["/bin/sh", "-c", text]


def parse_dockerfile(path: str) -> tuple[dict[str, str], list[Stage]]:
    lines, buf = [], ""
    for raw in open(path).read().splitlines():
        if not buf and raw.lstrip().startswith("#"):
            continue
        if raw.rstrip().endswith("\\"):
            buf += raw.rstrip()[:-1] + " "
            continue
        buf += raw
        if buf.strip():
            lines.append(buf.strip())
        buf = ""
    args, stages = {}, []
    for line in lines:
        instr, _, rest = line.partition(" ")
        instr = instr.upper()
        if instr == "ARG" and not stages:
            name, _, default = rest.strip().partition("=")
            args[name] = default
        elif instr == "FROM":
            words = rest.split()
            name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else None
            stages.append(Stage(words[0], name))
        elif not stages:
            continue
        elif instr == "ENV":
            words = shlex.split(rest)
            if words and "=" not in words[0]:
                stages[-1].env[words[0]] = " ".join(words[1:])
            else:
                for word in words:
                    k, _, v = word.partition("=")
                    stages[-1].env[k] = v
        elif instr == "CMD":
            stages[-1].cmd = exec_form(rest)
        elif instr == "ENTRYPOINT":
            stages[-1].entrypoint = exec_form(rest)
        elif instr == "HEALTHCHECK":
            m = re.search(r"\bCMD\b(.*)$", rest)
            if m:
                stages[-1].healthcheck = exec_form(m.group(1))
        elif instr in ("COPY", "ADD"):
            words = shlex.split(rest) if not rest.strip().startswith("[") else yaml.safe_load(rest)
            flags = [w for w in words if w.startswith("--")]
            paths = [w for w in words if not w.startswith("--")]
            stages[-1].copies.append((flags, paths[:-1], paths[-1]))
        elif instr == "RUN":
            stages[-1].runs.append(rest)
    return args, stages


def dockerignore_patterns(root: str) -> list[str]:
    path = os.path.join(root, ".dockerignore")
    if not os.path.exists(path):
        return []
    return [
        line.strip().lstrip("/")
        for line in open(path)
        if line.strip() and not line.startswith("#") and not line.startswith("!")
    ]


def ignored(rel: str, patterns: list[str]) -> str | None:
    parts = rel.strip("/").split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    for pattern in patterns:
        for prefix in prefixes:
            if fnmatch.fnmatchcase(prefix, pattern):
                return pattern
            if pattern.startswith("**/") and any(
                fnmatch.fnmatchcase("/".join(prefix.split("/")[k:]), pattern[3:])
                for k in range(len(prefix.split("/")))
            ):
                return pattern
    return None


@dataclass
class Image:
    """What deploy/Dockerfile's default (runtime) target holds."""

    env: dict[str, str]
    default_cmd: list[str]
    binaries: set[str]  # service binaries, from the cargo build
    commands: set[str]  # everything runnable by name in /usr/local/bin


def check_dockerfile(root: str, ws: Workspace, rep: Report) -> Image | None:
    path = os.path.join(root, "deploy/Dockerfile")
    where = "deploy/Dockerfile"
    if not os.path.exists(path):
        rep.fail(where, "missing")
        return None
    args, stages = parse_dockerfile(path)
    if not stages:
        rep.fail(where, "no FROM")
        return None
    runtime = stages[-1]
    builder = next((s for s in stages if s.name == "builder"), None)
    built: set[str] = set()
    if builder is None:
        rep.fail(where, "no `builder` stage")
    else:
        if builder.env.get("SQLX_OFFLINE") != "true":
            rep.fail(where, "the builder does not set SQLX_OFFLINE=true")
        build = next((r for r in builder.runs if "cargo build" in r), None)
        if build is None:
            rep.fail(where, "the builder runs no `cargo build`")
        else:
            words = shlex.split(build[build.index("cargo build") :].split("&&")[0])
            if "--locked" not in words:
                rep.fail(where, "cargo build without --locked")
            if "--release" not in words:
                rep.fail(where, "cargo build without --release")
            for flag, value in zip(words, words[1:]):
                if flag in ("-p", "--package"):
                    if value not in ws.packages:
                        rep.fail(where, f"cargo build -p {value}: no such workspace package")
                    elif "--bins" in words:
                        built |= set(ws.packages[value].bins)
                if flag == "--bin":
                    if value not in ws.bin_package:
                        rep.fail(where, f"cargo build --bin {value}: no such binary")
                    built.add(value)
            copied = set(re.findall(r"target/release/([A-Za-z0-9_-]+)", build))
            if copied != built:
                rep.fail(where, f"binaries built {sorted(built)} but copied out {sorted(copied)}")
        rust = re.search(r"\$\{RUST_VERSION\}", builder.base)
        if rust and ws.rust_version and "RUST_VERSION" in args:
            have = tuple(int(x) for x in args["RUST_VERSION"].split(".")[:2])
            need = tuple(int(x) for x in ws.rust_version.split(".")[:2])
            if have < need:
                rep.fail(where, f"rust {args['RUST_VERSION']} is older than rust-version {ws.rust_version}")
    # COPY sources exist in the context and are not .dockerignored.
    patterns = dockerignore_patterns(root)
    commands = set()
    for stage in stages:
        for flags, sources, dest in stage.copies:
            if any(f.startswith("--from") for f in flags):
                if stage is runtime and dest.rstrip("/") == "/usr/local/bin":
                    commands |= built
                continue
            for src in sources:
                rel = src.rstrip("/")
                if rel in (".", ""):
                    continue
                if not glob.glob(os.path.join(root, rel)):
                    rep.fail(where, f"COPY {src}: no such file in the build context")
                hit = ignored(rel, patterns)
                if hit:
                    rep.fail(where, f"COPY {src}: excluded by .dockerignore ({hit})")
            if stage is runtime and dest.startswith("/usr/local/bin/"):
                commands.add(dest.rsplit("/", 1)[1])
    if ignored(".sqlx", patterns) or not os.path.isdir(os.path.join(root, ".sqlx")):
        rep.fail(where, ".sqlx/ (offline query data) is missing from the build context")
    if runtime.cmd is None and runtime.entrypoint is None:
        rep.fail(where, "the runtime stage has no CMD")
    default = (runtime.entrypoint or []) + (runtime.cmd or [])
    for label, command in (("CMD", default), ("HEALTHCHECK", runtime.healthcheck)):
        if command and command[0] not in commands:
            rep.fail(where, f"{label} runs {command[0]!r}, which the image does not hold ({sorted(commands)})")
    for name in runtime.env:
        readers = [b for b in built if name in ws.reads(b)]
        if not readers:
            rep.fail(where, f"ENV {name}: no binary in the image reads it")
    bind = runtime.env.get("APP_BIND", "")
    if bind and bind.rsplit(":", 1)[0] in ("127.0.0.1", "localhost", "[::1]"):
        rep.fail(where, "ENV APP_BIND listens on loopback only")
    return Image(dict(runtime.env), default, built, commands)


# ------------------------------------------------------------- containers


@dataclass
class Container:
    where: str
    binary: str | None  # None: not one of the image's service binaries
    env: dict[str, object]  # name -> value, or "secret:..."/"field:..." for references
    port: int | None = None  # the port APP_BIND makes it listen on
    service: str = ""  # compose: the service's name
    aliases: set[str] = field(default_factory=set)  # compose: its network aliases


def effective_binary(image: Image, command: list[str] | None, args: list[str] | None, rep: Report, where: str) -> str | None:
    argv = command or args or image.default_cmd
    if not argv:
        rep.fail(where, "no command")
        return None
    name = argv[0]
    if name not in image.commands:
        rep.fail(where, f"runs {name!r}, not a binary of the image ({sorted(image.binaries)})")
        return None
    if name not in image.binaries:
        return None
    return name


def check_env(c: Container, ws: Workspace, rep: Report, direct: set[str], helpers: set[str]) -> None:
    """Direct settings must be read by the container's own binary."""
    if c.binary is None:
        return
    reads = ws.reads(c.binary)
    for name in sorted(direct):
        if name in reads or name in helpers:
            continue
        others = sorted(b for b in ws.bin_package if name in ws.reads(b))
        hint = f" (read only by {', '.join(others)})" if others else " (no service reads it)"
        rep.fail(c.where, f"sets {name}, which {c.binary} does not read{hint}")
    for name, why in MUST_SET.items():
        if name in reads and name not in c.env:
            rep.fail(c.where, f"{c.binary} reads {name} but it is not set: {why}")
    bind = str(c.env.get("APP_BIND", ""))
    if bind and bind.rsplit(":", 1)[0] in ("127.0.0.1", "localhost", "[::1]"):
        rep.fail(c.where, "APP_BIND listens on loopback only")
    if ws.uses(c.binary, "token_verifier(") and not (
        {"APP_JWT_PUBLIC_KEY", "APP_JWT_PRIVATE_KEY"} & set(c.env)
    ):
        rep.fail(c.where, f"{c.binary} verifies access tokens but has no APP_JWT_PUBLIC_KEY or APP_JWT_PRIVATE_KEY")
    if ws.uses(c.binary, "TokenSigner::from_seed(") and "APP_JWT_PRIVATE_KEY" not in c.env:
        if not ws.uses(c.binary, "token_verifier("):
            rep.fail(c.where, f"{c.binary} signs access tokens but has no APP_JWT_PRIVATE_KEY (a throwaway key per process)")


def same_source(containers: list[Container], name: str, rep: Report, where: str) -> None:
    values = {repr(c.env[name]) for c in containers if c.binary and name in c.env}
    if len(values) > 1:
        rep.fail(where, f"{name} differs between the services that share it: {sorted(values)}")


def defaults(text: str) -> str:
    """A compose value with each ${NAME:-default} at its default."""
    return re.sub(r"\$\{[A-Za-z0-9_]+:?-([^}]*)\}", r"\1", text)


def port_of(bind: object) -> int | None:
    try:
        return int(str(bind).rsplit(":", 1)[1])
    except (IndexError, ValueError):
        return None


# ------------------------------------------------------------------ nginx


@dataclass
class Directive:
    name: str
    args: list[str]
    block: list["Directive"] | None = None


def parse_nginx(text: str) -> list[Directive]:
    tokens, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "{};":
            tokens.append(("sym", c))
            i += 1
        elif c in "\"'":
            j, buf = i + 1, []
            while j < n and text[j] != c:
                if text[j] == "\\" and j + 1 < n:
                    buf.append(text[j + 1])
                    j += 2
                    continue
                buf.append(text[j])
                j += 1
            tokens.append(("word", "".join(buf)))
            i = j + 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in "{};":
                j += 1
            tokens.append(("word", text[i:j]))
            i = j
    pos = 0

    def block(top: bool) -> list[Directive]:
        nonlocal pos
        out, words = [], []
        while pos < len(tokens):
            kind, value = tokens[pos]
            pos += 1
            if kind == "word":
                words.append(value)
            elif value == ";":
                if words:
                    out.append(Directive(words[0], words[1:]))
                words = []
            elif value == "{":
                if not words:
                    raise ValueError("a block without a name")
                out.append(Directive(words[0], words[1:], block(False)))
                words = []
            else:
                if top:
                    raise ValueError("unbalanced }")
                return out
        if not top:
            raise ValueError("unclosed {")
        return out

    return block(True)


def find(directives: list[Directive], name: str) -> list[Directive]:
    return [d for d in directives if d.name == name]


class NginxServer:
    """nginx's location selection, for one server block."""

    def __init__(self, http: list[Directive], server: list[Directive]):
        self.http, self.server = http, server
        self.locations = [d for d in server if d.name == "location"]

    def select(self, uri: str) -> Directive | None:
        best, best_len = None, -1
        for loc in self.locations:
            if loc.args[0] == "=" and loc.args[1] == uri:
                return loc
        for loc in self.locations:
            mod, path = (loc.args[0], loc.args[1]) if len(loc.args) == 2 else ("", loc.args[0])
            if mod in ("", "^~") and uri.startswith(path) and len(path) > best_len:
                best, best_len = loc, len(path)
        if best is not None and best.args[0] == "^~":
            return best
        for loc in self.locations:
            if loc.args[0] in ("~", "~*"):
                flags = re.I if loc.args[0] == "~*" else 0
                if re.search(loc.args[1], uri, flags):
                    return loc
        return best

    def ports(self) -> set[int]:
        out = set()
        for listen in find(self.server, "listen"):
            m = re.search(r"(\d+)$", listen.args[0])
            if m:
                out.add(int(m.group(1)))
        return out

    def inherited(self, loc: Directive, name: str) -> list[Directive]:
        for level in (loc.block or [], self.server, self.http):
            found = find(level, name)
            if found:
                return found
        return []


@dataclass
class Outcome:
    kind: str  # "proxy", "static", "return", "none"
    target: str = ""  # upstream name or status
    services: set[str] = field(default_factory=set)
    location: Directive | None = None


def resolve_nginx(srv: NginxServer, upstreams: dict[str, list[Directive]], hosts: dict[str, set[str]], uri: str) -> Outcome:
    loc = srv.select(uri)
    if loc is None:
        return Outcome("none")
    body = loc.block or []
    proxy = find(body, "proxy_pass")
    if proxy:
        url = urlsplit(proxy[0].args[0])
        name = url.hostname or ""
        services = set()
        for server in find(upstreams.get(name, []), "server") or [Directive("server", [url.netloc])]:
            host = server.args[0].split(":")[0]
            services |= hosts.get(host, set())
        return Outcome("proxy", name, services, loc)
    ret = find(body, "return")
    if ret:
        return Outcome("return", ret[0].args[0], location=loc)
    tries = find(body, "try_files")
    if tries:
        return Outcome("static", " ".join(tries[0].args), location=loc)
    return Outcome("static", "", location=loc)


# -------------------------------------------------------------- ingress


@dataclass
class IngressPath:
    host: str
    path: str
    path_type: str
    ingress: dict
    service: str
    port: object


def ingress_paths(ingresses: list[dict]) -> dict[str, list[IngressPath]]:
    by_host: dict[str, list[IngressPath]] = {}
    for ing in ingresses:
        for rule in ing.get("spec", {}).get("rules", []) or []:
            host = rule.get("host", "*")
            for p in (rule.get("http") or {}).get("paths", []) or []:
                svc = p["backend"]["service"]
                port = svc.get("port", {})
                by_host.setdefault(host, []).append(
                    IngressPath(host, p.get("path", "/"), p.get("pathType", ""), ing, svc["name"], port.get("name", port.get("number")))
                )
    return by_host


def ann(obj: dict, key: str) -> str | None:
    return (obj.get("metadata", {}).get("annotations") or {}).get("nginx.ingress.kubernetes.io/" + key)


def ingress_select(paths: list[IngressPath], uri: str) -> IngressPath | None:
    """ingress-nginx: with use-regex (or rewrite-target) on any Ingress of
    the host, every path is `~* "^path"`, longest path first."""
    regex = any(ann(p.ingress, "use-regex") == "true" or ann(p.ingress, "rewrite-target") for p in paths)
    if regex:
        for p in sorted(paths, key=lambda p: len(p.path), reverse=True):
            if re.match(p.path, uri, re.I):
                return p
        return None
    best = None
    for p in paths:
        if p.path_type == "Exact" and uri == p.path:
            return p
        prefix = p.path.rstrip("/")
        if uri == prefix or uri.startswith(prefix + "/") or p.path == "/":
            if best is None or len(p.path) > len(best.path):
                best = p
    return best


# ----------------------------------------------------------------- checks


def check_yaml(root: str, rep: Report) -> dict[str, list]:
    docs = {}
    files = sorted(glob.glob(os.path.join(root, "deploy/**/*.y*ml"), recursive=True))
    for path in files:
        rel = os.path.relpath(path, root)
        try:
            docs[rel] = [d for d in yaml.safe_load_all(open(path)) if d is not None]
        except yaml.YAMLError as error:
            rep.fail(rel, f"does not parse: {error}".replace("\n", " "))
    return docs


def env_file_keys(path: str) -> dict[str, str]:
    keys = {}
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                k, _, v = line.partition("=")
                keys[k.strip()] = v
    return keys


def gen_secrets_keys(root: str, mode: str) -> set[str]:
    path = os.path.join(root, "deploy/gen-secrets.sh")
    if not os.path.exists(path):
        return set()
    m = re.search(rf"^\s*{mode}\)(.*?);;", open(path).read(), re.S | re.M)
    return set(re.findall(r"^([A-Z][A-Z0-9_]*)=", m.group(1), re.M)) if m else set()


def check_compose(root: str, docs: dict, image: Image | None, ws: Workspace, rep: Report) -> tuple[dict, list[Container]]:
    where = "deploy/compose.yaml"
    compose = (docs.get(where) or [None])[0]
    containers: list[Container] = []
    if not compose or image is None:
        if not compose:
            rep.fail(where, "missing or empty")
        return {}, containers
    services = compose.get("services", {})
    # Whatever compose needs from deploy/.env, gen-secrets.sh must make.
    text = open(os.path.join(root, where)).read()
    required = set(re.findall(r"\$\{([A-Z0-9_]+):?\?", text))
    made = gen_secrets_keys(root, "compose")
    for name in sorted(required - made):
        rep.fail(where, f"requires ${{{name}}}, which `deploy/gen-secrets.sh` does not print")
    ours = set()
    for name, svc in services.items():
        build = svc.get("build")
        if isinstance(build, dict) and build.get("dockerfile", "").endswith("deploy/Dockerfile"):
            if build.get("target", "runtime") == "runtime":
                ours.add(svc.get("image"))
    for name, svc in services.items():
        here = f"{where} services.{name}"
        deps = svc.get("depends_on") or {}
        for dep, cond in (deps.items() if isinstance(deps, dict) else ((d, {}) for d in deps)):
            if dep not in services:
                rep.fail(here, f"depends on unknown service {dep}")
            elif (cond or {}).get("condition") == "service_healthy" and "healthcheck" not in services[dep]:
                rep.fail(here, f"waits for {dep} to be healthy, which has no healthcheck")
        for dep in ("postgres", "redis"):
            if svc.get("image") in ours and dep in services:
                if (deps.get(dep) or {}).get("condition") != "service_healthy":
                    rep.fail(here, f"does not wait for {dep} (depends_on condition: service_healthy)")
        if svc.get("image") not in ours:
            continue
        raw_env = svc.get("environment") or {}
        if isinstance(raw_env, list):
            raw_env = dict(item.split("=", 1) if "=" in item else (item, "") for item in raw_env)
        command = svc.get("command")
        if isinstance(command, str):
            command = shlex.split(command)
        binary = effective_binary(image, command, None, rep, here)
        env = dict(image.env)
        env.update({k: str(v) for k, v in raw_env.items()})
        aliases = set()
        networks = svc.get("networks")
        for net in networks.values() if isinstance(networks, dict) else []:
            aliases |= set((net or {}).get("aliases", []))
        c = Container(here, binary, env, port_of(env.get("APP_BIND")), name, aliases)
        check_env(c, ws, rep, set(raw_env), set())
        test = (svc.get("healthcheck") or {}).get("test")
        if isinstance(test, list) and len(test) > 1 and test[0] == "CMD":
            if test[1] not in image.commands:
                rep.fail(here, f"healthcheck runs {test[1]!r}, which the image does not hold")
        containers.append(c)
    instances = [c for c in containers if c.binary and "APP_INSTANCE_ID" in ws.reads(c.binary) and "APP_INSTANCE_ID" in c.env]
    seen: dict[str, str] = {}
    for c in instances:
        value = str(c.env["APP_INSTANCE_ID"])
        if value in seen and ws.uses(c.binary, "Lease::acquire"):
            rep.fail(c.where, f"APP_INSTANCE_ID {value!r} is also {seen[value]}'s: they would share game leases")
        seen[value] = c.where
    for name in ("APP_INTERNAL_TOKEN", "APP_JWT_ISSUER", "APP_JWT_AUDIENCE", "APP_REDIS_PREFIX", "DATABASE_URL", "REDIS_URL"):
        same_source(containers, name, rep, where)
    return services, containers


def check_nginx_routes(root: str, services: dict, containers: list[Container], expected: dict, rep: Report) -> int:
    where = "deploy/nginx.conf"
    path = os.path.join(root, where)
    if not os.path.exists(path):
        rep.fail(where, "missing")
        return 0
    try:
        top = parse_nginx(open(path).read())
    except ValueError as error:
        rep.fail(where, f"does not parse: {error}")
        return 0
    http = (find(top, "http") or [Directive("http", [], [])])[0].block or []
    servers = [NginxServer(http, d.block or []) for d in find(http, "server")]
    if not servers:
        rep.fail(where, "no server block")
        return 0
    # The site: the server whose `location /` serves files.
    srv = next(
        (x for x in servers for loc in x.locations if loc.args == ["/"] and find(loc.block or [], "try_files")),
        servers[0],
    )
    upstreams = {u.args[0]: u.block or [] for u in find(http, "upstream")}
    hosts: dict[str, set[str]] = {}
    binary_of: dict[str, str | None] = {}
    port_of_service: dict[str, int | None] = {}
    for c in containers:
        name = c.service
        binary_of[name] = c.binary
        port_of_service[name] = c.port
        for host in {name} | c.aliases:
            hosts.setdefault(host, set()).add(name)
    for name in services:
        hosts.setdefault(name, {name})
    # Upstream servers are compose services, on the port they listen on.
    for up, body in upstreams.items():
        for server in find(body, "server"):
            host, _, port = server.args[0].partition(":")
            if host not in hosts:
                rep.fail(where, f"upstream {up}: {host} is not a compose service or alias")
            for svc in hosts.get(host, ()):
                if port_of_service.get(svc) and port and int(port) != port_of_service[svc]:
                    rep.fail(where, f"upstream {up}: {svc} listens on {port_of_service[svc]}, not {port}")
    # Every proxied location passes WebSocket upgrades on.
    for x, loc in ((x, loc) for x in servers for loc in x.locations):
        if find(loc.block or [], "proxy_pass"):
            headers = {d.args[0].lower() for d in x.inherited(loc, "proxy_set_header")}
            version = x.inherited(loc, "proxy_http_version")
            missing = {"upgrade", "connection", "host"} - headers
            label = f"server :{','.join(map(str, sorted(x.ports())))} location " + " ".join(loc.args)
            if missing:
                rep.fail(where, f"{label}: no proxy_set_header {', '.join(sorted(missing))}")
            if not version or version[0].args[0] != "1.1":
                rep.fail(where, f"{label}: proxy_http_version is not 1.1 (WebSockets need it)")
    game_room_services = {c.service for c in containers if c.binary == "game-room"}
    checked = 0
    for uri, want in expected.items():
        got = resolve_nginx(srv, upstreams, hosts, uri)
        checked += 1
        binaries = {binary_of.get(s) for s in got.services}
        if want == "blocked":
            if got.kind == "proxy" and binaries - {None}:
                rep.fail(where, f"{uri} reaches {', '.join(sorted(b for b in binaries if b))}: it must never be public")
        elif want == "static":
            if got.kind != "static" or not got.target.endswith("/index.html"):
                rep.fail(where, f"{uri} (a client route) does not fall back to /index.html ({got.kind} {got.target})")
        else:
            if got.kind != "proxy" or not got.services:
                rep.fail(where, f"{uri} is not proxied ({got.kind} {got.target}); it is {'/'.join(sorted(want))}'s")
            elif not binaries <= want:
                rep.fail(where, f"{uri} goes to {sorted(got.services)}, not to {'/'.join(sorted(want))}")
            elif "game-room" in binaries:
                if got.services != game_room_services:
                    rep.fail(where, f"{uri}: upstream {got.target} misses game-room instances {sorted(game_room_services - got.services)}")
                if len(got.services) > 1 and not find(upstreams.get(got.target, []), "hash"):
                    rep.warn(where, f"upstream {got.target} is not hashed: players of one game may land apart")
    # The address each game-room instance advertises (sent in `elsewhere`;
    # the web client keeps only its origin) reaches that instance through a
    # port of the proxy, and never its internal endpoint.
    published: dict[int, int] = {}
    for svc in services.values():
        if "nginx" not in str(svc.get("image", "")):
            continue
        for mapping in svc.get("ports", []) or []:
            parts = defaults(str(mapping)).split(":")
            if len(parts) >= 2 and parts[-2].isdigit() and parts[-1].isdigit():
                published[int(parts[-2])] = int(parts[-1])
    for c in containers:
        if c.binary != "game-room" or "APP_INSTANCE_URL" not in c.env:
            continue
        url = urlsplit(defaults(str(c.env["APP_INSTANCE_URL"])))
        port = url.port or (443 if url.scheme == "https" else 80)
        if url.path.strip("/"):
            rep.warn(c.where, "APP_INSTANCE_URL has a path; the web client keeps only the origin of `elsewhere`")
        inner = published.get(port)
        listener = next((x for x in servers if inner in x.ports()), None)
        if inner is None or listener is None:
            rep.fail(c.where, f"APP_INSTANCE_URL {url.geturl()}: port {port} is not a port of the proxy")
            continue
        if listener is srv:
            rep.warn(c.where, "APP_INSTANCE_URL is the site itself: `elsewhere` would send players back to the hash")
            continue
        got = resolve_nginx(listener, upstreams, hosts, sample_path("/v1/games/{id}/play"))
        if got.kind != "proxy" or got.services != {c.service}:
            rep.fail(where, f"port {inner} (APP_INSTANCE_URL of {c.service}) reaches {sorted(got.services) or got.kind}, not {c.service}")
        for uri in ("/internal/v1/games", "/metrics"):
            blocked = resolve_nginx(listener, upstreams, hosts, uri)
            if blocked.kind == "proxy" and blocked.services:
                rep.fail(where, f"port {inner}: {uri} reaches {sorted(blocked.services)}")
        checked += 3
    return checked


def nginx_version(exe: str) -> tuple[int, ...]:
    out = subprocess.run([exe, "-v"], capture_output=True, text=True).stderr
    m = re.search(r"nginx/(\d+)\.(\d+)\.(\d+)", out)
    return tuple(int(x) for x in m.groups()) if m else (0, 0, 0)


def check_nginx_syntax(root: str, rep: Report) -> str:
    exe = os.environ.get("NGINX_BIN") or shutil.which("nginx")
    if not exe:
        return "nginx -t skipped (no nginx binary; NGINX_BIN=/path/to/nginx to use one)"
    version = nginx_version(exe)
    done, before = [], len(rep.problems)
    with tempfile.TemporaryDirectory() as tmp:
        mime = "/etc/nginx/mime.types"
        if not os.path.exists(mime):
            mime = os.path.join(tmp, "mime.types")
            open(mime, "w").write("types { text/html html; }\n")
        user = "user root;\n" if os.geteuid() == 0 else ""
        for name, wrap in (("nginx.conf", False), ("web.nginx.conf", True)):
            src = os.path.join(root, "deploy", name)
            if not os.path.exists(src):
                continue
            text = open(src).read()
            # No compose DNS here: upstream hosts become 127.0.0.1.
            text = re.sub(r"(?m)^(\s*server\s+)[A-Za-z0-9_.-]+(:\d+)", r"\g<1>127.0.0.1\2", text)
            if version < (1, 27, 3):  # upstream `resolve` came to open-source nginx in 1.27.3
                text = re.sub(r"\s+resolve(?=\s*;)", "", text)
            text = text.replace("/tmp/", tmp + "/").replace("/etc/nginx/mime.types", mime)
            if wrap:  # a conf.d file: give it the main context it lives in
                temps = "".join(f"{kind}_temp_path {tmp}/{kind};\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
                text = f"pid {tmp}/web.pid;\nevents {{}}\nhttp {{\ninclude {mime};\naccess_log /dev/stdout;\n{temps}{text}\n}}\n"
            conf = os.path.join(tmp, name)
            open(conf, "w").write(user + text)
            env = {k: v for k, v in os.environ.items() if k != "NGINX"}  # nginx's own variable
            run = subprocess.run([exe, "-t", "-q", "-e", "stderr", "-p", tmp, "-c", conf], capture_output=True, text=True, env=env)
            if run.returncode != 0:
                rep.fail(f"deploy/{name}", "nginx -t: " + run.stderr.strip().replace("\n", " | "))
            done.append(name)
    v = ".".join(map(str, version))
    extra = " without `resolve`" if version < (1, 27, 3) else ""
    verdict = "passed" if len(rep.problems) == before else "failed"
    return f"nginx -t {verdict} on {', '.join(done)} (nginx {v}{extra})"


def check_kubernetes(root: str, docs: dict, image: Image | None, ws: Workspace, expected: dict, rep: Report) -> tuple[int, int]:
    files = {k: v for k, v in docs.items() if k.startswith("deploy/k8s/")}
    kust_path = "deploy/k8s/kustomization.yaml"
    kust = (files.pop(kust_path, None) or [{}])[0]
    listed = {os.path.normpath(os.path.join("deploy/k8s", r)) for r in kust.get("resources", [])}
    for rel in files:
        if rel not in listed:
            rep.fail(kust_path, f"does not list {rel}")
    for rel in listed:
        if rel not in files:
            rep.fail(kust_path, f"lists {rel}, which is missing")
    objects = [(rel, d) for rel, ds in files.items() for d in ds]
    by_kind: dict[str, dict[str, tuple[str, dict]]] = {}
    for rel, obj in objects:
        kind, name = obj.get("kind"), obj.get("metadata", {}).get("name")
        if not kind or not name or not obj.get("apiVersion"):
            rep.fail(rel, "an object without apiVersion, kind or metadata.name")
            continue
        if name in by_kind.setdefault(kind, {}):
            rep.fail(rel, f"{kind}/{name} is defined twice")
        by_kind[kind][name] = (rel, obj)
    # Secrets: generated by kustomize from secrets.env (keys: the example).
    secret_keys: dict[str, set[str]] = {}
    for gen in kust.get("secretGenerator", []) or []:
        keys: set[str] = set()
        for env_file in (gen.get("envs") or []) + ([gen["env"]] if gen.get("env") else []):
            example = os.path.join(root, "deploy/k8s", env_file + ".example")
            real = os.path.join(root, "deploy/k8s", env_file)
            if not os.path.exists(example):
                rep.fail(kust_path, f"secretGenerator {gen['name']}: no {env_file}.example to list its keys")
            keys |= set(env_file_keys(example)) | set(env_file_keys(real))
            made = gen_secrets_keys(root, "k8s")
            if made and made != set(env_file_keys(example)):
                rep.fail(f"deploy/k8s/{env_file}.example", f"keys differ from `deploy/gen-secrets.sh k8s`: {sorted(made ^ set(env_file_keys(example)))}")
        secret_keys[gen["name"]] = keys
    for name, (_, obj) in by_kind.get("Secret", {}).items():
        secret_keys[name] = set(obj.get("data") or {}) | set(obj.get("stringData") or {})
    config_keys = {name: obj.get("data") or {} for name, (_, obj) in by_kind.get("ConfigMap", {}).items()}
    config_readers: dict[str, set[str]] = {name: set() for name in config_keys}

    deployments = by_kind.get("Deployment", {})
    containers: list[Container] = []
    deployment_binary: dict[str, str | None] = {}
    deployment_ports: dict[str, dict] = {}
    hpa_targets = {obj["spec"]["scaleTargetRef"]["name"]: obj for _, obj in by_kind.get("HorizontalPodAutoscaler", {}).values()}
    shutdown = re.search(r"\.shutdown_timeout\((\d+)\)", ws.packages["mancala-platform"].source) if "mancala-platform" in ws.packages else None
    shutdown_secs = int(shutdown.group(1)) if shutdown else 30
    for name, (rel, dep) in deployments.items():
        here = f"{rel} Deployment/{name}"
        spec = dep.get("spec", {})
        pod = spec.get("template", {}).get("spec", {})
        labels = spec.get("template", {}).get("metadata", {}).get("labels", {}) or {}
        selector = (spec.get("selector") or {}).get("matchLabels", {}) or {}
        if not selector or any(labels.get(k) != v for k, v in selector.items()):
            rep.fail(here, "selector.matchLabels is empty or not among the pod template's labels")
        pod_sc = pod.get("securityContext") or {}
        ports: dict = {}
        binaries = set()
        for ctr in pod.get("containers", []):
            cwhere = f"{here} container {ctr.get('name')}"
            for p in ctr.get("ports", []) or []:
                ports[p.get("name")] = p["containerPort"]
                ports[p["containerPort"]] = p["containerPort"]
            for probe in ("readinessProbe", "livenessProbe"):
                spec_p = ctr.get(probe)
                if not spec_p:
                    rep.fail(cwhere, f"no {probe}")
                    continue
                port = (spec_p.get("httpGet") or {}).get("port")
                if port is not None and port not in ports:
                    rep.fail(cwhere, f"{probe} port {port} is not a container port")
            requests = (ctr.get("resources") or {}).get("requests") or {}
            limits = (ctr.get("resources") or {}).get("limits") or {}
            for res in ("cpu", "memory"):
                if res not in requests:
                    rep.fail(cwhere, f"no resources.requests.{res}")
            if "memory" not in limits:
                rep.fail(cwhere, "no resources.limits.memory")
            sc = ctr.get("securityContext") or {}
            if not (sc.get("runAsNonRoot") or pod_sc.get("runAsNonRoot")):
                rep.fail(cwhere, "runAsNonRoot is not set")
            if sc.get("allowPrivilegeEscalation") is not False:
                rep.fail(cwhere, "allowPrivilegeEscalation is not false")
            image_name = ctr.get("image", "").split("@")[0].rsplit("/", 1)[-1].split(":")[0]
            if image_name != "mancala-arena" or image is None:
                continue
            binary = effective_binary(image, ctr.get("command"), ctr.get("args"), rep, cwhere)
            binaries.add(binary)
            env: dict[str, object] = {}
            for key, value in image.env.items():
                env[key] = value
            for ref in ctr.get("envFrom", []) or []:
                if "configMapRef" in ref:
                    cm = ref["configMapRef"]["name"]
                    if cm not in config_keys:
                        rep.fail(cwhere, f"envFrom ConfigMap {cm}, which is not defined")
                        continue
                    config_readers[cm].add(binary or "")
                    env.update({k: str(v) for k, v in config_keys[cm].items()})
                if "secretRef" in ref:
                    sec = ref["secretRef"]["name"]
                    if sec not in secret_keys:
                        rep.fail(cwhere, f"envFrom Secret {sec}, which is not defined")
                        continue
                    for key in secret_keys[sec]:
                        if binary and key not in ws.reads(binary):
                            rep.fail(cwhere, f"gets {key} from Secret {sec}, which {binary} does not read")
                        env[key] = f"secret:{sec}/{key}"
            direct: set[str] = set()
            referenced = set(re.findall(r"\$\(([A-Za-z0-9_]+)\)", " ".join(str(e.get("value", "")) for e in ctr.get("env", []) or [])))
            for item in ctr.get("env", []) or []:
                key = item["name"]
                direct.add(key)
                source = item.get("valueFrom") or {}
                if "secretKeyRef" in source:
                    sec, k = source["secretKeyRef"]["name"], source["secretKeyRef"]["key"]
                    if sec not in secret_keys:
                        rep.fail(cwhere, f"{key} from Secret {sec}, which is not defined")
                    elif k not in secret_keys[sec]:
                        rep.fail(cwhere, f"{key} from Secret {sec} key {k}, which it does not have")
                    env[key] = f"secret:{sec}/{k}"
                elif "configMapKeyRef" in source:
                    cm, k = source["configMapKeyRef"]["name"], source["configMapKeyRef"]["key"]
                    if k not in config_keys.get(cm, {}):
                        rep.fail(cwhere, f"{key} from ConfigMap {cm} key {k}, which is not defined")
                    env[key] = config_keys.get(cm, {}).get(k, "")
                elif "fieldRef" in source:
                    env[key] = f"field:{source['fieldRef']['fieldPath']}"
                else:
                    env[key] = str(item.get("value", ""))
            c = Container(cwhere, binary, env, port_of(env.get("APP_BIND")))
            helpers = {h for h in referenced if h not in (ws.reads(binary) if binary else set())}
            check_env(c, ws, rep, direct, helpers)
            if c.port is not None and c.port not in ports:
                rep.fail(cwhere, f"APP_BIND listens on {c.port}, which is not a container port")
            # Many replicas must not share an instance id.
            many = (spec.get("replicas") or 1) > 1 or name in hpa_targets
            instance = env.get("APP_INSTANCE_ID")
            if many and binary and ws.uses(binary, "Lease::acquire") and (instance is None or not str(instance).startswith("field:")):
                rep.fail(cwhere, "APP_INSTANCE_ID must be the pod's own (fieldRef metadata.name): replicas would share game leases")
            # Grace covers preStop plus the server's shutdown timeout.
            pre = ((ctr.get("lifecycle") or {}).get("preStop") or {}).get("exec", {}).get("command", [])
            pre_secs = int(pre[1]) if len(pre) == 2 and pre[0] == "sleep" and pre[1].isdigit() else 0
            grace = pod.get("terminationGracePeriodSeconds", 30)
            if grace < pre_secs + shutdown_secs + 5:
                rep.fail(cwhere, f"terminationGracePeriodSeconds {grace} < preStop {pre_secs} s + shutdown {shutdown_secs} s + 5")
            containers.append(c)
        deployment_binary[name] = next(iter(binaries), None) if len(binaries) == 1 else None
        deployment_ports[name] = ports
        if "game-room" in binaries:
            replicas = hpa_targets[name]["spec"].get("minReplicas", 1) if name in hpa_targets else spec.get("replicas", 1)
            if replicas < 2:
                rep.fail(here, f"game-room runs {replicas} replica(s); at least 2")
            if name in hpa_targets and "replicas" in spec:
                rep.warn(here, "sets replicas and has an HPA: every apply resets the HPA's choice")
    for cm, keys in config_keys.items():
        readers = config_readers[cm] - {""}
        for key in keys:
            if readers and not any(key in ws.reads(b) for b in readers):
                rep.fail(f"deploy/k8s ConfigMap/{cm}", f"{key} is read by none of {sorted(readers)}")
    for name in ("APP_INTERNAL_TOKEN", "APP_JWT_ISSUER", "APP_JWT_AUDIENCE", "APP_REDIS_PREFIX", "DATABASE_URL", "REDIS_URL"):
        same_source(containers, name, rep, "deploy/k8s")

    services = by_kind.get("Service", {})
    service_deployment: dict[str, str] = {}
    for name, (rel, svc) in services.items():
        sel = (svc.get("spec") or {}).get("selector") or {}
        matches = [
            d for d, (_, dep) in deployments.items()
            if sel and all((dep["spec"]["template"]["metadata"].get("labels") or {}).get(k) == v for k, v in sel.items())
        ]
        if not matches:
            rep.fail(f"{rel} Service/{name}", "its selector matches no Deployment's pods")
            continue
        service_deployment[name] = matches[0]
        for port in svc["spec"].get("ports", []):
            target = port.get("targetPort", port.get("port"))
            if target not in deployment_ports[matches[0]]:
                rep.fail(f"{rel} Service/{name}", f"targetPort {target} is not a port of Deployment/{matches[0]}")
    for kind in ("HorizontalPodAutoscaler",):
        for name, (rel, obj) in by_kind.get(kind, {}).items():
            ref = obj["spec"]["scaleTargetRef"]
            if ref.get("kind") != "Deployment" or ref.get("name") not in deployments:
                rep.fail(f"{rel} {kind}/{name}", f"targets {ref.get('kind')}/{ref.get('name')}, which is not defined")
                continue
            spec = obj["spec"]
            if spec.get("minReplicas", 1) > spec.get("maxReplicas", 0):
                rep.fail(f"{rel} {kind}/{name}", "minReplicas > maxReplicas")
            pod = deployments[ref["name"]][1]["spec"]["template"]["spec"]
            for metric in spec.get("metrics", []):
                res = (metric.get("resource") or {}).get("name")
                if res and not all(res in ((c.get("resources") or {}).get("requests") or {}) for c in pod["containers"]):
                    rep.fail(f"{rel} {kind}/{name}", f"scales on {res} but a container requests no {res}")
    for name, (rel, obj) in by_kind.get("PodDisruptionBudget", {}).items():
        sel = (obj["spec"].get("selector") or {}).get("matchLabels") or {}
        if not any(sel and all((dep["spec"]["template"]["metadata"].get("labels") or {}).get(k) == v for k, v in sel.items()) for _, dep in deployments.values()):
            rep.fail(f"{rel} PodDisruptionBudget/{name}", "its selector matches no Deployment's pods")

    ingresses = [obj for _, obj in by_kind.get("Ingress", {}).values()]
    for rel, ing in by_kind.get("Ingress", {}).values():
        for p in [p for ps in ingress_paths([ing]).values() for p in ps]:
            where = f"{rel} Ingress/{ing['metadata']['name']} {p.path}"
            if p.service not in services:
                rep.fail(where, f"backend Service {p.service} is not defined")
                continue
            ports = services[p.service][1]["spec"].get("ports", [])
            if not any(p.port in (sp.get("name"), sp.get("port")) for sp in ports):
                rep.fail(where, f"Service {p.service} has no port {p.port}")
            try:
                re.compile(p.path)
            except re.error as error:
                rep.fail(where, f"not a regular expression: {error}")
        if not ing.get("spec", {}).get("ingressClassName"):
            rep.warn(rel, f"Ingress/{ing['metadata']['name']} names no ingressClassName")
    checked = 0
    for host, paths in ingress_paths(ingresses).items():
        def target(uri: str) -> tuple[IngressPath | None, str | None]:
            p = ingress_select(paths, uri)
            if p is None:
                return None, None
            dep = service_deployment.get(p.service)
            return p, deployment_binary.get(dep) if dep else None

        for uri, want in expected.items():
            p, binary = target(uri)
            checked += 1
            label = f"deploy/k8s Ingress host {host}"
            if want == "blocked":
                if binary:
                    rep.fail(label, f"{uri} reaches {binary}: it must never be public")
            elif want == "static":
                if p is None or binary is not None:
                    rep.fail(label, f"{uri} (a client route) does not reach the web pods")
            else:
                if binary not in want:
                    runs = f"Service {p.service} (pods running {binary or 'no known service binary'})" if p else "no backend"
                    rep.fail(label, f"{uri} goes to {runs}, not to {'/'.join(sorted(want))}")
                elif binary == "game-room" and not ann(p.ingress, "upstream-hash-by"):
                    rep.warn(label, f"{uri}: game-room is not hashed (upstream-hash-by)")
                if p is not None and binary and int(ann(p.ingress, "proxy-read-timeout") or 60) < 300:
                    rep.warn(label, f"{uri}: proxy-read-timeout under 300 s; idle sockets may be cut")
        # The site URL the services are told is this host.
        for c in containers:
            for key in ("APP_PUBLIC_URL", "APP_ALLOWED_ORIGINS"):
                value = str(c.env.get(key, ""))
                if c.binary == "matchmaking" or key == "APP_ALLOWED_ORIGINS":
                    for origin in filter(None, value.split(",")):
                        if urlsplit(origin.strip()).hostname not in ingress_paths(ingresses):
                            rep.fail(c.where, f"{key} {origin} is not an Ingress host")
    return len(objects), checked


def check_kustomize(root: str, rep: Report) -> str:
    exe = shutil.which("kubectl")
    if not exe:
        return "kustomize skipped (no kubectl)"
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "k8s")
        shutil.copytree(os.path.join(root, "deploy/k8s"), copy)
        for example in glob.glob(os.path.join(copy, "*.example")):
            real = example[: -len(".example")]
            if not os.path.exists(real):
                shutil.copy(example, real)
        run = subprocess.run([exe, "kustomize", copy], capture_output=True, text=True, timeout=30)
        if run.returncode != 0:
            rep.fail("deploy/k8s", "kubectl kustomize: " + run.stderr.strip().replace("\n", " | "))
            return "kustomize failed"
        rendered = [d for d in yaml.safe_load_all(run.stdout) if d]
        return f"kustomize rendered {len(rendered)} objects"


def expected_routes(ws: Workspace, binaries: set[str], rep: Report) -> dict[str, object]:
    """Sample URI -> the set of binaries that must serve it, "blocked" or
    "static"."""
    expected: dict[str, object] = {}
    for binary in sorted(binaries):
        pkg = ws.bin_package[binary]
        if "scope(" in pkg.source:
            rep.warn(pkg.dir, "uses web::scope: its prefixes are not seen by the route check")
        for route in ws.routes(binary):
            uri = sample_path(route)
            if route.startswith("/internal/"):
                expected[uri] = "blocked"
            else:
                served = expected.setdefault(uri, set())
                if isinstance(served, set):
                    served.add(binary)
    expected["/metrics"] = "blocked"
    client = ws.client_routes()
    if client is None:
        rep.notes.append("client routes not found (services/arena/src/web.rs)")
    for route in client or []:
        expected.setdefault(sample_path(route), "static")
    return expected


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = parser.parse_args()
    root = args.root
    rep = Report()
    ws = Workspace(root)
    docs = check_yaml(root, rep)
    image = check_dockerfile(root, ws, rep)
    compose_services, compose_containers = check_compose(root, docs, image, ws, rep)
    deployed = {c.binary for c in compose_containers if c.binary}
    k8s_docs = {k: v for k, v in docs.items() if k.startswith("deploy/k8s/")}
    for ds in k8s_docs.values():
        for d in ds:
            for ctr in ((d.get("spec") or {}).get("template") or {}).get("spec", {}).get("containers", []) if isinstance(d, dict) else []:
                if ctr.get("command") and ctr["command"][0] in ws.bin_package:
                    deployed.add(ctr["command"][0])
    expected = expected_routes(ws, deployed, rep)
    routes_compose = check_nginx_routes(root, compose_services, compose_containers, expected, rep)
    objects, routes_k8s = check_kubernetes(root, docs, image, ws, expected, rep)
    nginx_note = check_nginx_syntax(root, rep)
    kustomize_note = check_kustomize(root, rep)

    for line in rep.warnings:
        print(f"  warning: {line}")
    for line in rep.problems:
        print(f"  FAIL: {line}")
    ndocs = sum(len(v) for v in docs.values())
    read = set().union(*(ws.reads(b) for b in ws.bin_package))
    summary = (
        f"{ndocs} YAML documents in {len(docs)} files; {len(read)} settings read by the services; "
        f"{len(compose_containers)} compose services and {objects} k8s objects; "
        f"{len(expected)} routes via nginx.conf ({routes_compose} checks) and the Ingress ({routes_k8s}); "
        f"{nginx_note}; {kustomize_note}"
    )
    if rep.warnings:
        summary += f"; {len(rep.warnings)} warning(s)"
    if rep.problems:
        print(f"check-deploy: FAILED, {len(rep.problems)} problem(s): {summary}")
        return 1
    print(f"check-deploy: ok: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
