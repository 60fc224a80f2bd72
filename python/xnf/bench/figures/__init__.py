"""The figures the studies draw of their own results, as each run ends (plt only, no display)."""
