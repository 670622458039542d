"""Float pass options in scientific notation (issue 24): `runtime/pipeline_numbers.py` reads `1e-08`,
`1E-8`, `2.5e+3`, `-1e-3` and `.5` for every float option of every pass around xDSL's pipeline lexer,
which alone reads `1e-08` as a name and splits `-1e-3`; a value that is not a number is a usage error
pointing at it (exit 1, no traceback)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import get_type_hints

import pytest

from sbpc.runtime.pipeline import UsageError, available_passes, checked_pipeline, pass_options
from sbpc.runtime.pipeline_numbers import quote_number_values
from sbpc.tools import sbp_opt

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.mark.parametrize(("written", "value"), [
    ("1e-08", 1e-8), ("1E-8", 1e-8), ("2.5e+3", 2500.0), ("+2e-1", 0.2), (".5", 0.5), ("0.00000001", 1e-8),
    ("3", 3.0), ('"1e-2"', 1e-2),
])
def test_a_float_option_takes_scientific_notation(written: str, value: float) -> None:
    """Every spelling reaches the pass as the float it is."""
    (found,) = checked_pipeline(f"autodiff{{optimizer=adamw weight-decay={written}}}").passes
    assert type(found.weight_decay) is float and found.weight_decay == value  # type: ignore[attr-defined]


def test_a_negative_exponent_reaches_the_pass_s_own_check() -> None:
    """`-1e-3` is a number (xDSL's lexer alone splits it into `-1` and `e-3`, a syntax error): the pass
    then says what it allows."""
    with pytest.raises(UsageError, match=r"^pass 'autodiff': lr, eps and weight-decay must be >= 0$"):
        checked_pipeline("autodiff{optimizer=adamw eps=-1e-3}")
    with pytest.raises(UsageError, match=r"^pass 'infer-sbp': time-limit=-0.5 must be a positive number"):
        checked_pipeline("infer-sbp{rule=global time-limit=-5E-1}")


def _float_options() -> list[tuple[str, str]]:
    """(pass, option) for every option of every registered pass whose type takes a float."""
    found = []
    for name, factory in available_passes().items():
        cls = factory()
        hints = get_type_hints(cls)
        for option in pass_options(cls):
            if "float" in str(hints[option.name]):
                found.append((name, option.name.replace("_", "-")))
    return found


def test_every_float_option_of_every_pass_takes_an_exponent() -> None:
    """Not only autodiff's: infer-sbp's and report's time-limit too (the options are found, not listed)."""
    options = _float_options()
    assert {("autodiff", "eps"), ("autodiff", "lr"), ("infer-sbp", "time-limit"), ("report", "time-limit")} \
        <= set(options)
    for name, option in options:
        extra = " rule=global" if option == "time-limit" else " optimizer=adamw" if name == "autodiff" else ""
        (built,) = checked_pipeline(f"{name}{{{option}=5e-1{extra}}}").passes
        assert getattr(built, option.replace("-", "_")) == 0.5, (name, option)


def test_ints_and_sizes_are_left_as_they_were() -> None:
    """An int option stays an int, `mem=12.5MiB` a size, a name list names (the quoting only touches
    values xDSL would not lex whole)."""
    (step,) = checked_pipeline("autodiff{optimizer=adamw step=3 params=w1,2 micro-batches=2}").passes
    assert (step.step, step.params, step.micro_batches) == (3, ("w1", 2), 2)  # type: ignore[attr-defined]
    (infer,) = checked_pipeline("infer-sbp{rule=global mem=12.5MiB time-limit=2}").passes
    assert (infer.mem, infer.time_limit) == ("12.5MiB", 2.0)  # type: ignore[attr-defined]
    with pytest.raises(UsageError, match=r"Incompatible types: given \('1e3',\), expected <class 'int'>"):
        checked_pipeline("autodiff{step=1e3}")


def test_the_quoting_keeps_positions_and_passes_apart() -> None:
    quoted = quote_number_values('a{x=1e-3 y=2,-1e-2 s="1e5"},2d-slice{z=.5 n=-3}')
    assert quoted.text == 'a{x="1e-3" y=2,"-1e-2" s="1e5"},2d-slice{z=".5" n=-3}'
    assert {key: (site.column, site.text) for key, site in quoted.sites.items()} == {
        (0, "x"): (4, "1e-3"), (0, "y"): (11, "2,-1e-2"), (0, "s"): (21, '"1e5"'), (1, "z"): (39, ".5"),
        (1, "n"): (44, "-3")}


@pytest.mark.parametrize(("spec", "message"), [
    ("autodiff{optimizer=adamw eps=1e-3x}",
     "pass 'autodiff': eps=1e-3x is not a number (write a decimal, e.g. 0.001, 1e-08 or 2.5E+3)\n"
     "pass-pipeline:1:30\nautodiff{optimizer=adamw eps=1e-3x}\n" + " " * 29 + "^^^^^"),
    ("autodiff,infer-sbp{rule=global time-limit=1.5s}",
     "pass 'infer-sbp': time-limit=1.5s is not a number (write a decimal, e.g. 0.001, 1e-08 or 2.5E+3)\n"
     "pass-pipeline:1:43\nautodiff,infer-sbp{rule=global time-limit=1.5s}\n" + " " * 42 + "^^^^"),
    ("autodiff{lr=nan}", "pass 'autodiff': lr=nan is not a number"),
    ("autodiff{lr=true}", "pass 'autodiff': lr=true is not a number"),
    ("autodiff{lr=1e-3,2}", "pass 'autodiff': Incompatible types: given (0.001, 2.0)"),
])
def test_a_bad_number_is_a_usage_error_pointing_at_it(spec: str, message: str) -> None:
    with pytest.raises(UsageError) as info:
        checked_pipeline(spec)
    assert str(info.value).startswith(message), str(info.value)


def test_a_syntax_error_is_told_on_the_text_as_written() -> None:
    """The quotes added for xDSL's lexer do not show: the column, the line and the carets are the user's."""
    spec = "  builtin.module(autodiff{eps=-1e-3 lr=1e-3 = })"
    with pytest.raises(UsageError) as info:
        checked_pipeline(spec)
    lines = str(info.value).split("\n")
    at = lines.index("pass-pipeline:1:45")
    assert lines[at + 1:at + 4] == [spec, " " * 44 + "^", " " * 44 + "Expected argument name here"]


def _run(args: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = sbp_opt.main(args)
        except SystemExit as stop:
            code = int(stop.code or 0)
    return code, err.getvalue()


def test_sbp_opt_exits_1_without_a_traceback() -> None:
    code, err = _run([str(EXAMPLES / "mlp_train.mlir"), "-p", "autodiff{optimizer=adamw eps=1e-08x}"])
    assert code == 1 and "Traceback" not in err
    assert err.startswith("error: pass 'autodiff': eps=1e-08x is not a number"), err
    code, err = _run([str(EXAMPLES / "mlp_train.mlir"), "-p", "autodiff{optimizer=adamw eps=1e-08}"])
    assert (code, err) == (0, "")
