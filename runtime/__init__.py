"""The mesh simulator behind `sbp-run`: numpy op semantics and lock-step SPMD execution."""
