"""Data derived from installed packages -- the drug dictionary's maps, a token encoding's ranks --
kept between processes in the user's cache folder, so that a process (a server's start, a CLI
command) reads it in about a tenth of a second instead of deriving it again (docs/agent.md,
"Speed").

A kept file is marshal (plain dicts, lists, tuples, strings, bytes, numbers: nothing it holds
runs), named by what it was derived from -- the source file's path, size and modification time,
the package's version and this module's :data:`FORMAT` -- so a reinstalled or upgraded package
is derived again. Any failure to read or write it only means deriving again: a corrupt file, one
of another shape (``check``), an unwritable folder. A file is written whole or not at all."""

from __future__ import annotations

import hashlib
import logging
import marshal
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

log = logging.getLogger(__name__)

_T = TypeVar("_T")

#: Bumped when what a derivation returns changes shape: every kept file is then derived again.
FORMAT = 1


def folder() -> Path:
    """Where derived data is kept: ``MEMORY_CORE_CACHE``, else ``$XDG_CACHE_HOME/memory-core``,
    else ``~/.cache/memory-core``."""
    given = os.environ.get("MEMORY_CORE_CACHE")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "memory-core"


def file_for(name: str, source: Path, version: str) -> Path | None:
    """The kept file of ``name`` derived from ``source`` (of a package at ``version``); None
    when the source cannot be read (nothing is then kept)."""
    try:
        st = source.stat()
    except OSError:
        return None
    ident = f"{FORMAT}|{name}|{source}|{st.st_size}|{st.st_mtime_ns}|{version}"
    return folder() / f"{name}-{hashlib.sha256(ident.encode()).hexdigest()[:20]}.marshal"


def read(where: Path | None, check: Callable[[Any], bool]) -> Any | None:
    """What ``where`` holds when it can be read and ``check`` accepts it, else None."""
    if where is None:
        return None
    try:
        got = marshal.loads(where.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return got if check(got) else None


def write(where: Path | None, value: Any) -> None:
    """Keep ``value`` at ``where`` (through a temporary file in the same folder, replaced at
    once: a reader never sees half a file); a failure is logged and otherwise ignored."""
    if where is None:
        return
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=where.parent, prefix=f".{where.stem}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(marshal.dumps(value))
            os.replace(tmp, where)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except (OSError, ValueError):
        log.debug("could not keep %s", where, exc_info=True)


def kept(
    name: str, source: Path, version: str, derive: Callable[[], _T], check: Callable[[Any], bool]
) -> _T:
    """``derive()``, read from the kept file when there is one that ``check`` accepts, else
    derived and kept."""
    where = file_for(name, source, version)
    got = read(where, check)
    if got is not None:
        return cast(_T, got)
    value = derive()
    write(where, value)
    return value
