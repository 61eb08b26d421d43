"""The clinician questions of the Northwind demo's replayed sessions, read from
``memory_core/data/demo_session_questions.json`` (data, not code): per memory type, a
question by the kind of thing a memory is about ("drug", "loinc", "condition", "allergen";
``{name}`` is its name) or by one particular subject ("slot:household": its own question),
else the type's general question (``""``); a type not listed
asks the ``"*"`` question. Read once, when first asked for; checked as it is read (every type
has its general question, every template names nothing but ``{name}``). Standard library
only."""

from __future__ import annotations

import json
from importlib.resources import files

DATA_FILE = "data/demo_session_questions.json"
#: The entry of the types the file does not list.
ANY_TYPE = "*"


def _checked(data: object) -> dict[str, dict[str, str]]:
    if not isinstance(data, dict):
        raise ValueError(f"{DATA_FILE}: an object of memory types expected")
    out: dict[str, dict[str, str]] = {}
    for mtype, asked in data.items():
        if mtype.startswith("_"):  # a note for the reader
            continue
        if not (isinstance(asked, dict) and isinstance(asked.get(""), str) and asked[""]):
            raise ValueError(f'{DATA_FILE}: {mtype!r} needs its general question ("")')
        for kind, text in asked.items():
            # a kind's question names its subject ({name}, nothing else); the general one and
            # one particular subject's own ("slot:household") name none
            named = isinstance(text, str) and "{name}" in text
            rest = text.replace("{name}", "") if isinstance(text, str) else "{"
            if "{" in rest or "}" in rest or named == (kind == "" or ":" in kind):
                raise ValueError(f"{DATA_FILE}: {mtype!r} / {kind!r}: {text!r}")
        out[mtype] = dict(asked)
    if ANY_TYPE not in out:
        raise ValueError(f"{DATA_FILE}: the {ANY_TYPE!r} entry (any other type) is missing")
    return out


_CACHE: list[dict[str, dict[str, str]]] = []


def _loaded() -> dict[str, dict[str, str]]:
    if not _CACHE:
        text = files("memory_core").joinpath(DATA_FILE).read_text("utf-8")
        _CACHE.append(_checked(json.loads(text)))
    return _CACHE[0]


def demo_questions() -> dict[str, dict[str, str]]:
    """memory type -> {kind of subject (or "") -> question template} (a copy)."""
    return {t: dict(asked) for t, asked in _loaded().items()}


def questions_for(memory_type: str) -> dict[str, str]:
    """The question templates of ``memory_type`` (the ``"*"`` entry's for a type not listed)."""
    asked = _loaded()
    return dict(asked.get(memory_type, asked[ANY_TYPE]))
