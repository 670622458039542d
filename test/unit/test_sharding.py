"""dialects/sharding.py is the one home of the balanced split: every user's pieces are its pieces."""

from __future__ import annotations

import itertools
import math

from hypothesis import given
from hypothesis import strategies as st

from sbpc.dialects.sbp import BROADCAST, SplitAttr, nd_sbp
from sbpc.dialects.sharding import balanced_range, local_shape, max_local_shape
from sbpc.passes.cost.comm import local_elements
from sbpc.passes.cost.steps import rank_ranges


def test_balanced_range_gives_the_first_ranks_the_remainder():
    assert [balanced_range(10, 4, i) for i in range(4)] == [(0, 3), (3, 6), (6, 8), (8, 10)]
    assert [balanced_range(2, 3, i) for i in range(3)] == [(0, 1), (1, 2), (2, 2)]


@given(
    st.lists(st.integers(0, 9), min_size=1, max_size=3),
    st.lists(st.integers(1, 4), min_size=1, max_size=3),
    st.data(),
)
def test_largest_shard_and_rank_ranges_agree_with_local_shape(shape, hierarchy, data):
    entries = [data.draw(st.sampled_from([BROADCAST, *(SplitAttr(a) for a in range(len(shape)))])) for _ in hierarchy]
    sbp = nd_sbp(*entries)
    coords = list(itertools.product(*(range(h) for h in hierarchy)))  # flat rank order
    shapes = [local_shape(shape, sbp, hierarchy, c) for c in coords]
    largest = tuple(max(s[a] for s in shapes) for a in range(len(shape)))
    assert max_local_shape(shape, sbp, hierarchy) == shapes[0] == largest
    assert local_elements(shape, tuple(sbp), hierarchy) == math.prod(shapes[0])
    ranges = rank_ranges(shape, tuple(sbp), hierarchy)
    assert [tuple(hi - lo for lo, hi in r) for r in ranges] == shapes
    replicas = math.prod(h for h, e in zip(hierarchy, entries, strict=True) if e == BROADCAST)
    assert sum(math.prod(s) for s in shapes) == math.prod(shape) * replicas  # the shards tile the tensor
