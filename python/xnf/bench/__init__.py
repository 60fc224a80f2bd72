"""Benchmarks: declared grids (grid.py) and the ones xnf ships (catalog.py)."""
