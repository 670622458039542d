"""sbpc: a compiler for OneFlow-style global tensors on xDSL.

The repository keeps its code in the top-level folders `dialects/`, `passes/`, `lowering/`,
`translate/`, `runtime/` and `tools/`; pyproject's `package-dir` maps them to `sbpc.dialects`,
`sbpc.passes`, … (in an editable install and as real subpackages in a wheel), so that an install adds
one import package and no generic top-level names.

`import sbpc` also gives the Python API of `sbpc.api` (`parse`, `parse_file`, `compile`, `report`,
`report_text`, `run`, `Error`) and of `sbpc.torch_api` (`from_torch`, `parallelize`, SPEC §7), loaded
on first use so that importing a subpackage stays cheap (the
API loads the execution engine, `sbpc.runtime.engine`, and with it the simulator).
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_API = ("DEFAULT_PIPELINE", "Error", "Program", "RunResult", "compile", "parse", "parse_file", "report",
        "report_text", "run")
_TORCH_API = ("from_torch", "parallelize")
__all__ = ["__version__", *_API, *_TORCH_API]


def __getattr__(name: str) -> Any:
    if name in _API:
        from sbpc import api

        return getattr(api, name)
    if name in _TORCH_API:
        from sbpc import torch_api

        return getattr(torch_api, name)
    raise AttributeError(f"module 'sbpc' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API, *_TORCH_API})
