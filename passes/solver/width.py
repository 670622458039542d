"""The order in which `factor._eliminate` removes variables, decided on the structure alone.

Greedy min-table: at each step the variable whose elimination table is smallest (the product of
its and its neighbours' domain sizes). The order depends only on which variables share a factor,
never on the tables' values, so it is found by a walk over neighbour sets before any table is
built — and where some table would exceed the limit, elimination gives up without having built
one (on wide problems, the L=24 training step's per-edge twin or IOPDDL N's reduced problem, the
numeric attempt spent 2-6 s before giving up).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence, Sized


def elimination_order(domains: Sequence[Sized], scopes: Iterable[Sequence[int]], max_table: int) -> list[int] | None:
    """The greedy min-table elimination order of variables with `domains` (their sizes count)
    linked by factors over `scopes`: each step the variable whose table (its and its neighbours'
    sizes multiplied) is smallest, ties to the lowest; None once that table exceeds `max_table`."""
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
    order: list[int] = []
    while heap:
        c, x = heapq.heappop(heap)
        if done[x] or c != cost(x):
            continue  # stale entry
        if c > max_table:
            return None
        done[x] = True
        order.append(x)
        rest = neighbours[x]
        for w in rest:
            neighbours[w].discard(x)
            neighbours[w].update(r for r in rest if r != w)
        for w in rest:
            heapq.heappush(heap, (cost(w), w))
    return order
