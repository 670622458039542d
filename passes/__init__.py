"""Registry of the passes of sbpc: name -> lazy factory (imports happen only when used)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """All registered passes, keyed by their command-line name."""
    return {}
