"""`--import-shard` against MLIR 22's own shard tests (bench/upstream_shard.py, issue 22 item 3):
the split into 56 functions, a few functions compared with `mlir-opt-22 --sharding-propagation` value
by value (default run), and the whole table (exhaustive: ~15 s of CPU): at least 40 import, none with an
internal error, every imported one agreeing or differing with both plans passing `sbp-run --check`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import upstream_shard as bench  # noqa: E402

needs_mlir = pytest.mark.skipif(bench.MLIR_OPT is None, reason="mlir-opt-22 absent")
FUNCTIONS = {"Arith__shard-partition.mlir": 1, "Linalg__shard-partition.mlir": 4,
             "Linalg__sharding-propagation.mlir": 1, "Shard__backward-sharding-propagation.mlir": 1,
             "Shard__forward-backward-sharding-propagation.mlir": 1, "Shard__forward-sharding-propagation.mlir": 1,
             "Shard__partition.mlir": 16, "Shard__resharding-partition.mlir": 11,
             "Shard__sharding-propagation-failed.mlir": 2, "Shard__sharding-propagation.mlir": 14,
             "Tensor__shard-partition.mlir": 4}


def _piece(name: str) -> bench.Piece:
    (found,) = [p for p in bench.all_pieces() if p.name == name]
    return found


def test_the_tests_split_into_56_functions() -> None:
    """`// -----` splits only a file whose RUN line has --split-input-file (Linalg__shard-partition);
    in sharding-propagation-failed it is a comment, and its second function uses the first chunk's
    grid; every function is found, also in `module {...}` and after `attributes {...}`."""
    pieces = bench.all_pieces()
    found: dict[str, int] = {}
    for p in pieces:
        found[p.file] = found.get(p.file, 0) + 1
    assert found == FUNCTIONS and len(pieces) == 56
    assert len({p.name for p in pieces}) == 56 - 3  # @test_forward in three files, @move_split_axis in two
    assert [p.name for p in pieces if p.expects_error] == ["multi_block_function", "matmul_shard_broadcast_dimension"]
    broadcast = _piece("matmul_shard_broadcast_dimension")
    assert "shard.grid @grid_2(shape = 2)" in broadcast.text


@needs_mlir
@pytest.mark.parametrize(("name", "status"), [
    ("matmul_on_use_shard_m_and_k", "differ-valid"),  # sbpc keeps the k-split's partial sum, MLIR replicates it
    ("element_wise_on_use", "agree"),  # an argument read only through annotate_for_users has that SBP
    ("matmul_1d_grid_static_tensors_reduction_iterator_sharding", "agree"),  # i8, into an argument
    ("move_split_axis_dynamic_grid", "agree"),  # a `?` grid sized as --grid does
    ("test_reduce_1d", "agree"),  # linalg.reduce into an annotated tensor.empty
    ("ew_chain_with_halo", "refused"),
])
def test_functions_compare(name: str, status: str, tmp_path: Path) -> None:
    outcome = bench.compare(_piece(name), tmp_path)
    assert outcome.status == status, outcome
    if status == "differ-valid":
        assert outcome.values == [("arg1", "#sbp.nd<[B, S(1)]>", "#sbp.nd<[B, B]>"),  # MLIR propagates onto it
                                  ("op0.0 tosa.matmul", "#sbp.nd<[S(1), B]>", "#sbp.nd<[S(1), P]>")]
        assert not outcome.free_agree  # with --free-args rule=global the argument agrees, the partial not
    if status == "refused":
        assert bench._reason(outcome.reason) == "halo sizes"


@needs_mlir
@pytest.mark.exhaustive
def test_upstream_table(tmp_path: Path) -> None:
    """The README's table: 40 of 56 import (31 agree, 8 differ with both plans valid, 1 fails to plan
    as its test expects; 35 agree when imported with --free-args and planned by rule=global, every
    such plan passing --check too); the 16 refusals are located errors with the reasons listed."""
    outcomes = [bench.compare(p, tmp_path) for p in bench.all_pieces()]
    assert not [o for o in outcomes if "INTERNAL" in o.reason or "internal error" in o.reason]
    assert not [o for o in outcomes if o.status in ("invalid", "mlir-fails")], outcomes
    c = bench.counts(outcomes)
    assert (c["imported"], c["agree"], c["differ-valid"], c["expected-error"], c["refused"]) == (40, 31, 8, 1, 16)
    assert c["free-agree"] == 35
    reasons = sorted(bench._reason(o.reason) for o in outcomes if o.status == "refused")
    assert reasons.count("halo sizes") == 3 and reasons.count("dynamic dims") == 4
    assert reasons.count("non-balanced offsets") == 1
