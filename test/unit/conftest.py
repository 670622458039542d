"""Fixtures shared by the unit tests."""

from __future__ import annotations

import functools
from collections.abc import Iterator

import pytest
from xdsl.universe import Universe


@pytest.fixture(scope="module")
def cached_plugin_discovery() -> Iterator[None]:
    """xDSL's driver scans every installed package's entry points on each start (~60% of an in-process
    run); the result cannot change during a test module, so compute it once."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Universe, "get_multiverse", staticmethod(functools.cache(Universe.get_multiverse)))
        yield
