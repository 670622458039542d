"""The one cost model every rule and planner prices with: communication (`comm`, alpha-beta over
the collectives of `dialects/collectives.py`), local compute (`compute`) and boxing steps (`steps`)."""
