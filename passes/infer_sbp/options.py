"""The options of the inference, declared and checked once: `infer-sbp` and the `report` pass
(which describes an inference) both take them by inheriting `InferOptions`.

* `rule`: oneflow (default), cost or global (SPEC §3).
* `mem`: rule=global's per-device memory budget, bytes or a number with KiB, MiB or GiB, read by
  `dialects.units.parse_bytes` (the `budget` property holds the bytes).
* `time-limit`: rule=global's wall-clock limit, in seconds, on every HiGHS run of the search (and
  on the Lagrangian dual's loop). Absent (the default), the search stops on work limits only
  (`solver.mip.MIP_MAX_NODES`, `SIMPLEX_ITERATION_LIMIT`, the dual's pricings), so the same
  input gives the same plan on any machine; with it, a plan may depend on the machine's speed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from sbpc.dialects.units import parse_bytes


@dataclass(frozen=True)
class InferOptions:
    """The inference's options (see the module docstring); a pass inherits them as its own."""

    rule: Literal["oneflow", "cost", "global"] = "oneflow"
    mem: int | str | None = field(default=None, metadata={"kind": "BYTES (rule=global only; e.g. 64MiB, 2GiB)"})
    """rule=global's per-device memory budget: bytes, or a number with KiB, MiB or GiB."""
    time_limit: float | int | None = field(
        default=None, metadata={"kind": "SECONDS (rule=global only; per HiGHS run)"})
    """rule=global's wall-clock limit per HiGHS run (None: work limits only, a deterministic plan)."""

    def __post_init__(self) -> None:
        # Not fields: the fields of a pass are its command-line options.
        object.__setattr__(self, "_budget", None)
        for name in ("mem", "time_limit"):
            if getattr(self, name) is not None and self.rule != "global":
                option = name.replace("_", "-")
                raise ValueError(f"{option}={getattr(self, name)} is an option of rule=global only (rule={self.rule})")
        if self.mem is not None:
            object.__setattr__(self, "_budget", parse_bytes(str(self.mem)))
        if self.time_limit is not None:
            if isinstance(self.time_limit, bool) or not self.time_limit > 0:
                raise ValueError(f"time-limit={self.time_limit} must be a positive number of seconds")
            object.__setattr__(self, "time_limit", float(self.time_limit))

    @property
    def budget(self) -> int | None:
        """`mem` in bytes (None: no budget)."""
        return self._budget  # type: ignore[attr-defined]

