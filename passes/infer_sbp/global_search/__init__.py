"""`infer-sbp{rule=global}` on IR: the factor problem built from a module (`problem`), its objective
(`objective`), the shared-boxing model (`shared`), the driver and write-back (`search`), its report."""
