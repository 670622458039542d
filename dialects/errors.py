"""The exceptions a pass raises to report a problem at a specific op (or function argument).

Drivers turn them into `FILE:LINE:COL: error: MESSAGE` using the op's (the argument's) source position.
"""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException


class OpError(DiagnosticException):
    """A user-facing error anchored at `op`."""

    def __init__(self, op: Operation, message: str):
        super().__init__(message)
        self.op = op
        self.message = message


class ArgumentError(OpError):
    """A user-facing error about argument `index` of the function `op`, located at that argument."""

    def __init__(self, op: Operation, index: int, message: str):
        super().__init__(op, message)
        self.index = index
