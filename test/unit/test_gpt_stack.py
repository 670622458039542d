"""Issue 13's GPT-stack acceptance with Megatron-annotated weights (bench/gen_gpt.py): the
communication of `rule=cost` against the Megatron volume (two ring all-reduces of the local
b/d·s·h activation over the 4 tensor-parallel ranks per block), and every plan executed and checked
on the simulator and, for one block, on torch.distributed.

Measured at this commit (bytes over all ranks; Megatron = 3,145,728 per block):

| L | rule=cost (report = executed) | rule=oneflow (report = executed) |
|---|---:|---:|
| 1 | 3,145,728 | 8,060,928 |
| 2 | 6,291,456 | 20,840,448 |
| 4 | 12,582,912 | 46,399,488 |

The executed plan of `rule=cost` is exactly Megatron's volume (one reduce-scatter + all-gather pair
per all-reduce). The report's total is what runs: one boxing per (value, target SBP), as
materialize-boxing inserts them, plus the final `sbp.to_global`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import sbpc
from bench.gen_gpt import GptDims, gpt_inputs, gpt_stack, megatron_bytes, save_inputs
from sbpc.tools.sbp_run import run_captured

PIPELINE = "infer-sbp{{rule={rule}}},materialize-boxing,lower-boxing,spmdize"


def report_bytes(layers: int, rule: str) -> float:
    program = sbpc.parse(gpt_stack(layers), f"gpt{layers}.mlir")
    return sbpc.report(program, rule)["totals"][rule]["bytes_sent_all_ranks"]


def test_megatron_volume_for_these_dims() -> None:
    local = 8 // 2 * 32 * 256 * 4  # b/d·s·h f32 bytes
    per_all_reduce = 2 * 3 * local // 4 * 8  # ring over t=4: 2(t-1)/t per rank, 8 ranks
    assert megatron_bytes(1) == 2 * per_all_reduce == 3_145_728
    assert megatron_bytes(4) == 4 * megatron_bytes(1)
    # wave2.md §4's figure for examples/transformer_block.mlir (b=8, s=128, h=1024, f16).
    assert megatron_bytes(1, GptDims(seq=128, hidden=1024, heads=16, elt="f16")) == 25_165_824


def test_the_generated_stack_is_the_stated_program() -> None:
    text = gpt_stack(2)
    module = sbpc.parse(text, "gpt2.mlir").module
    names = [op.name for op in module.walk()]
    assert names.count("sbp.layer_norm") == 4 and names.count("sbp.gelu") == 2
    assert names.count("sbp.matmul") == 2 * 8 and names.count("sbp.to_global") == 1
    assert "[B, S(1)]" in text and "[B, S(0)]" in text
    free = gpt_stack(1, weights="free")
    args = sbpc.parse(free, "free.mlir").module.body.block.ops.last.body.block.args  # type: ignore[union-attr]
    assert [a.type.nd_sbp is None for a in args] == [False] + [True] * 10  # only x carries an SBP
    with pytest.raises(ValueError, match="multiple of heads"):
        gpt_stack(1, GptDims(heads=7))


LAYERS = [1, *(pytest.param(n, marks=pytest.mark.exhaustive) for n in (2, 4))]
"""1 layer in the default run; 2 and 4 (~25 s CPU) in the exhaustive pass."""


@pytest.mark.parametrize("layers", LAYERS)
def test_rule_cost_report_is_within_the_megatron_volume(layers: int) -> None:
    assert report_bytes(layers, "cost") == megatron_bytes(layers)


@pytest.mark.parametrize("rule", ["cost", "oneflow"])
def test_report_bytes_are_what_the_simulator_sends(rule: str) -> None:
    program = sbpc.parse(gpt_stack(2), "gpt2.mlir")
    result = sbpc.run(program, gpt_inputs(2), pipeline=PIPELINE.format(rule=rule))
    assert report_bytes(2, rule) == result.bytes_sent


@pytest.mark.parametrize("layers", LAYERS)
@pytest.mark.parametrize("rule", ["cost", "oneflow"])
def test_every_plan_runs_on_the_simulator(layers: int, rule: str) -> None:
    program = sbpc.parse(gpt_stack(layers), f"gpt{layers}.mlir")
    result = sbpc.run(program, gpt_inputs(layers), pipeline=PIPELINE.format(rule=rule))
    assert result.ok, result.mismatches
    assert result.bytes_sent == result.modelled_bytes
    if rule == "cost":  # what runs is Megatron's volume exactly
        assert result.bytes_sent == megatron_bytes(layers)
    else:  # rule=oneflow re-shards weights: more than 2.5x Megatron's volume
        assert result.bytes_sent > 2.5 * megatron_bytes(layers)


@pytest.mark.torch
@pytest.mark.parametrize("rule", ["cost", "oneflow"])
def test_one_block_runs_on_torch(rule: str, tmp_path: Path) -> None:
    path = tmp_path / "gpt1.mlir"
    path.write_text(gpt_stack(1))
    inputs = save_inputs(str(tmp_path / "inputs"), 1)
    code, out = run_captured([str(path), "--backend", "torch", "--check", "--inputs", inputs,
                              "--pipeline", PIPELINE.format(rule=rule)])
    assert code == 0, out
    assert "check: OK" in out


# ---------------------------------------------------------------------------
# rule=global (issue 13's search)
# ---------------------------------------------------------------------------


def global_pipeline(options: str) -> str:
    return f"infer-sbp{{{options}}},materialize-boxing,lower-boxing,spmdize"


@pytest.mark.parametrize("layers", LAYERS)
def test_rule_global_with_megatron_weights_sends_at_most_megatron(layers: int) -> None:
    program = sbpc.parse(gpt_stack(layers), f"gpt{layers}.mlir")
    result = sbpc.run(program, gpt_inputs(layers), pipeline=global_pipeline("rule=global"))
    assert result.ok, result.mismatches
    assert result.bytes_sent <= megatron_bytes(layers)


@pytest.mark.parametrize("layers", LAYERS)
def test_rule_global_with_free_weights_and_mem_beats_megatron_within_the_budget(layers: int) -> None:
    """mem = 1/4 of the weights' bytes + 3 MiB. The issue expected every weight sharded >= 4 ways;
    under SPEC §3.1's model the optimum (proved: gap 0) instead keeps some weights whole and splits
    the batch 8 ways where the budget allows, which fits and costs less than Megatron's plan, so
    that is what is asserted: within the budget, no more modelled time than the Megatron plan, at
    most its bytes, and the plan runs."""
    from bench.bench_gpt_stack import mem_budget
    from sbpc.passes.infer_sbp.global_search.objective import plan_objective

    dims = GptDims()
    mem = mem_budget(layers, dims)
    program = sbpc.parse(gpt_stack(layers, weights="free"), f"gpt{layers}_free.mlir")
    inferred = sbpc.compile(program, f"infer-sbp{{rule=global mem={mem}}}")
    chosen = plan_objective(inferred.module)
    megatron = plan_objective(sbpc.compile(sbpc.parse(gpt_stack(layers), "m.mlir"), "infer-sbp{rule=cost}").module)
    assert chosen.memory_bytes <= mem
    assert chosen.total_s <= megatron.total_s * (1 + 1e-9)
    result = sbpc.run(inferred, gpt_inputs(layers), pipeline="materialize-boxing,lower-boxing,spmdize")
    assert result.ok, result.mismatches
    assert result.bytes_sent <= 1.05 * megatron_bytes(layers)


@pytest.mark.parametrize("layers", LAYERS)
def test_rule_global_with_free_weights_finds_megatron_where_no_weight_fits_whole(layers: int) -> None:
    """mem = what Megatron's own layout needs (1/4 of the weights + its activations): every weight
    matrix ends sharded >= 4 ways, the plan fits, is proved optimal, sends at most 1.05x Megatron's
    volume and runs."""
    from bench.bench_gpt_stack import megatron_memory, weights_sharded

    dims = GptDims()
    mem = megatron_memory(layers, dims)
    program = sbpc.parse(gpt_stack(layers, weights="free"), f"gpt{layers}_free.mlir")
    assert sbpc.report(program, "global", mem)["global"]["gap"] == 0
    inferred = sbpc.compile(program, f"infer-sbp{{rule=global mem={mem}}}")
    sharded, matrices = weights_sharded(inferred.module, dims.mesh)
    assert sharded == matrices == 6 * layers
    from sbpc.passes.infer_sbp.global_search.objective import plan_objective

    assert plan_objective(inferred.module).memory_bytes <= mem
    result = sbpc.run(inferred, gpt_inputs(layers), pipeline="materialize-boxing,lower-boxing,spmdize")
    assert result.ok, result.mismatches
    assert result.bytes_sent <= 1.05 * megatron_bytes(layers)


def test_rule_global_with_free_weights_reports_compute_against_communication() -> None:
    program = sbpc.parse(gpt_stack(1, weights="free"), "gpt1_free.mlir")
    report = sbpc.report(program, "global")["global"]
    assert report["objective_s"] == pytest.approx(report["compute_s"] + report["comm_s"])
    assert report["gap"] == 0
    assert len(report["free_args"]) == 10
    result = sbpc.run(program, gpt_inputs(1), pipeline=global_pipeline("rule=global"))
    assert result.ok, result.mismatches


@pytest.mark.torch
@pytest.mark.parametrize("options", ["rule=global", "rule=global mem=3932160"])
def test_free_block_runs_on_torch_under_rule_global(options: str, tmp_path: Path) -> None:
    """Weights free: what the search decides (replicated, or within mem the batch split 8 ways and
    one all-gather) runs on torch.distributed processes and matches the global reference."""
    path = tmp_path / "gpt1_free.mlir"
    path.write_text(gpt_stack(1, weights="free"))
    inputs = save_inputs(str(tmp_path / "inputs"), 1)
    code, out = run_captured([str(path), "--backend", "torch", "--check", "--inputs", inputs,
                              "--pipeline", global_pipeline(options)])
    assert code == 0, out
    assert "check: OK" in out
