"""Registry of the passes of sbpc: name -> lazy factory (imports happen only when used)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _infer_sbp() -> type[ModulePass]:
    from sbpc.passes.infer_sbp import InferSbpPass

    return InferSbpPass


def _materialize_boxing() -> type[ModulePass]:
    from sbpc.passes.materialize_boxing import MaterializeBoxingPass

    return MaterializeBoxingPass


def _lower_boxing() -> type[ModulePass]:
    from sbpc.passes.lower_boxing import LowerBoxingPass

    return LowerBoxingPass


def _spmdize() -> type[ModulePass]:
    from sbpc.passes.spmdize import SpmdizePass

    return SpmdizePass


def _lower_to_ascendc() -> type[ModulePass]:
    from sbpc.lowering.to_ascendc import LowerToAscendcPass

    return LowerToAscendcPass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """All registered passes, keyed by their command-line name."""
    return {
        "infer-sbp": _infer_sbp,
        "materialize-boxing": _materialize_boxing,
        "lower-boxing": _lower_boxing,
        "spmdize": _spmdize,
        "lower-to-ascendc": _lower_to_ascendc,
    }
