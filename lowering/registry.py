"""Registry of the passes in `lowering/`: command-line name -> lazy factory of the pass class."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _lower_to_ascendc() -> type[ModulePass]:
    from sbpc.lowering.ascendc.to_ascendc import LowerToAscendcPass

    return LowerToAscendcPass


def get_lowering_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """The passes of `lowering/`, keyed by their command-line name."""
    return {"lower-to-ascendc": _lower_to_ascendc}
