"""The xDSL `Context` an sbpc program is parsed in: the dialects its programs use, registered lazily.

Every driver and the Python API parse in such a context. The dialects load on first use (xDSL's
factory style), so that a context costs nothing until a program names them.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.context import Context
from xdsl.ir import Dialect


def _sbp() -> Dialect:
    from sbpc.dialects.sbp_dialect import SBP

    return SBP


def _builtin() -> Dialect:
    from xdsl.dialects.builtin import Builtin

    return Builtin


def _func() -> Dialect:
    from xdsl.dialects.func import Func

    return Func


def _arith() -> Dialect:
    from xdsl.dialects.arith import Arith

    return Arith


def _test() -> Dialect:
    from xdsl.dialects.test import Test

    return Test


def _ascendc() -> Dialect:
    from sbpc.dialects.ascendc import ASCENDC

    return ASCENDC


DIALECTS: tuple[tuple[str, Callable[[], Dialect]], ...] = (
    ("builtin", _builtin),
    ("func", _func),
    ("arith", _arith),
    ("test", _test),
    ("sbp", _sbp),
    ("ascendc", _ascendc),
)
"""The dialects of sbpc programs, by name, each loaded by its factory on first use."""


def register_dialects(ctx: Context) -> None:
    """Lazily register in `ctx` the dialects sbpc programs use (those it does not have yet)."""
    for name, factory in DIALECTS:
        if name not in ctx.registered_dialect_names:
            ctx.register_dialect(name, factory)


def sbp_context() -> Context:
    """A new context with the dialects of sbpc programs registered."""
    ctx = Context()
    register_dialects(ctx)
    return ctx
