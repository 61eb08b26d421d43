"""The agent's door (issue 33): ``get_patient_context`` over MCP (stdio, the SDK's own client,
the server a subprocess as a host starts it) and over the HTTP API (uvicorn on loopback, a
keep-alive client), against ``build_context`` itself (in this process, the same recorded call:
accesses and an injection naming the agent), warm, on one patient of ``context_n`` memories
loaded without detection, hashing embedder, each contender on its own copy of the store;
interleaved rounds, the queries of the other rows.
And the time from starting each server to its first answer (the client's spawn or the
process's start to the first ``get_patient_context`` result) on the seeded demo store with the
product's embedder (MiniLM; the tiny run uses its own small store and the hashing embedder).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..harness import Sample
from .common import REPO, Row, Setup, Target, log, query_at

OVERHEAD = Target("p50 ≤ build_context + 3 ms", max_value=0.003)
START = Target("≤ 3 s to the first answer", max_s=3.0)
AGENT = "bench-agent"
NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _store(path: Path, n: int) -> tuple[str, str]:
    """A SQLite store holding one patient of ``n`` memories (hashing embedder, no detection)."""
    import memory_core as mc
    from memory_core.demo import scale_dataset
    from memory_core.embedding import HashingEmbedder

    data = scale_dataset(1, n, NOW, seed=33)
    url = f"sqlite:///{path}"
    eng = mc.open_engine(url, HashingEmbedder(), clock=lambda: NOW)
    records = [
        {
            "patient_id": m.patient_id,
            "content": m.content,
            "memory_type": m.memory_type,
            "created_at": m.created_at,
            "tier": m.tier,
            "importance": m.importance,
            "pinned": m.pinned,
            "source": m.source,
        }
        for m in data.memories
    ]
    eng.add_memories(records, detect=False, now=NOW)
    pid = data.memories[0].patient_id
    eng.store.close()
    return url, pid


def _tokens(path: Path, pid: str) -> tuple[str, str]:
    from memory_core.server.grants import add_token

    return str(path), add_token(path, [pid], "bench")


def _wait(proc: subprocess.Popen[bytes], port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise RuntimeError(f"the server exited:\n{err[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.01)
    raise RuntimeError("the server did not start")


def _serve(url: str, embedder: str, tokens: str, port: int) -> subprocess.Popen[bytes]:
    args = ["-m", "memory_core", "--store", url, "--embedder", embedder, "serve"]
    args += ["--agent", AGENT, "--port", str(port), "--tokens", tokens]
    return subprocess.Popen([sys.executable, *args], env=_env(), stderr=subprocess.PIPE)


def _mcp_params(url: str, embedder: str, pid: str) -> Any:
    from mcp.client.stdio import StdioServerParameters

    args = ["-m", "memory_core", "--store", url, "--embedder", embedder, "mcp"]
    args += ["--agent", AGENT, "--patient", pid]
    return StdioServerParameters(command=sys.executable, args=args, env=_env())


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.stderr:
        proc.stderr.close()


def _copies(url: str, n: int) -> list[str]:
    """``n`` copies of the SQLite store at ``url``: each contender writes its own (three
    writers on one file would each reload the usage the others moved, on every call)."""
    import shutil

    src = Path(url.removeprefix("sqlite:///"))
    out = []
    for i in range(n):
        dst = src.with_name(f"{src.stem}-{i}{src.suffix}")
        shutil.copyfile(src, dst)
        out.append(f"sqlite:///{dst}")
    return out


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (/proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _child(marker: str) -> int:
    """The pid of this process's child whose command line holds ``marker``."""
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == me and marker in cmd:
            return int(entry.name)
    raise RuntimeError(f"no child process running {marker!r}")


def overhead(
    url: str, pid: str, tokens: tuple[str, str], rounds: int
) -> tuple[dict[str, Sample], dict[str, float]]:
    """Interleaved rounds of the three contenders (a new order each round), timed one call
    each inside the client's event loop, each on its own copy of the store; five warm-up
    rounds first. Also the CPU seconds per call of each path -- this thread's around each
    call, plus the server process's over the timed rounds -- a figure a loaded machine moves
    far less than the wall time (it counts no waiting for a core)."""
    import random

    import anyio
    import httpx
    from mcp import Client

    import memory_core as mc
    from memory_core.access import agent_principal
    from memory_core.embedding import HashingEmbedder

    engine_url, mcp_url, api_url = _copies(url, 3)
    eng = mc.open_engine(engine_url, HashingEmbedder())
    principal = agent_principal(AGENT)
    port = _port()
    api = _serve(api_url, "hashing", tokens[0], port)
    out = {k: Sample() for k in ("mcp", "http", "engine")}
    cpu = dict.fromkeys(out, 0.0)
    try:
        _wait(api, port)
        http = httpx.Client(
            base_url=f"http://127.0.0.1:{port}",
            headers={"Authorization": f"Bearer {tokens[1]}"},
            timeout=30,
        )

        async def run() -> None:
            async with Client(_mcp_params(mcp_url, "hashing", pid)) as client:

                async def by_mcp(q: str) -> None:
                    args = {"patient_id": pid, "question": q}
                    r = await client.call_tool("get_patient_context", args)
                    assert not r.is_error and r.structured_content["section"]

                async def by_http(q: str) -> None:
                    r = http.post(f"/v1/patients/{pid}/context", json={"question": q})
                    assert r.status_code == 200 and r.json()["section"]

                async def by_engine(q: str) -> None:
                    res = eng.build_context(pid, q, record_access=True, agent=principal)
                    assert res.text

                calls = {"mcp": by_mcp, "http": by_http, "engine": by_engine}
                items = list(calls.items())
                order = random.Random(33)
                servers = {"mcp": _child(mcp_url), "http": api.pid}
                for i in range(-5, rounds):
                    if i == 0:
                        start = {k: _cpu_s(p) for k, p in servers.items()}
                    order.shuffle(items)
                    for name, fn in items:
                        c0 = time.thread_time()
                        t0 = time.perf_counter()
                        await fn(query_at(i))
                        if i >= 0:
                            out[name].times.append(time.perf_counter() - t0)
                            cpu[name] += time.thread_time() - c0
                for k, p in servers.items():
                    cpu[k] += _cpu_s(p) - start[k]

        anyio.run(run)
        http.close()
    finally:
        _stop(api)
        eng.store.close()
    return out, {k: v / rounds for k, v in cpu.items()}


def start_mcp(url: str, embedder: str, pid: str) -> tuple[float, float]:
    """Seconds from the client spawning ``mcp`` to the server's first answer (the handshake
    and the tool list) and to the first context section, asked for at once."""
    import anyio
    from mcp import Client

    async def run() -> tuple[float, float]:
        t0 = time.perf_counter()
        async with Client(_mcp_params(url, embedder, pid)) as client:
            await client.list_tools()
            ready = time.perf_counter() - t0
            r = await client.call_tool(
                "get_patient_context", {"patient_id": pid, "question": query_at(0)}
            )
            took = time.perf_counter() - t0
            assert not r.is_error
            return ready, took

    return anyio.run(run)


def start_http(url: str, embedder: str, pid: str, tokens: tuple[str, str]) -> tuple[float, float]:
    """Seconds from starting ``serve`` to its first answer (``/v1/launch``, polling until it
    binds) and to the first context section, asked for at once."""
    import httpx

    port = _port()
    auth = {"Authorization": f"Bearer {tokens[1]}"}
    t0 = time.perf_counter()
    proc = _serve(url, embedder, tokens[0], port)
    try:
        _wait(proc, port)
        assert httpx.get(f"http://127.0.0.1:{port}/v1/launch", headers=auth).status_code == 200
        ready = time.perf_counter() - t0
        r = httpx.post(
            f"http://127.0.0.1:{port}/v1/patients/{pid}/context",
            json={"question": query_at(0)},
            headers=auth,
            timeout=60,
        )
        took = time.perf_counter() - t0
        assert r.status_code == 200
        return ready, took
    finally:
        _stop(proc)


def _demo_store(path: Path) -> tuple[str, str, str]:
    """The seeded demo store with the product's embedder (MiniLM) and its first patient."""
    import memory_core as mc
    from memory_core.seed import seed_demo

    url = f"sqlite:///{path}"
    eng = mc.open_engine(url, "minilm")
    seed_demo(eng)
    eng.store.close()
    return url, "minilm", "NW-1001"


def run(bench: Setup) -> None:
    n = bench.cfg.context_n
    rounds = max(bench.cfg.repeat * 20, 20)
    tmp = Path(tempfile.mkdtemp(prefix="server-", dir=bench.workdir))
    log(f"get_patient_context over MCP and HTTP, {n:,} memories, {rounds} rounds")
    url, pid = _store(tmp / "server.db", n)
    tokens = _tokens(tmp / "tokens.json", pid)
    got, cpu = overhead(url, pid, tokens, rounds)
    base = got["engine"]
    size = f"{n:,} memories (hashing embedder)"
    label = "get_patient_context, warm, recorded"
    bench.res.rows.append(
        Row(
            "server",
            label,
            size,
            "build_context in-process",
            base,
            note=f"the baseline; CPU per call {cpu['engine'] * 1e3:.2f} ms",
        )
    )
    for key, name, note in (
        ("mcp", "over MCP (stdio, SDK client)", "server a subprocess, as a host starts it"),
        ("http", "over the HTTP API (uvicorn, keep-alive)", "loopback"),
    ):
        above = got[key].median - base.median
        bench.res.rows.append(
            Row(
                f"server-{key}",
                label,
                size,
                name,
                got[key],
                target=OVERHEAD,
                passed=OVERHEAD.met(value=above),
                note=f"{above * 1e3:+.2f} ms above build_context at p50; CPU per call "
                f"{cpu[key] * 1e3:.2f} ms (client and server; build_context "
                f"{cpu['engine'] * 1e3:.2f} ms); {note}",
            )
        )
    if bench.cfg.name == "tiny":
        where, (surl, emb, spid) = "its small store, hashing embedder", (url, "hashing", pid)
    else:
        log("seeding the demo store for the servers' start")
        where, (surl, emb, spid) = "the seeded demo store, MiniLM", _demo_store(tmp / "demo.db")
    stokens = _tokens(tmp / "start-tokens.json", spid)
    for key, name, fn in (
        ("server-start-mcp", "mcp over stdio", lambda: start_mcp(surl, emb, spid)),
        ("server-start-http", "serve (HTTP API)", lambda: start_http(surl, emb, spid, stokens)),
    ):
        got_start = [fn() for _ in range(bench.cfg.slow_repeat)]
        ready = Sample([r for r, _ in got_start])
        first = Sample([f for _, f in got_start])
        bench.res.rows.append(
            Row(
                key,
                "server start to the first context section (asked for at once)",
                where,
                name,
                first,
                target=START,
                passed=START.met(first),
                note=f"ready (first answer: handshake, tools or /v1/launch) after "
                f"{ready.median:.2f} s; a fresh interpreter each: imports, store, embedder, "
                "token encoding, lexicon, first section",
            )
        )
    log(json.dumps({k: round(v.median * 1e3, 3) for k, v in got.items()}) + " ms p50")
    log(json.dumps({k: round(v * 1e3, 3) for k, v in cpu.items()}) + " ms CPU per call")
