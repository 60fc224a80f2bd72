#!/usr/bin/env bash
# The main job: builds an emulated edge server (namespaces and veth pairs), runs the NFs
# in the kernel data path with real traffic, and prints what they did and how fast.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec python3 -m xnf demo "$@"
