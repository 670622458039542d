"""`infer-sbp`: the pass (`infer_pass`), its local rules (candidates -> scores -> choice), the
whole-program search (`global_search/`) and the report of what it chose and why (`report`)."""
