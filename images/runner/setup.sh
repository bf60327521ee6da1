#!/bin/sh
# The one recipe of the images' system, run as root inside the image's root
# filesystem: by images/runner/Dockerfile and ./Dockerfile (RUN, on
# node:24-bookworm-slim) and by hack/cluster/images.sh (chroot into its
# debootstrap tree, whose --include already holds the packages: it has no
# network inside the chroot). Node 24 comes from the base image or from
# images.sh's node layer; the image's user, environment and command are in
# image.json. A catalog image that needs more Debian packages (images/build/)
# names its own list after the runner's; the runner's list is always first.
#   sh setup.sh packages.txt [more-packages.txt ...]
set -eu

# The packages of the lists that are not installed yet (none, after debootstrap --include).
missing=""
for p in $(sed -e 's/#.*//' "$@"); do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q ' installed$' || missing="$missing $p"
done
if [ -n "$missing" ]; then
  apt-get update
  # shellcheck disable=SC2086 # one word per package
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
fi

# Runs and codeplane itself run as this user (the pods' runAsUser).
groupadd -g 10001 runner
useradd -u 10001 -g 10001 -m -d /home/runner -s /bin/sh runner

# Python's bytecode, checked against its source's hash instead of its mtime (PEP 552). The
# cluster's image build writes every file with mtime 0 (reproducible layers, hack/cluster/images.sh),
# which made every .pyc Debian compiled stale: a run (uid 10001, read-only root) cannot rewrite them,
# so each Python start compiled again every module of the standard library it imported (0.15-0.3 s
# before a script's first line on the local cluster). Test suites are skipped (some hold bad syntax).
python3 -m compileall -q -f -x '/(test|tests)/' --invalidation-mode checked-hash /usr/lib/python3* \
  || echo "setup.sh: some Python files did not compile (see above); they are compiled at each start" >&2

# What only the build needed.
rm -rf /var/cache/apt/archives/*.deb /var/lib/apt/lists/* /var/log/* /tmp/* \
  /usr/share/doc/* /usr/share/man/* /usr/share/info/*
