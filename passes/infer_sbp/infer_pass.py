"""`infer-sbp`: choose an ND-SBP signature for every op and type every result (SPEC §2.5, §3).

The pass dispatches on its rule: `rule=oneflow` and `rule=cost` are the local rules, one op at a
time (`passes/infer_sbp/local.py`); `rule=global` chooses every signature, and the SBP of every
free argument, for the whole program at once (`passes/infer_sbp/global_search/search.py`). Its
options are declared once, with the `report` pass's, in `passes/infer_sbp/options.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from sbpc.passes.infer_sbp.cache import InferenceCache
from sbpc.passes.infer_sbp.global_search.search import infer_module_global
from sbpc.passes.infer_sbp.local import infer_module
from sbpc.passes.infer_sbp.options import InferOptions


@dataclass(frozen=True)
class InferSbpPass(InferOptions, ModulePass):
    """Choose an ND-SBP signature for every op and type every result.

    Options: `rule=oneflow` (default, OneFlow's eager inference), `rule=cost` (α-β model, op by
    op) or `rule=global` (the whole-program optimum; `mem` its budget, `time-limit` its optional
    wall-clock limit). The pass instance owns the `InferenceCache` its runs share (a pipeline
    applied to several modules, `--split-input-file` chunks).
    """

    name = "infer-sbp"

    def __post_init__(self) -> None:
        super().__post_init__()
        # Not a dataclass field: the fields of a pass are its command-line options.
        object.__setattr__(self, "_cache", InferenceCache())

    @property
    def cache(self) -> InferenceCache:
        return self._cache  # type: ignore[attr-defined]

    def share_cache(self, cache: InferenceCache) -> None:
        """Use `cache`, owned by the caller (e.g. an API `Program`, whose report, compile and run
        calls then share memoised decisions and rule=global's solutions), instead of its own."""
        object.__setattr__(self, "_cache", cache)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.rule == "global":
            infer_module_global(op, self.budget, self.cache, time_limit=self.time_limit)
            return
        infer_module(op, self.rule, keep_records=False, cache=self.cache)
