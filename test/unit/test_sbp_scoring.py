"""OneFlow's greedy ND scan: the clear-minimum shortcut of `_greedy_scan` gives the answer of the
scan written candidate by candidate (`_greedy_scan_exact`), near-ties and huge costs included."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sbpc.passes.infer_sbp.oneflow_costs import FLT_MAX, VALID_MAX_COPY_COST
from sbpc.passes.infer_sbp.scoring import _greedy_scan, _greedy_scan_exact


class _Mismatches:
    """A candidate table stand-in: candidate j mismatches `counts[j]` inputs."""

    def __init__(self, counts: list[int]):
        self.counts = counts

    def mismatches(self, j: int, have: tuple[int, ...]) -> int:
        return self.counts[j]


_BASE = st.sampled_from([0.0, 1.0, 7.5, 1e6, 3.0e9, VALID_MAX_COPY_COST, FLT_MAX, 2 * FLT_MAX])
_NUDGE = st.sampled_from([1.0, 1.00000005, 1.0000001, 1.0000002, 1.0000009, 1.000001, 1.0000011, 0.9999999,
                          0.99999995, 0.999999, 1.5, 2.0])


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(_BASE, _NUDGE, st.integers(0, 3)), min_size=1, max_size=12))
def test_clear_minimum_shortcut_matches_the_scan(items: list[tuple[float, float, int]]) -> None:
    costs = [base * nudge for base, nudge, _ in items]
    table = _Mismatches([count for _, _, count in items])
    try:
        expected: tuple[int, float] | None = _greedy_scan_exact(costs, table, ())  # type: ignore[arg-type]
    except ValueError:
        expected = None
    try:
        got: tuple[int, float] | None = _greedy_scan(costs, table, ())  # type: ignore[arg-type]
    except ValueError:
        got = None
    assert got == expected


def test_near_tie_goes_to_fewer_mismatches() -> None:
    # 1.00000005 is within the scan's 1e-7 tolerance of 1.0: no clear minimum, the scan decides.
    table = _Mismatches([2, 0])
    assert _greedy_scan([1.0, 1.00000005], table, ()) == (1, 1.00000005)  # type: ignore[arg-type]
    assert _greedy_scan([1.0, 1.5], table, ()) == (0, 1.0)  # type: ignore[arg-type]


def test_a_cost_just_above_the_tolerance_is_no_clear_winner() -> None:
    # 1.0000001000000003 exceeds 1.0 * 1.0000001, yet times 0.9999999 it is not above 1.0: the
    # scan keeps it (the later 1.0 is only a near-tie with more mismatches).
    just_above = 1.0000001000000003
    table = _Mismatches([0, 1])
    assert _greedy_scan_exact([just_above, 1.0], table, ()) == (0, just_above)  # type: ignore[arg-type]
    assert _greedy_scan([just_above, 1.0], table, ()) == (0, just_above)  # type: ignore[arg-type]
