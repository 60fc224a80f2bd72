#!/usr/bin/env bash
# Builds the xnf container image (xnf:VERSION and xnf:latest) with podman, from this checkout's own build, on a
# Debian bookworm base that debootstrap makes from Debian's packages: no image is pulled from a registry.
#
#   scripts/build-image.sh [--rebuild-base]
#
# The base (localhost/xnf-base:bookworm: the runtime libraries, iproute2, python3 and the exporter's
# prometheus-client) is made once and kept; the image on top of it holds `make install`'s programs, the lab's BPF
# objects and the xnf Python package. deploy/image/Containerfile says what runs in it; docs/deployment.md how.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/apt-install.sh

if [ "$(id -u)" -ne 0 ]; then
    echo "xnf: error: building the image needs root (debootstrap, podman): run with sudo" >&2
    exit 1
fi
# runc: podman's runtime where crun refuses the host's cgroups (a mix of v1 and v2, as on the lab's machines)
apt_install_missing "xnf image" podman debootstrap runc

BASE=localhost/xnf-base:bookworm
MIRROR=${XNF_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# What the NF binaries link against, what the entrypoint and `xnf exporter` need; nothing to build with.
RUNTIME_PACKAGES=libbpf1,libxdp1,libmnl0,liburcu8,libpcap0.8,libelf1,zlib1g,iproute2,ethtool,python3,python3-prometheus-client,python3-rich,procps
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ "${1:-}" = --rebuild-base ] || ! podman image exists "$BASE"; then
    echo "xnf image: making the base with debootstrap ($MIRROR)"
    debootstrap --variant=minbase --include="$RUNTIME_PACKAGES" bookworm "$work/rootfs" "$MIRROR" >"$work/debootstrap.log" 2>&1 \
        || { tail -20 "$work/debootstrap.log" >&2; echo "xnf: error: debootstrap failed (log above)" >&2; exit 1; }
    rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
    tar -C "$work/rootfs" -c . | podman import --change 'CMD ["/bin/sh"]' - "$BASE" >/dev/null
    rm -rf "$work/rootfs"
fi

echo "xnf image: staging the build"
make -s -j"$(nproc)"
stage="$work/context/stage"
mkdir -p "$stage/usr/local/lib/xnf/python"
make -s install DESTDIR="$stage" PREFIX=/usr/local >/dev/null
rm -rf "$stage/usr/local/lib/python"*    # the host's Python layout; the image's package goes below instead
cp -r python/xnf "$stage/usr/local/lib/xnf/python/"
find "$stage" -name __pycache__ -prune -exec rm -rf {} +
install -m 755 deploy/image/entrypoint.sh "$stage/usr/local/lib/xnf/entrypoint.sh"
cp deploy/image/Containerfile "$work/context/"

echo "xnf image: building xnf:$VERSION"
podman build -q -t "localhost/xnf:$VERSION" -t localhost/xnf:latest -f "$work/context/Containerfile" "$work/context" >/dev/null
echo "built localhost/xnf:$VERSION (and :latest)"
