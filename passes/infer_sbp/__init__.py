"""`infer-sbp`: the pass (`infer_pass`) and its options (`options`); the local rules, one op at a
time (`local`: candidates -> scores -> choice); the whole-program search (`global_search/`); the
report of what it chose and why (`report`, `report_pass`).

Imports run one way: `local` < `global_search` < `infer_pass` < `report` < `report_pass`."""
