"""Pass pipelines for the drivers and the API: the default pipeline, every registered pass, spec
parsing, `--list-passes`, and the checks run around every pass.

A bad pipeline (unknown pass, unknown option, a value outside a `Literal[...]` option's choices) is a
`UsageError` raised before any input is read; its message names what is allowed. Before each pass the
program is verified (op verifiers, then function signatures against their placements), and a pass
that needs the global program refuses a per-rank one with a located error.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import IO, Any, Literal, get_args, get_origin, get_type_hints

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError

from sbpc.dialects.errors import OpError
from sbpc.dialects.verifier import ProgramVerifier
from sbpc.lowering.registry import get_lowering_passes
from sbpc.passes.registry import NEEDS_GLOBAL_PROGRAM, get_all_passes
from sbpc.passes.spmdize import is_per_rank
from sbpc.runtime.pipeline_numbers import NumberError, Sites, coerce_numbers, pointer, quote_number_values

DEFAULT_PIPELINE = "infer-sbp,materialize-boxing,lower-boxing,spmdize"
"""A global program to the per-rank one: what `sbp-run`, `sbp-translate` and `sbpc.compile` run by default."""


class UsageError(Exception):
    """A bad command line (unknown pass, unknown or invalid pass option): `error: MESSAGE`, exit 1."""


def available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every pass the drivers can run, by command-line name, in pipeline order."""
    return {**get_all_passes(), **get_lowering_passes()}


@dataclasses.dataclass(frozen=True)
class PassOption:
    """One option of a pass: `name=value` in a pipeline spec."""

    name: str
    type_hint: Any
    default: object
    kind: str | None = None
    """How `--list-passes` names the value when the type alone says too little (field metadata "kind")."""

    @property
    def choices(self) -> tuple[str, ...] | None:
        """The allowed values of a `Literal[...]` option, else None."""
        return tuple(str(a) for a in get_args(self.type_hint)) if get_origin(self.type_hint) is Literal else None

    def describe(self) -> str:
        choices = self.choices
        hint = self.type_hint
        optional = type(None) in get_args(hint) and get_origin(hint) is not Literal
        kinds = [a for a in get_args(hint) if a is not type(None)] if optional else [hint]  # `T | None = None`
        names = " or ".join(getattr(a, "__name__", str(a)) for a in kinds)
        kind = " | ".join(choices) if choices is not None else (self.kind or names)
        default = "" if self.default is dataclasses.MISSING else f" (default {self.default})"
        if optional and self.default is None:
            default = " (optional)"
        return f"{self.name.replace('_', '-')}={kind}{default}"


def pass_options(cls: type[ModulePass]) -> list[PassOption]:
    hints = get_type_hints(cls)
    return [
        PassOption(f.name, hints[f.name], f.default, f.metadata.get("kind"))
        for f in dataclasses.fields(cls)
        if f.init and f.name != "name"
    ]


def list_passes() -> str:
    """`--list-passes`: each pass, its summary, and each option with its allowed values."""
    lines: list[str] = []
    for name, factory in available_passes().items():
        cls = factory()
        summary = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        lines.append(f"{name}: {summary}" if summary else name)
        lines.extend(f"    {option.describe()}" for option in pass_options(cls))
    return "\n".join(lines) + "\n"


def _unanchored(spec: str) -> str:
    """`builtin.module(a,b{k=v})` -> `a,b{k=v}`: MLIR's anchored form; every sbpc pass runs on the
    module, so the anchor only has to be the module."""
    text = spec.strip()
    anchor = "builtin.module("
    if text.startswith(anchor):
        if not text.endswith(")"):
            raise UsageError(f"bad pass pipeline '{spec}': '{anchor}' is not closed")
        return text[len(anchor) : -1]
    if "(" in text.split("{", 1)[0]:
        raise UsageError(f"bad pass pipeline '{spec}': only the builtin.module anchor is supported")
    return text


def _explain(cls: type[ModulePass], spec: ArgSpec, error: ValueError) -> str:
    """A usage message for a pass spec xDSL rejected, naming the options and values allowed."""
    options = {o.name: o for o in pass_options(cls)}
    for key, values in spec.normalize_parameter_names().parameters.items():
        option = options.get(key)
        if option is None:
            known = ", ".join(o.describe() for o in options.values()) or "none"
            return f"pass '{spec.name}' has no option '{key.replace('_', '-')}' (options: {known})"
        choices = option.choices
        if choices is not None and (len(values) != 1 or str(values[0]) not in choices):
            given = ",".join(str(v) for v in values)
            return f"pass '{spec.name}': {key.replace('_', '-')}={given} is not allowed (allowed: {', '.join(choices)})"
    return f"pass '{spec.name}': {error}"


Callback = Callable[[ModulePass | None, ModuleOp, ModulePass | None], None]


def parse_pipeline_spec(specs: Sequence[str], callback: Callback) -> PassPipeline:
    """The passes of `specs` in order (each `a,b{k=v}` or `builtin.module(...)`); UsageError if bad."""
    passes = available_passes()
    # Each pass's spec, with the spec text it came from, its position there and where its values stand.
    parsed: list[tuple[ArgSpec, str, int, int, Sites]] = []
    for spec in specs:
        unanchored = _unanchored(spec)
        # Number values xDSL's lexer would split or keep as names are quoted (`pipeline_numbers`).
        quoted = quote_number_values(unanchored)
        offset = spec.index(unanchored)
        try:
            found = list(parse_pipeline(quoted.text)) if quoted.text else []
        except ArgSpecParseError as error:
            cut = spec.count("{") > spec.count("}")
            hint = " (its '{' is not closed: on a shell line, quote a pipeline that has spaces)" if cut else ""
            raise UsageError(f"bad pass pipeline '{spec}'{hint}: {quoted.relocate(str(error), spec, offset)}") from None
        parsed.extend((pass_spec, spec, offset, k, quoted.sites) for k, pass_spec in enumerate(found))
    built: list[ModulePass] = []
    for pass_spec, spec, offset, ordinal, sites in parsed:
        factory = passes.get(pass_spec.name)
        if factory is None:
            raise UsageError(f"unknown pass '{pass_spec.name}' (registered passes: {', '.join(passes)})")
        cls = factory()
        try:
            built.append(cls.from_pass_spec(coerce_numbers(cls, pass_spec, ordinal, sites)))
        except NumberError as error:
            where = "" if error.site is None else "\n" + pointer(spec, offset, error.site)
            raise UsageError(f"{error}{where}") from None
        except ValueError as error:
            raise UsageError(_explain(cls, pass_spec, error)) from None
    _share_report_caches(built)
    return PassPipeline(tuple(built), callback)


def checked_pipeline(spec: str) -> PassPipeline:
    """One pipeline spec parsed, each pass's output verified and no global-program pass run on a
    per-rank program (`checking_callback`); UsageError if bad."""
    return parse_pipeline_spec([spec], checking_callback(True))


def _share_report_caches(built: Sequence[ModulePass]) -> None:
    """A `report` infers through the cache of the next `infer-sbp` if that has the same rule and
    budget, so that a rule=global search is solved once for both (by name: passes load lazily)."""
    for i, p in enumerate(built):
        if p.name != "report":
            continue
        following = next((q for q in built[i + 1 :] if q.name == "infer-sbp"), None)
        if following is not None and (following.rule, following.budget) == (p.infer.rule, p.infer.budget):  # type: ignore[attr-defined]
            p.share_cache(following.cache)  # type: ignore[attr-defined]


def verify_program(module: ModuleOp) -> None:
    """Verify every op, then every function signature against its placements (`module.verify()` and
    `verify_signatures`, each distinct op verified once: `ProgramVerifier`). The memo lives for one
    verification: a pass retypes what it touches, so the next one would find few of its keys, and
    the keys it kept would only add to the objects the garbage collector walks."""
    ProgramVerifier().verify(module)


def per_rank_function(module: ModuleOp) -> func.FuncOp | None:
    """The first function of `module` that is already per-rank (the output of spmdize), if any."""
    return next((op for op in module.ops if isinstance(op, func.FuncOp) and is_per_rank(op)), None)


def default_pipeline_for(module: ModuleOp) -> str:
    """The default pipeline for a global program, none for a per-rank one (spmdize's output runs as it is)."""
    return "" if per_rank_function(module) is not None else DEFAULT_PIPELINE


def reject_per_rank(module: ModuleOp, needing: str) -> None:
    """A located error if a function of `module` is already per-rank, for `needing` (a pass or the
    report) that reads the global program."""
    op = per_rank_function(module)
    if op is not None:
        raise OpError(
            op,
            f"func.func @{op.sym_name.data} is already per-rank (the output of spmdize): {needing} needs "
            "the global program; leave it out",
        )


def checking_callback(verify: bool) -> Callback:
    """Run between passes: verify what the previous pass produced (unless `verify` is off), and let no
    pass that reads the global program start on a per-rank one."""

    def between(previous: ModulePass | None, module: ModuleOp, following: ModulePass | None) -> None:
        if previous is not None and verify:
            verify_program(module)
        if following is not None and following.name in NEEDS_GLOBAL_PROGRAM:
            reject_per_rank(module, following.name)

    return between


@dataclasses.dataclass
class Instrumentation:
    """What `sbp-opt` does around each pass, as mlir-opt does: the checks of `checking_callback`,
    the IR after every pass (`--mlir-print-ir-after-all`) and the time every pass took
    (`--time-passes`), both on `stream` so that stdout stays the program. Owned by one driver run;
    times add up over the chunks of `--split-input-file`."""

    verify: bool
    stream: IO[str]
    print_ir_after_all: bool = False
    generic: bool = False
    # Seconds per timed phase in first-run order: "Parser", each pipeline position, "Output".
    times: dict[str, float] = dataclasses.field(default_factory=dict)
    _position: int = 0
    _started: float = 0.0

    def __post_init__(self) -> None:
        self._check = checking_callback(self.verify)

    def record(self, name: str, seconds: float) -> None:
        self.times[name] = self.times.get(name, 0.0) + seconds

    def __call__(self, previous: ModulePass | None, module: ModuleOp, following: ModulePass | None) -> None:
        if previous is not None:
            # The pass's own time: verification and printing around it are not counted.
            self.record(f"{self._position}:{previous.name}", time.perf_counter() - self._started)
            self._position += 1
            if self.print_ir_after_all:
                self.stream.write(f"// -----// IR Dump After {type(previous).__name__} ({previous.name}) //----- //\n")
                Printer(stream=self.stream, print_generic_format=self.generic).print_op(module)
                self.stream.write("\n\n")
        else:
            self._position = 0
        self._check(previous, module, following)
        self._started = time.perf_counter()

    def report(self) -> str:
        """MLIR's `-mlir-timing` report: wall time per phase, its share, and the total."""
        total = sum(self.times.values())
        rule = "===" + "-" * 73 + "==="
        lines = [rule, "... Execution time report ...".center(79).rstrip(), rule,
                 f"  Total Execution Time: {total:.4f} seconds", "", "  ----Wall Time----  ----Name----"]
        for key, seconds in [*self.times.items(), ("Total", total)]:
            share = 100.0 * seconds / total if total > 0 else 0.0
            lines.append(f"  {seconds:8.4f} ({share:5.1f}%)  {key.split(':', 1)[-1]}")
        return "\n".join(lines) + "\n"
