"""Whether exact elimination fits, decided on the problem's structure alone.

`factor._eliminate` picks, at each step, the variable whose elimination table is smallest (the
product of its and its neighbours' domain sizes; ties to the lowest variable) and gives up when
that table exceeds `max_table`. The order depends only on which variables share a factor, never on
the tables' values, so the same greedy walk over neighbour sets answers "would it give up?" —
without building a table. On wide problems (the L=24 training step's per-edge twin, IOPDDL N's
reduced problem) the numeric attempt spent 2-6 s before giving up; this walk takes a fraction.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence, Sized


def elimination_fits(domains: Sequence[Sized], scopes: Iterable[Sequence[int]], max_table: int) -> bool:
    """True when greedy min-table elimination of variables with `domains` (their sizes count),
    linked by factors over `scopes`, never needs a table larger than `max_table` (as
    `factor._eliminate`)."""
    sizes = [len(d) for d in domains]
    neighbours: list[set[int]] = [set() for _ in sizes]
    for scope in scopes:
        for w in scope:
            neighbours[w].update(r for r in scope if r != w)

    def cost(v: int) -> int:
        n = sizes[v]
        for w in neighbours[v]:
            n *= sizes[w]
        return n

    heap = [(cost(v), v) for v in range(len(sizes))]
    heapq.heapify(heap)
    done = [False] * len(sizes)
    while heap:
        c, x = heapq.heappop(heap)
        if done[x] or c != cost(x):
            continue  # stale entry
        if c > max_table:
            return False
        done[x] = True
        rest = neighbours[x]
        for w in rest:
            neighbours[w].discard(x)
            neighbours[w].update(r for r in rest if r != w)
        for w in rest:
            heapq.heappush(heap, (cost(w), w))
    return True
