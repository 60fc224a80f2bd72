"""The suite's tiers (docs/testing.md). The full suite is what README's test command runs. The functional tier is
what must hold on every kernel xnf supports, and what a developer runs first (`make test-quick`, a few minutes here;
`scripts/vmtest KERNEL` runs it on Debian's kernels in a VM): the kernel facility table, every NF's packet fixtures
and the differential test (each kernel build against the native one), the native maps, and each NF carrying frames
and real applications on its representative paths (python/xnf/lab/paths.py's representative(): one of each kind of
data path, so tc runs through TCX where the kernel has it and a clsact filter where not)."""

from __future__ import annotations

# Whole files, or single tests (node ids up to "::NAME"); a test parametrized over data paths or modes is in the tier
# on the representative ones only.
FUNCTIONAL = (
    "nfs/",
    "tests/c/",
    "tests/integration/test_kernel.py",
    "tests/integration/test_differential.py",
    "tests/integration/test_xdp_nfs.py::test_macswap_returns_every_frame_with_macs_swapped",
    "tests/integration/test_xdp_nfs.py::test_firewall_drops_exactly_the_acl_matches",
    "tests/integration/test_real_traffic.py::test_router_carries_real_applications",
    "tests/integration/test_acl.py::test_the_acl_passes_what_nftables_passes",
    "tests/integration/test_nat.py::test_the_nat_translates_as_linux_does",
    "tests/integration/test_upf.py::test_a_ue_reaches_the_data_network_through_the_tunnels",
)


def functional(nodeid: str, path_params: list[str], representative: set[str]) -> bool:
    """Whether a test is in the functional tier: named above, and (if it walks data paths or modes) on a
    representative one."""
    named = any(nodeid == entry or nodeid.startswith(entry if entry.endswith("/") else entry + ("::" if
                entry.endswith(".py") else "[")) for entry in FUNCTIONAL)
    return named and all(p in representative for p in path_params)


def functional_paths() -> list[str]:
    """The files and folders the functional tier's tests are in: what to hand pytest, so that it reads no other test
    module (in an emulated VM, reading them all takes minutes)."""
    return list(dict.fromkeys(entry.partition("::")[0] for entry in FUNCTIONAL))


if __name__ == "__main__":
    print(" ".join(functional_paths()))
