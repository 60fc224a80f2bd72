#!/usr/bin/env bash
# The test suite: unit and integration tests, real packets through veth pairs in
# namespaces the tests create and remove. Installs and builds what is missing first.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
# No paths: pyproject.toml's testpaths (tests, and the packet fixtures beside each NF in nfs/).
exec python3 -m pytest -q "$@"
