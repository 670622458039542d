"""Translations between sbp programs and upstream MLIR (shard, linalg, tosa, arith).

`to_upstream_mlir` / `to_upstream_global` export (`sbp-translate --emit-mlir`), `from_upstream_shard`
imports (`--import-shard`), with `raise_linalg` recognising compute ops."""
