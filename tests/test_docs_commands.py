"""Every command the README and docs/*.md show, checked as written (issue 35, items 5 and 6).

A doctest-style check: each ``python -m memory_core ...`` and ``make ...`` command in a shell
code block or an inline code span is parsed by the CLI's own parser (``[optional]`` parts both
with and without them; ``a | b`` alternatives each on their own), and every file it names must
exist in the repository (or be written by a command before it on the same page); each ``make``
command must be one make accepts (``make -n``). What the README says about a default must be
the default."""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from memory_core.cli import build_parser
from memory_core.policy import DecayPolicy

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CLI = re.compile(r"^(?:\.venv/bin/)?python3? -m memory_core\b")
#: placeholders the docs write in capitals, with a value of the right kind
PLACEHOLDERS = {"PORT": "8765", "STRENGTH": "0.1"}


@dataclass(frozen=True)
class Command:
    doc: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.doc}:{self.line}: {self.text}"


def _shell_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of the shell code blocks, and the inline code spans that are a
    command (a span may wrap onto the next line)."""
    out: list[tuple[int, str]] = []
    fence = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
    for m in fence.finditer(text):
        if m.group(1) not in ("", "bash", "sh", "shell", "console"):
            continue
        first = text[: m.start(2)].count("\n") + 1
        for k, line in enumerate(m.group(2).splitlines()):
            out.append((first + k, line))
    # inline spans outside the fenced blocks (blanked, keeping the line count)
    prose = fence.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    for m in re.finditer(r"`([^`]+)`", prose):
        span = " ".join(m.group(1).split())
        if CLI.match(span) or re.match(r"^make( |$)", span):
            out.append((prose[: m.start()].count("\n") + 1, span))
    return out


def _commands() -> list[Command]:
    found: list[Command] = []
    for path in DOCS:
        for n, raw in _shell_lines(path.read_text(encoding="utf-8")):
            line = raw.strip().removeprefix("$ ")
            line = re.split(r"\s+#\s", " " + line, maxsplit=1)[0].strip()  # a trailing comment
            if not line:
                continue
            prefix = ""
            for part in re.split(r"\s+\|\s+", line):
                part = part.strip()
                if CLI.match(part):
                    prefix = CLI.match(part).group(0)  # type: ignore[union-attr]
                elif prefix and not part.startswith(("make", "python", ".venv", "export")):
                    part = f"{prefix} {part}"  # "export ... | import dump.jsonl"
                if CLI.match(part) or re.match(r"^make( |$)", part):
                    found.append(Command(path.name, n, part))
    return found


COMMANDS = _commands()


def _variants(text: str) -> list[str]:
    """The command with every [optional] part, and without any."""
    inner = re.sub(r"\[([^\[\]]*)\]", r"\1", text)
    while inner != (inner := re.sub(r"\[([^\[\]]*)\]", r"\1", inner)):
        pass
    outer = text
    while outer != (outer := re.sub(r"\s*\[[^\[\]]*\]", "", outer)):
        pass
    return list(dict.fromkeys([inner, outer]))


def _argv(variant: str) -> list[str]:
    words = shlex.split(variant)
    words = words[len(CLI.match(variant).group(0).split()) :]  # type: ignore[union-attr]
    return [PLACEHOLDERS.get(w, w) for w in words if w not in ("...", "…")]


def _subcommands(parser: argparse.ArgumentParser) -> set[str]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return set(sub.choices)


def test_the_docs_show_commands() -> None:
    cli = [c for c in COMMANDS if CLI.match(c.text)]
    make = [c for c in COMMANDS if c.text.startswith("make")]
    assert len(cli) >= 20 and len(make) >= 20, (len(cli), len(make))


@pytest.mark.parametrize("cmd", [c for c in COMMANDS if CLI.match(c.text)], ids=str)
def test_cli_command_parses_and_names_files_that_exist(cmd: Command) -> None:
    parser = build_parser()
    page = (ROOT / ("README.md" if cmd.doc == "README.md" else f"docs/{cmd.doc}")).read_text()
    for variant in _variants(cmd.text):
        if len(_argv(variant)) == 1 and _argv(variant)[0] in _subcommands(parser):
            continue  # prose naming a command ("`python -m memory_core extract` reads ...")
        try:
            args = parser.parse_args(_argv(variant))
        except SystemExit as exc:  # argparse's own refusal
            pytest.fail(f"{cmd}: `{variant}` does not parse (exit {exc.code})")
        named = []
        for attr in ("transcript", "file"):
            if isinstance(getattr(args, attr, None), str):
                named.append(getattr(args, attr))
        if args.command == "import-fhir":
            named.extend(args.bundle)
        for f in named:
            if f.rstrip("/").isupper():  # a placeholder (FILE, EXPORT/): the reader's own
                continue
            written = re.search(rf"--out {re.escape(f)}\b", page)  # exported earlier on the page
            assert (ROOT / f).exists() or written, f"{cmd}: names {f}, which does not exist"


@pytest.mark.parametrize("cmd", [c for c in COMMANDS if c.text.startswith("make")], ids=str)
def test_make_command_is_one_make_accepts(cmd: Command) -> None:
    words = shlex.split(cmd.text)[1:]
    proc = subprocess.run(
        ["make", "-n", *[PLACEHOLDERS.get(w, w) for w in words]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, f"{cmd}: {proc.stderr.strip()}"


def test_the_readme_says_the_cleanup_default() -> None:
    """`cleanup` without --threshold uses the policy's cleanup threshold; the README's line
    says its value (it read as if 0.2 were the default)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if "memory_core cleanup" in x)
    default = DecayPolicy().cleanup_threshold
    assert f"default {default:g}" in line, line
    assert not re.search(r"\[--threshold [0-9.]+\]", line), line


def test_the_readme_documents_the_port_and_node() -> None:
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split()).lower()
    assert "make run port=" in text
    assert "node" in text and "npm" in text


def test_pytest_q_prints_no_evaluation_blocks() -> None:
    """The evaluation tests' tallies go through the ``eval_report`` fixture (conftest.py): on
    the terminal only with ``--eval-report``, never among `pytest -q`'s dots."""
    loud = [
        p.name
        for p in sorted((ROOT / "tests").glob("test_*.py"))
        if p.name != "test_docs_commands.py" and "capsys.disabled()" in p.read_text("utf-8")
    ]
    assert loud == []
