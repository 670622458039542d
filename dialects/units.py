"""Units, one home: bytes as users write and read them, and the time unit of each model.

Times: the alpha-beta communication model (`passes/cost/comm.py`) prices in microseconds, as
OneFlow's and DTensor's figures are given; the whole-program objective (`rule=global`) and the
compute model are in seconds. Convert with the two constants below, never with a bare 1e6.
"""

from __future__ import annotations

import re

US_PER_SECOND = 1e6
"""Microseconds in a second: seconds * US_PER_SECOND = microseconds."""
SECONDS_PER_US = 1e-6
"""Seconds in a microsecond: microseconds * SECONDS_PER_US = seconds."""

_BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
_SCALE = {"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(B|KiB|MiB|GiB)?\s*")


def human_bytes(n: float) -> str:
    """`512 B`, `3.0 KiB`, `1.5 GiB`: whole bytes below 1 KiB, one decimal above (binary units)."""
    value = float(n)
    for unit in _BYTE_UNITS:
        if abs(value) < 1024 or unit == _BYTE_UNITS[-1]:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def parse_bytes(text: str, option: str = "mem") -> int:
    """`4096`, `64MiB`, `1.5GiB` -> bytes; ValueError (naming `option`) otherwise."""
    found = _SIZE.fullmatch(text)
    if found is None:
        raise ValueError(f"{option}={text} is not a size (write bytes, or a number with KiB, MiB or GiB)")
    return int(float(found.group(1)) * _SCALE[found.group(2) or ""])
