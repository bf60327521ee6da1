#!/usr/bin/env bash
# Install the node-side packages the local cluster needs, from Debian, only when
# something is missing (a warm machine never touches the network here).
source "$(dirname "$0")/lib.sh"

missing=()
check() { # check <command-or-path> <debian package>
  if [[ "$1" == /* ]]; then [ -e "$1" ] || missing+=("$2")
  else command -v "$1" >/dev/null 2>&1 || missing+=("$2"); fi
}
check containerd containerd
check runc runc
check /usr/lib/cni/bridge containernetworking-plugins
check iptables iptables
check ipset ipset
check conntrack conntrack
check socat socat
check openssl openssl
check debootstrap debootstrap
check git git
check curl curl
check python3 python3
check ip iproute2
check findmnt util-linux
check tar tar
check gzip gzip
check mount mount
check /usr/share/keyrings/debian-archive-keyring.gpg debian-archive-keyring
# the package mirror (mirror.sh): pypiserver in a venv, verdaccio installed and filled with npm,
# the Go module proxy's files served by nginx (filled with the machine's go)
command -v python3 >/dev/null && ! python3 -c 'import ensurepip' 2>/dev/null && missing+=(python3-venv)
check npm npm
check /usr/sbin/nginx nginx

if [ "${#missing[@]}" -eq 0 ]; then
  log "host packages: all present"
  exit 0
fi
need_root
command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get: install them by hand"
log "host packages: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
log "host packages: installed"
