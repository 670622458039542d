"""Transformations of sbp programs; `registry.py` names them for the drivers."""
