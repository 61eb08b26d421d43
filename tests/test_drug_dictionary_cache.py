"""Data derived from installed packages is kept between processes (issue 33: a server's start to
its first answer; memory_core.kept): the drug dictionary's maps read back as derived from the
package's file; a kept file that is corrupt, of another shape, unwritable or of another package
file is never used; the MeSH members found by the sorted index are those a scan of every entry
finds."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from memory_core import drugs, kept


@pytest.fixture(scope="module")
def source() -> Path:
    spec = importlib.util.find_spec(drugs._PACKAGE)
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent / drugs._FILE


@pytest.fixture(scope="module")
def derived(source: Path) -> drugs._Raw:
    return drugs._derive(source)


def _file(source: Path) -> Path | None:
    return kept.file_for("drugs", source, drugs._version())


def _cached(source: Path) -> object:
    return kept.read(_file(source), drugs._is_raw)


def _keep(source: Path, raw: object) -> None:
    kept.write(_file(source), raw)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMORY_CORE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_cache_folder_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMORY_CORE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert kept.folder() == tmp_path / "xdg" / "memory-core"
    monkeypatch.setenv("MEMORY_CORE_CACHE", str(tmp_path / "mine"))
    assert kept.folder() == tmp_path / "mine"


def test_what_is_kept_reads_back_as_derived(
    folder: Path, source: Path, derived: drugs._Raw
) -> None:
    assert _cached(source) is None  # nothing kept yet
    _keep(source, derived)
    (kept,) = folder.iterdir()
    assert kept.name.startswith("drugs-") and kept.suffix == ".marshal"
    back = _cached(source)
    assert back == derived
    names, trees, medicines = back
    assert names["lipitor"] == "Atorvastatin" and len(names) > 100_000
    assert any(n == "amoxicillin" and tree for n, tree in trees)
    assert "metformin" in medicines


def test_a_second_read_takes_the_kept_maps(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = drugs._read_dictionary()  # derives and keeps
    assert list(folder.iterdir())

    def no(path: Path) -> drugs._Raw:
        raise AssertionError("derived again although kept")

    monkeypatch.setattr(drugs, "_derive", no)
    assert drugs._read_dictionary() == first


def test_a_corrupt_cache_is_not_used_and_is_replaced(
    folder: Path, source: Path, derived: drugs._Raw
) -> None:
    _keep(source, derived)
    (kept,) = folder.iterdir()
    for junk in (b"", b"\x00garbage", kept.read_bytes()[:1000]):
        kept.write_bytes(junk)
        assert _cached(source) is None
    import marshal

    kept.write_bytes(marshal.dumps({"not": "the maps"}))  # well formed, wrong shape
    assert _cached(source) is None
    _keep(source, derived)
    assert _cached(source) == derived
    assert not [p for p in folder.iterdir() if p.suffix == ".tmp"]  # no half-written file left


def test_an_unwritable_cache_costs_only_the_derivation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: Path, derived: drugs._Raw
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("MEMORY_CORE_CACHE", str(blocker / "cache"))
    _keep(source, derived)  # no error
    assert _cached(source) is None


def test_another_package_file_has_another_cache(folder: Path, source: Path, tmp_path: Path) -> None:
    copy = tmp_path / drugs._FILE
    copy.write_bytes(source.read_bytes())
    os.utime(copy, ns=(1_000_000_000, 1_000_000_000))
    assert _file(copy) != _file(source)
    assert _file(tmp_path / "missing.pkl.bz2") is None


def test_mesh_members_are_what_a_scan_of_every_entry_finds() -> None:
    drugs._load()

    def scan(cls: str) -> frozenset[str]:
        roots = drugs._mesh.get(cls, ())
        return frozenset(
            name
            for name, tree in drugs._mesh.items()
            if name != cls and any(t.startswith(r + ".") for t in tree for r in roots)
        )

    wanted = [c.lower() for c in drugs._lex()["classes"]]
    wanted += sorted(drugs._mesh)[::97]  # a spread of every entry, classes or not
    found = 0
    for cls in wanted:
        assert drugs.mesh_members(cls) == scan(cls), cls
        found += bool(scan(cls))
    assert found >= 10
    assert {"amoxicillin", "ampicillin"} <= drugs.mesh_members("penicillins")
