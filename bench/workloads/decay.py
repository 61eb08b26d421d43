"""Current importance of many memories at once: the vectorised decay (``memory_core.decay``)
against the reference's per-memory loop, after checking they agree within 1e-9 on every model."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from memory_core import decay

from .. import reference as ref
from ..harness import measure
from .common import (
    Mismatch,
    Setup,
    Target,
    engine_and_reference,
    log,
)

TARGET = Target("≥ 50× ref; ≤ 100 ms", max_s=0.100, min_speedup=50)


def run(bench: Setup) -> None:
    n = bench.cfg.decay_n
    log(f"current importance of {n:,} memories")
    rng = np.random.default_rng(7)
    now_us = int(bench.now.timestamp() * 1e6)
    created_us = now_us - rng.integers(0, 730 * 86_400 * 10**6, n)
    last_us = created_us + (rng.random(n) * (now_us - created_us)).astype(np.int64)
    importance = rng.choice([2.0, 4.0, 5.0, 6.0, 7.0, 9.0, 10.0], n)
    count = rng.integers(0, 9, n).astype(np.float64)
    pinned = rng.random(n) < 0.02
    short = rng.random(n) < 0.1
    created_iso = np.datetime_as_string(created_us.astype("datetime64[us]"), timezone="UTC")
    last_iso = np.datetime_as_string(last_us.astype("datetime64[us]"), timezone="UTC")
    records = [
        {
            "importance": float(importance[i]),
            "created_at": str(created_iso[i]),
            "last_accessed": str(last_iso[i]),
            "access_count": int(count[i]),
            "pinned": bool(pinned[i]),
            "tier": "short_term" if short[i] else "long_term",
        }
        for i in range(n)
    ]
    inputs = decay.DecayInputs(
        importance=importance,
        created_s=created_us / 1e6,
        last_access_s=last_us / 1e6,
        access_count=count,
        pinned=pinned,
        short_term=short,
    )
    now_s = bench.now.timestamp()
    policy = bench.eng.policy.decay
    # agreement first: the default policy on every memory, the other models on a slice
    got = decay.current_importance(inputs, policy, now_s)
    want = np.array(ref.current_importances(records, bench.params(), now_s))
    if float(np.max(np.abs(got - want))) > 1e-9:
        raise Mismatch("current importance: engine and reference differ by more than 1e-9")
    k = min(n, 20_000)
    part = decay.DecayInputs(
        importance[:k],
        inputs.created_s[:k],
        inputs.last_access_s[:k],
        count[:k],
        pinned[:k],
        short[:k],
    )
    for model in ("linear", "strength"):
        pol = replace(policy, model=model)
        p = ref.DecayParams.from_policy(pol)
        a = decay.current_importance(part, pol, now_s)
        b = np.array(ref.current_importances(records[:k], p, now_s))
        if float(np.max(np.abs(a - b))) > 1e-9:
            raise Mismatch(f"current importance ({model}): engine and reference differ")
    bench.res.checks.append(
        f"current importance: {n:,} memories (exponential) and {k:,} (linear, strength) "
        "within 1e-9 of the reference"
    )
    eng = measure(lambda: decay.current_importance(inputs, policy, now_s), bench.cfg.repeat)
    params = bench.params()
    refs = measure(lambda: ref.current_importances(records, params, now_s), bench.cfg.slow_repeat)
    key = "decay"
    label = "current importance (vectorised)"
    size = f"{n:,} memories"
    bench.res.rows += engine_and_reference(
        key, label, size, eng, refs, TARGET, TARGET.met(eng, refs)
    )
    bench.res.profile_calls[key] = lambda: decay.current_importance(inputs, policy, now_s)
