"""Registry of the passes in `passes/`: command-line name -> lazy factory of the pass class.

The factories import a pass's module only when it is used, so a driver starts without loading every
pass. Passes of `lowering/` register in `lowering/registry.py`; the drivers join the two.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _infer_sbp() -> type[ModulePass]:
    from sbpc.passes.infer_sbp.infer_pass import InferSbpPass

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


def _autodiff() -> type[ModulePass]:
    from sbpc.passes.autodiff import AutodiffPass

    return AutodiffPass


def _report() -> type[ModulePass]:
    from sbpc.passes.infer_sbp.report_pass import ReportPass

    return ReportPass


NEEDS_GLOBAL_PROGRAM = frozenset({"infer-sbp", "report"})
"""Passes that read global `!sbp.tensor` types and cannot start on a per-rank (spmdize'd) program;
the others leave a per-rank program as it is."""


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """The passes of `passes/`, keyed by their command-line name, in pipeline order."""
    return {
        "autodiff": _autodiff,
        "infer-sbp": _infer_sbp,
        "materialize-boxing": _materialize_boxing,
        "lower-boxing": _lower_boxing,
        "spmdize": _spmdize,
        "report": _report,
    }
