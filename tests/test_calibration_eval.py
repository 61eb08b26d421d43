"""The evaluation harness (``python -m eval``) on tiny synthetic files shaped like REALTALK and
SituatedQA, with the hashing embedder (the real run uses MiniLM on the public data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval import realtalk, situatedqa
from eval.runner import main


def test_evidence_ids_are_normalised() -> None:
    assert realtalk.parse_evidence(["D5:3."]) == {"D5:3"}
    assert realtalk.parse_evidence(["D12:3-D12:5"]) == {"D12:3", "D12:4", "D12:5"}
    assert realtalk.parse_evidence(["D1:11; D3:18", "D17;39"]) == {"D1:11", "D3:18", "D17:39"}
    assert realtalk.parse_evidence(["D13:45:D20:19", ""]) == {"D13:45", "D20:19"}
    assert realtalk.parse_evidence(["D13:4. D14:4"]) == {"D13:4", "D14:4"}


def _chat() -> dict[str, object]:
    turns = [
        ("Ana", "I adopted a grey cat called Pixel last week"),
        ("Ben", "Nice! I started learning the cello"),
        ("Ana", "Pixel sleeps on my keyboard all day"),
        ("Ben", "My cello teacher lives in Lisbon"),
        ("Ana", ""),  # an image-only turn: skipped
        ("Ben", "I moved to Porto for a new job at a bakery"),
    ]
    session = [
        {"clean_text": text, "speaker": who, "date_time": f"0{i + 1}.01.2024, 10:00:00",
         "img_file": [], "dia_id": f"D1:{i + 1}"}
        for i, (who, text) in enumerate(turns)
    ]  # fmt: skip
    return {
        "name": {"speaker_1": "Ana", "speaker_2": "Ben"},
        "session_1": session,
        "session_1_date_time": "01.01.2024, 10:00:00",
        "qa": [
            {"question": "What is the name of Ana's cat?", "answer": "Pixel",
             "evidence": ["D1:1"], "category": 1},
            {"question": "Which instrument is Ben learning?", "answer": "cello",
             "evidence": ["D1:2; D1:4"], "category": 1},
            {"question": "Where does Ben work now?", "answer": "a bakery in Porto",
             "evidence": ["D1:6"], "category": 2},
            {"question": "Unanswerable?", "answer": "-", "evidence": ["D9:9"], "category": 3},
        ],
    }  # fmt: skip


def _timeline(q: str, prev: str, py: int, cur: str, cy: int) -> dict[str, object]:
    return {
        "question": q,
        "timelines": [
            {"prev_answers": [prev], "prev_start": {"year": py},
             "cur_answers": [cur], "cur_start": {"year": cy}}
        ],
    }  # fmt: skip


@pytest.fixture
def data(tmp_path: Path) -> Path:
    (tmp_path / "realtalk").mkdir()
    (tmp_path / "realtalk" / "Chat_1_Ana_Ben.json").write_text(json.dumps(_chat()))
    rows = [
        _timeline("who is the mayor of springfield", "Joe Quimby", 2001, "Lisa Simpson", 2019),
        _timeline("what is the tallest building in the city", "Old Tower", 1990, "Sky Spire", 2015),
        {"question": "what is two plus two", "timelines": None},
        _timeline("who won the cup", "Team A", 2010, "team a", 2012),  # same answer: left out
    ]
    (tmp_path / "situatedqa").mkdir()
    (tmp_path / "situatedqa" / "temp.dev.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows)
    )
    return tmp_path


def test_realtalk_loading(data: Path) -> None:
    chat = realtalk.load_chat(data / "realtalk" / "Chat_1_Ana_Ben.json")
    assert len(chat.turns) == 5 and chat.skipped_turns == 1
    assert chat.turns[0].text == "Ana: I adopted a grey cat called Pixel last week"
    assert [sorted(q.evidence) for q in chat.questions] == [["D1:1"], ["D1:2", "D1:4"], ["D1:6"]]
    assert chat.unresolved_questions == 1


def test_situatedqa_loading(data: Path) -> None:
    timelines, why = situatedqa.load((data / "situatedqa" / "temp.dev.jsonl").read_text())
    assert [t.question for t in timelines] == [
        "who is the mayor of springfield",
        "what is the tallest building in the city",
    ]
    assert why == {"used": 2, "no timeline": 1, "no usable timeline": 1}


def test_harness_writes_the_report(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "evaluation.md"
    assert main(["--data", str(data), "--out", str(out), "--embedder", "hashing"]) == 0
    text = out.read_text()
    for heading in (
        "## Retrieval: REALTALK",
        "### Relevance designs (dev)",
        "## Updates: SituatedQA temporal (dev split)",
        "### What the current verdicts get wrong (examples)",
        "## Clinical pair set",
        "### test half",
    ):
        assert heading in text
    assert "5 turns stored" in text and "3 questions" in text
    assert "2 timelines" in text
    assert list((data / ".cache").glob("realtalk-01-turns-*.npy"))  # embeddings kept


def test_missing_data_is_reported_not_fatal(tmp_path: Path) -> None:
    out = tmp_path / "evaluation.md"
    rc = main(["--data", str(tmp_path / "none"), "--out", str(out), "--embedder", "hashing",
               "--only", "realtalk", "--only", "situatedqa"])  # fmt: skip
    assert rc == 0
    assert out.read_text().count("Not run:") == 2
