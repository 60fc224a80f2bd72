#!/bin/sh
# Runs the instances of a configuration file (XNF_CONFIG, default /etc/xnf/xnf.toml when it is there: the same
# file `xnf apply` and the systemd unit take, docs/operations.md) under `xnf daemon`; or else one xnf NF as the
# container's environment (or /etc/xnf/xnf.env, a Kubernetes ConfigMap) says:
#   XNF_NF       the NF (firewall, lb, router, ... or chain:a,b)                      required
#   XNF_MODE     where it runs (xdp, afxdp, hybrid, ...)                               default xdp
#   XNF_IFACE    its interfaces, separated by spaces or commas                         required
#   XNF_RULES    its rules file (a ConfigMap mounted at /etc/xnf)                      default /etc/xnf/rules if present
#   XNF_NAME     the instance's name (control socket /run/xnf/NAME.sock)               default the host's name
#   XNF_OPTIONS  any other options of `xnf run` (--queues 2 --workers 2 ...)
# `entrypoint.sh exporter` serves every instance's metrics instead (a second container sharing /run/xnf).
set -eu
[ -f /etc/xnf/xnf.env ] && . /etc/xnf/xnf.env
if [ "${1:-}" = exporter ]; then
    exec python3 -m xnf exporter --listen "${XNF_METRICS_LISTEN:-0.0.0.0:9417}"
fi
config="${XNF_CONFIG:-/etc/xnf/xnf.toml}"
if [ -n "${XNF_CONFIG:-}" ] || [ -f "$config" ]; then
    exec python3 -m xnf daemon "$config"
fi
: "${XNF_NF:?set XNF_NF to the NF to run (xnf list names them)}"
: "${XNF_IFACE:?set XNF_IFACE to the interface(s) the NF runs on}"
set -- run "$XNF_NF" --mode "${XNF_MODE:-xdp}" --name "${XNF_NAME:-$(hostname)}"
for iface in $(echo "$XNF_IFACE" | tr ',' ' '); do
    set -- "$@" --iface "$iface"
done
rules="${XNF_RULES:-/etc/xnf/rules}"
if [ -n "${XNF_RULES:-}" ] || [ -f "$rules" ]; then
    set -- "$@" --rules "$rules"
fi
# XNF_OPTIONS is split into words on purpose: it holds several options
# shellcheck disable=SC2086
exec python3 -m xnf "$@" ${XNF_OPTIONS:-}
