"""sbpc: a compiler for OneFlow-style global tensors on xDSL.

The repository keeps its code in the top-level folders `dialects/`, `passes/`, `lowering/`,
`runtime/` and `tools/`; this package maps them to `sbpc.dialects`, `sbpc.passes`, … (through the
links beside this file in a checkout, and as real subpackages in a wheel), so that an install adds
one import package and no generic top-level names.
"""

__version__ = "0.1.0"
