"""The one timing helper of the benchmark scripts (this folder is on sys.path when they run)."""

from __future__ import annotations

import time


def best_of(fn, repeats: int):
    """(the shortest wall time of ``repeats`` calls of ``fn()``, the last call's result)."""
    times, out = [], None
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out
