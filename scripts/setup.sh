#!/usr/bin/env bash
# Installs what xnf needs on a fresh Debian bookworm machine, then builds it.
# Idempotent: installs only what is missing, so the demo and test scripts run it every time.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/apt-install.sh

if [ "$(id -u)" -ne 0 ]; then
    echo "xnf: error: setting up and running xnf needs root (it installs packages and loads XDP programs): run with sudo" >&2
    exit 1
fi

# dpdk-dev and its two socket drivers: testpmd, the public baseline the AF_XDP benchmarks compare with.
# memcached and libmemcached-tools (memcaslap): the real local application of the traffic-mix measurements.
# libclang-rt-14-dev: libFuzzer and the sanitizers' runtimes, for the fuzz targets (make fuzz-bins).
# prometheus: the real server the exporter's test starts on a loopback port (never as a service).
# tcpdump: reads xnf dump's captures in the tests. help2man: the man pages (make man, make install).
# libpcap-dev: xnf-gen --write-pcap and xnf cost read and write a mix's frames as pcap.
# libmnl-dev: the runtime's netlink (a port's link and its veth peer, the peer's namespace).
# iperf3, nginx-light, curl, iputils-ping, traceroute, wrk: the real applications the tests and the goodput
# benchmark run
# through xnf. nftables and iptables: Linux's own firewall and NAT, the yardstick of the acl and nat NFs and the
# source format of xnf acl import.
apt_packages=(clang llvm libbpf-dev libxdp-dev bpftool liburcu-dev libelf-dev zlib1g-dev libpcap-dev libmnl-dev
              pkg-config make gcc iproute2 ethtool
              dpdk-dev librte-net-af-xdp23 librte-net-af-packet23
              memcached libmemcached-tools libclang-rt-14-dev prometheus tcpdump help2man
              iperf3 nginx-light curl iputils-ping traceroute wrk nftables iptables)
apt_install_missing "xnf setup" "${apt_packages[@]}"

# Reinstall when the package is missing or installed from another checkout.
installed_from=$(python3 -c 'import xnf, rich, matplotlib, numpy, prometheus_client, shtab, pytest, scapy, kubernetes_validate, hypothesis, yaml; print(xnf.__file__)' 2>/dev/null || true)
if [ "$installed_from" != "$PWD/python/xnf/__init__.py" ]; then
    echo "xnf setup: installing the python package (editable) and its test dependencies"
    python3 -m pip install -q --root-user-action=ignore -e ".[test]"
fi

make -s -j"$(nproc)"

# Tab completion for the xnf command, generated from its own parser (shtab): bash reads it from here.
completions=/usr/share/bash-completion/completions
mkdir -p "$completions"
python3 -m shtab --shell=bash --prog xnf xnf.commands.main.make_parser > "$completions/xnf.tmp" && mv "$completions/xnf.tmp" "$completions/xnf"
