"""`report`: the `--sbp-report` as a pass (SPEC §3), so that a pipeline can print it where it stands.

`sbp-opt f.mlir -p 'report{rule=global format=json},infer-sbp{rule=global}'` writes, on stderr, what
`sbp-opt f.mlir --infer-sbp=rule=global --sbp-report=json` writes; the IR passes through unchanged
(the report is built on clones, `passes/infer_sbp/report.py`). Options: the inference's `rule`,
`mem` and `time-limit` (the last two rule=global only), declared once with `infer-sbp`'s
(`passes/infer_sbp/options.py`); the `format` (text, json, or dot: the plan drawn after
materialize-boxing and lower-boxing{planner}); and `planner` for dot.

The pass reads the global program, so a pipeline cannot place it after `spmdize`
(`registry.NEEDS_GLOBAL_PROGRAM`). Its inference runs through an `infer-sbp` pass of the same options
that it owns; a driver may hand it the cache of the pipeline's own `infer-sbp` (`share_cache`), so
that a rule=global search is solved once for both.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Literal

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from sbpc.passes.infer_sbp.cache import InferenceCache
from sbpc.passes.infer_sbp.infer_pass import InferSbpPass
from sbpc.passes.infer_sbp.options import InferOptions
from sbpc.passes.infer_sbp.report import report_of


@dataclass(frozen=True)
class ReportPass(InferOptions, ModulePass):
    """Write the SBP report of the module, as it stands in the pipeline, to stderr."""

    name = "report"
    format: Literal["text", "json", "dot"] = "text"
    planner: Literal["optimal", "oneflow"] = "optimal"
    """The boxing planner of the plan `format=dot` draws."""

    def __post_init__(self) -> None:
        super().__post_init__()
        # Not a field: the fields of a pass are its command-line options.
        object.__setattr__(self, "_infer", InferSbpPass(rule=self.rule, mem=self.mem, time_limit=self.time_limit))

    @property
    def infer(self) -> InferSbpPass:
        """The inference the report describes (its rule, budget and cache)."""
        return self._infer  # type: ignore[attr-defined]

    def share_cache(self, cache: InferenceCache) -> None:
        """Infer through `cache` (e.g. the pipeline's `infer-sbp`'s) instead of the pass's own."""
        self.infer.share_cache(cache)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        sys.stderr.write(report_of(op, self.infer, self.format, self.planner))
