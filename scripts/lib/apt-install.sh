# Sourced by the set-up scripts: installs those of Debian's packages that are not installed yet.
# apt_install_missing WHO PACKAGE...   (WHO names the script in its message)
apt_install_missing() {
    local who=$1 pkg
    shift
    local missing=()
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        echo "$who: installing ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
}
