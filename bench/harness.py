"""Timing, thread settings, machine facts and the network guard shared by the benchmarks."""

from __future__ import annotations

import gc
import ipaddress
import os
import platform
import random
import socket
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# --- no network beyond loopback --------------------------------------------------------------

_GUARDED = False


def _loopback(host: Any) -> bool:
    if host in (None, "", "localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def guard_network() -> None:
    """Make every TCP/UDP connection and name lookup beyond loopback fail in this process
    (peers that phone home -- telemetry, model hubs, an LLM -- raise instead of leaving)."""
    global _GUARDED
    if _GUARDED:
        return
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address[0]):
            raise OSError(f"bench: blocked a connection to {address!r} (loopback only)")

    def connect(self: socket.socket, address: Any) -> None:
        check(self, address)
        real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        check(self, address)
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _loopback(host):
            raise socket.gaierror(f"bench: blocked a name lookup of {host!r} (loopback only)")
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo
    _GUARDED = True


# --- threads ---------------------------------------------------------------------------------


def limit_threads(blas: int = 1, ort: int = 1) -> dict[str, Any]:
    """One BLAS thread (threadpoolctl, when installed) and ``ort`` onnxruntime intra-op
    threads (``MEMORY_CORE_ORT_THREADS``, read when an embedder is built); returns what is in
    force, for the report. On two cores numpy's OpenBLAS threads and onnxruntime's compete for
    the same cores, so both are set deliberately."""
    from memory_core.embedding.minilm import default_batch_threads

    os.environ["MEMORY_CORE_ORT_THREADS"] = str(ort)
    info: dict[str, Any] = {"MEMORY_CORE_ORT_THREADS": ort, "blas_requested": blas}
    info["MEMORY_CORE_ORT_BATCH_THREADS"] = os.environ.get(
        "MEMORY_CORE_ORT_BATCH_THREADS", f"(unset: default {default_batch_threads()})"
    )
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        info[var] = os.environ.get(var, "(unset)")
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:
        info["blas"] = "threadpoolctl not installed: BLAS threads left at the environment's setting"
        return info
    threadpool_limits(limits=blas, user_api="blas")
    pools = []
    for p in threadpool_info():
        pools.append(
            f"{p.get('internal_api')} {p.get('version') or ''} "
            f"({p.get('architecture') or p.get('user_api')}): {p.get('num_threads')} thread(s)"
        )
    info["blas"] = "; ".join(pools) or "no BLAS/OpenMP pool loaded"
    return info


def threadpools() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed"
    return "; ".join(
        f"{p.get('internal_api')} {p.get('version') or ''}: {p.get('num_threads')} thread(s)"
        for p in threadpool_info()
    )


# --- the machine -----------------------------------------------------------------------------


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_info() -> dict[str, str]:
    import numpy as np

    try:
        import onnxruntime as ort

        ort_version = ort.__version__
    except ImportError:  # pragma: no cover - pinned dependency
        ort_version = "not installed"
    mem = ""
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            kb = int(fh.readline().split()[1])
            mem = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return {
        "cores": str(os.cpu_count()),
        "cpu": cpu_model(),
        "memory": mem,
        "os": f"{platform.system()} {platform.release()}",
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "onnxruntime": ort_version,
    }


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "n/a"


# --- timing ----------------------------------------------------------------------------------


@dataclass
class Sample:
    """Repeated timings of one operation, in seconds per operation."""

    times: list[float] = field(default_factory=list)
    per: int = 1  # operations per timed call (rates divide by this)

    @property
    def n(self) -> int:
        return len(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def lo(self) -> float:
        return min(self.times)

    @property
    def hi(self) -> float:
        return max(self.times)

    def quartiles(self) -> tuple[float, float]:
        if len(self.times) < 4:
            return self.lo, self.hi
        q = statistics.quantiles(self.times, n=4)
        return q[0], q[2]


def measure(
    fn: Callable[[], Any],
    repeat: int,
    warmup: int = 1,
    setup: Callable[[], Any] | None = None,
    per: int = 1,
) -> Sample:
    """Run ``fn`` ``warmup`` times untimed, then ``repeat`` times timed (``setup`` runs before
    each call, untimed). Each time is divided by ``per`` (operations per call)."""
    for _ in range(warmup):
        if setup is not None:
            setup()
        fn()
    gc.collect()
    out = Sample(per=per)
    for _ in range(repeat):
        if setup is not None:
            setup()
        t0 = time.perf_counter()
        fn()
        out.times.append((time.perf_counter() - t0) / per)
    return out


def interleaved(
    contenders: dict[str, Callable[[int], Any]], repeat: int, warmup: int = 1
) -> dict[str, Sample]:
    """Time several contenders in rounds (call ``i`` of each, then ``i + 1``...), so a noisy
    moment on a shared machine hits them all alike. Each round runs them in a new order (a
    seeded shuffle: the same orders on every run), so each one follows each other about
    equally often and none always runs on the caches one heavy contender left cold (or
    warm), or next to one contender's leftover threads."""
    out = {k: Sample() for k in contenders}
    items = list(contenders.items())
    order = random.Random(20261130)
    for i in range(warmup):
        for fn in contenders.values():
            fn(-1 - i)
    gc.collect()
    for i in range(repeat):
        order.shuffle(items)
        for name, fn in items:
            t0 = time.perf_counter()
            fn(i)
            out[name].times.append(time.perf_counter() - t0)
    return out


# --- a sampling profiler for other threads (AppTest runs page scripts in its own thread) -------


def sample_threads(fn: Callable[[], Any], interval: float = 0.002, top: int = 30) -> str:
    """Run ``fn`` while sampling the stacks of every other thread that runs project code
    (``memory_core/``, ``views/``, ``app.py``); returns the functions seen most often
    (inclusive: anywhere on the stack; self: the frame executing)."""
    import threading
    from collections import Counter

    me = threading.get_ident()
    inclusive: Counter[str] = Counter()
    leaf: Counter[str] = Counter()
    count = [0]
    stop = threading.Event()

    def where(frame: Any) -> str:
        code = frame.f_code
        path = code.co_filename
        for marker in ("/memory_core/", "/views/", "/site-packages/"):
            if marker in path:
                path = path.split(marker, 1)[1]
                break
        return f"{code.co_name}  {path}:{code.co_firstlineno}"

    def sampler() -> None:
        sampler_id = threading.get_ident()
        while not stop.is_set():
            for tid, frame in sys._current_frames().items():
                if tid in (me, sampler_id):
                    continue
                stack = []
                f = frame
                while f is not None:
                    stack.append(f)
                    f = f.f_back
                if not any(
                    "/views/" in x.f_code.co_filename or x.f_code.co_filename.endswith("app.py")
                    for x in stack
                ):
                    continue
                count[0] += 1
                leaf[where(stack[0])] += 1
                for name in {where(x) for x in stack}:
                    inclusive[name] += 1
            time.sleep(interval)

    th = threading.Thread(target=sampler, daemon=True)
    th.start()
    t0 = time.perf_counter()
    try:
        fn()
    finally:
        stop.set()
        th.join()
    total = max(count[0], 1)
    lines = [
        f"{count[0]} samples of the script thread over {time.perf_counter() - t0:.2f} s "
        f"(every {interval * 1e3:.0f} ms)",
        "inclusive (on the stack):",
    ]
    lines += [f"  {100 * c / total:5.1f}%  {name}" for name, c in inclusive.most_common(top)]
    lines.append("self (executing):")
    lines += [f"  {100 * c / total:5.1f}%  {name}" for name, c in leaf.most_common(12)]
    return "\n".join(lines)


# --- which engine was measured -----------------------------------------------------------------


def source_state(repo: Any) -> dict[str, Any]:
    """The commit, whether the measured code (memory_core/, views/, app.py) has uncommitted
    changes, and a digest of that code: recorded at the start and the end of a run, so a
    report says which engine it measured and warns when the code changed during the run."""
    import hashlib
    import subprocess
    from pathlib import Path

    root = Path(repo)
    files = sorted([*root.glob("memory_core/**/*.py"), *root.glob("views/*.py"), root / "app.py"])
    digest = hashlib.sha256()
    for f in files:
        if f.is_file():
            digest.update(str(f.relative_to(root)).encode())
            digest.update(f.read_bytes())

    def git(*args: str) -> str:
        try:
            out = subprocess.run(
                ["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return ""
        return out.stdout.strip()

    return {
        "commit": git("rev-parse", "--short", "HEAD") or "unknown",
        "dirty": bool(git("status", "--porcelain", "--", "memory_core", "views", "app.py")),
        "digest": digest.hexdigest()[:12],
    }
