"""Which core does what in a measurement on this two-core lab (docs/methodology.md): the generator is pinned
to one, the DUT's user-space work (AF_XDP workers, testpmd's forwarding lcore, a NAPI thread moved off the
generator) to the other."""

GEN_CORE = 0
DUT_CORE = 1
