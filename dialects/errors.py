"""The exception a pass raises to report a problem at a specific op.

Drivers turn it into `FILE:LINE:COL: error: MESSAGE` using the op's source position.
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
