"""xnf: write a network function once in C; run it with XDP, AF_XDP or both; measure which wins."""

__version__ = "0.1.0"
