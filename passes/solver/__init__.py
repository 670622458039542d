"""IR-free discrete optimisation: factor problems, exact elimination, dual bounds, the MIP.

Read by `infer-sbp{rule=global}`; nothing here knows the sbp dialect."""
