"""A local Cosmos-protocol server for tests: the npm package ``@vercel/cosmosdb-server``
(MIT, in-memory, self-signed TLS) installed into the git-ignored ``.cache/cosmosdb-server/``
and started on a free loopback port.

It speaks enough of the Cosmos DB REST protocol for the Python SDK: databases, containers
(the vector policy is stored and returned as given), items, point reads, parameterised SQL
queries that name the partition key, patch (``incr``/``set``, ``filter_predicate``), etags.
It has no ``VectorDistance``/full-text functions, no DISTINCT, no transactional batch (a batch
is applied one operation at a time) and no TTL expiry.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import ssl
import subprocess
import time
from pathlib import Path

from memory_core.store.cosmos import EMULATOR_KEY

__all__ = ["EMULATOR_KEY", "CosmosServer", "CosmosServerUnavailable", "ensure_installed"]

PACKAGE = "@vercel/cosmosdb-server"
VERSION = "1.0.1"
REPO_ROOT = Path(__file__).resolve().parents[1]
CACHE = REPO_ROOT / ".cache" / "cosmosdb-server"


class CosmosServerUnavailable(RuntimeError):
    """Node/npm missing, the install failed, or the server did not start (the reason)."""


def _installed_cli() -> Path | None:
    pkg = CACHE / "node_modules" / "@vercel" / "cosmosdb-server"
    try:
        version = json.loads((pkg / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None
    cli = pkg / "lib" / "cli.js"
    return cli if version == VERSION and cli.is_file() else None


def ensure_installed(timeout: float = 300.0) -> Path:
    """The server's ``cli.js``, installing ``@vercel/cosmosdb-server@1.0.1`` with npm into
    ``.cache/cosmosdb-server/`` the first time."""
    if shutil.which("node") is None:
        raise CosmosServerUnavailable("node is not installed (the Cosmos tests need Node >= 18)")
    cli = _installed_cli()
    if cli is not None:
        return cli
    npm = shutil.which("npm")
    if npm is None:
        raise CosmosServerUnavailable("npm is not installed (needed for @vercel/cosmosdb-server)")
    CACHE.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run(
            [
                npm,
                "install",
                "--prefix",
                str(CACHE),
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                f"{PACKAGE}@{VERSION}",
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CosmosServerUnavailable(f"npm install {PACKAGE}@{VERSION} failed: {exc}") from exc
    cli = _installed_cli()
    if proc.returncode != 0 or cli is None:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise CosmosServerUnavailable(
            f"npm install {PACKAGE}@{VERSION} failed (exit {proc.returncode}): " + " | ".join(tail)
        )
    return cli


#: Starts the package's HTTPS server with keep-alive on (its CLI answers every request with
#: ``Connection: close``, so each request would pay a TLS handshake and a CA-bundle load in the
#: client: about 30 ms). Same server code, same self-signed certificate.
LAUNCHER = """\
"use strict";
const path = require("path");
const pkg = path.join(__dirname, "node_modules", "@vercel", "cosmosdb-server");
const { createHttpsServer } = require(pkg);
const port = parseInt(process.argv[2], 10);
const server = createHttpsServer({ keepAlive: true });
server.keepAliveTimeout = 60000;
server.listen(port, "127.0.0.1", () => {
  console.log(`Ready to accept HTTPS connections at 127.0.0.1:${port}`);
});
"""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _answers(port: int) -> bool:
    """True once the server completes a TLS handshake and answers an HTTP request."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        with (
            socket.create_connection(("127.0.0.1", port), timeout=2) as raw,
            ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
        ):
            tls.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            return tls.recv(12).startswith(b"HTTP/1.1")
    except OSError:
        return False


class CosmosServer:
    """One running server process; use :meth:`start` and :meth:`stop` (or ``with``)."""

    def __init__(self, proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.proc = proc
        self.port = port
        self.log = log
        self.endpoint = f"https://127.0.0.1:{port}/"
        self.key = EMULATOR_KEY

    def url(self, database: str, container: str, **options: str) -> str:
        """A ``cosmos://`` store URL on this server (client-side vector search by default)."""
        opts = {"vector_search": "client", "verify": "false", **options}
        query = "&".join(f"{k}={v}" for k, v in opts.items())
        return f"cosmos://127.0.0.1:{self.port}/{database}/{container}?{query}"

    @classmethod
    def start(cls, timeout: float = 30.0, port: int | None = None) -> CosmosServer:
        """Install if needed and start the server (what the package's CLI ``cosmosdb-server
        -p PORT --host 127.0.0.1`` does, plus keep-alive) on a free loopback port."""
        ensure_installed()
        node = shutil.which("node")
        assert node is not None
        port = port or _free_port()
        launcher = CACHE / "launch.js"
        if not launcher.is_file() or launcher.read_text() != LAUNCHER:
            launcher.write_text(LAUNCHER)
        log = CACHE / f"server-{port}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [node, str(launcher), str(port)],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=str(CACHE),
                env={**os.environ, "NODE_NO_WARNINGS": "1"},
            )
        server = cls(proc, port, log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                text = log.read_text(errors="replace")[-500:]
                raise CosmosServerUnavailable(
                    f"cosmosdb-server exited with {proc.returncode}: {text}"
                )
            if _answers(port):
                return server
            time.sleep(0.1)
        server.stop()
        raise CosmosServerUnavailable(f"cosmosdb-server did not answer on port {port}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.log.unlink(missing_ok=True)

    def __enter__(self) -> CosmosServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    """``python -m tests.cosmos_server [PORT]``: run a local server in the foreground (for
    ``COSMOS_ENDPOINT=https://127.0.0.1:PORT/ make run``) until interrupted."""
    import signal
    import sys

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)
    server = CosmosServer.start(port=int(sys.argv[1]) if len(sys.argv) > 1 else None)
    print(f"COSMOS_ENDPOINT={server.endpoint}  (Ctrl-C stops it)", flush=True)
    try:
        server.proc.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
