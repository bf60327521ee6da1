#!/usr/bin/env bash
# The local cluster's package mirror: a PyPI simple index (pypiserver), an npm
# registry (verdaccio) and a Go module proxy (nginx serving a module cache's
# download directory, which is the GOPROXY protocol as static files) on the node,
# filled once from the real registries and then served with no way out (pypiserver
# without its fallback redirect, verdaccio without uplinks, nginx with files only),
# so runs install through it and nothing leaves the machine.
#
#   mirror.sh fill [pypi|npm|go]           fill the cache for the current lists (set-up: reaches PyPI/npm/the Go proxy)
#   mirror.sh path pypi|npm|go             the filled cache directory (exit 1 when not filled)
#   mirror.sh serve pypi|npm|go ADDR PORT STATE_DIR
#                                          serve the filled cache in the foreground (exec);
#                                          STATE_DIR holds its generated config
#   mirror.sh env [--json] [HOST]          what runs need to use it: CODEPLANE_RUN_EGRESS_ALLOW
#                                          and CODEPLANE_RUN_PREPROCESS_ENV (shell: keeps values already set)
#
# Lists: hack/cluster/mirror/pypi.txt, npm.txt, go.txt. Cache, keyed by each list's hash and
# the tools' versions (an unchanged list is never fetched again):
#   $CACHE_DIR/mirror/pypi-<key>/           wheels for CPython 3.11 and 3.13, manylinux x86_64
#   $CACHE_DIR/mirror/npm-<key>/storage/    verdaccio's storage
#   $CACHE_DIR/mirror/go-<key>/proxy/       a module cache's cache/download: <module>/@v/{list,<v>.info,.mod,.zip}
#   $CACHE_DIR/venv/pypiserver-<version>/   $CACHE_DIR/verdaccio/<version>/   the servers
# Each is built in a temporary directory and renamed into place when complete.
source "$(dirname "$0")/lib.sh"

MIRROR_DIR="$HACK_DIR/mirror"
MIRROR_CACHE="$CACHE_DIR/mirror"
PYPISERVER_VERSION="${PYPISERVER_VERSION:-2.4.2}"
WAITRESS_VERSION="${WAITRESS_VERSION:-3.0.2}"
VERDACCIO_VERSION="${VERDACCIO_VERSION:-6.10.4}"
PYPISERVER_VENV="$CACHE_DIR/venv/pypiserver-$PYPISERVER_VERSION"
VERDACCIO_DIR="$CACHE_DIR/verdaccio/$VERDACCIO_VERSION"
# The Pythons the catalog's images have (Debian bookworm's 3.11, the newer image's 3.13).
MIRROR_PYTHONS="${MIRROR_PYTHONS:-3.11 3.13}"
# Bump when what a fill produces changes, so every cache is filled again.
FILL_FORMAT=1
# The same for the Go fill alone.
GO_FILL_FORMAT=1

# manylinux wheels up to glibc 2.36 (Debian bookworm, the oldest base of the catalog).
PLATFORMS=(--platform manylinux2014_x86_64 --platform manylinux2010_x86_64 --platform manylinux1_x86_64)
for m in $(seq 5 36); do PLATFORMS+=(--platform "manylinux_2_${m}_x86_64"); done

# list_entries <file>: the list without comments and blank lines
list_entries() { sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$1" | grep -v '^$' || true; }

pypi_key() {
  { echo "format=$FILL_FORMAT pythons=$MIRROR_PYTHONS ${PLATFORMS[*]}"; list_entries "$MIRROR_DIR/pypi.txt"; } | sha256sum | cut -c1-16
}
npm_key() {
  { echo "format=$FILL_FORMAT verdaccio=$VERDACCIO_VERSION"; list_entries "$MIRROR_DIR/npm.txt"; } | sha256sum | cut -c1-16
}
go_key() {
  { echo "format=$FILL_FORMAT go-format=$GO_FILL_FORMAT"; list_entries "$MIRROR_DIR/go.txt"; } | sha256sum | cut -c1-16
}
pypi_dir() { echo "$MIRROR_CACHE/pypi-$(pypi_key)"; }
npm_dir() { echo "$MIRROR_CACHE/npm-$(npm_key)"; }
go_dir() { echo "$MIRROR_CACHE/go-$(go_key)"; }

# retry <what> <command...>: three tries, 5 s and 15 s apart (a registry hiccup is not a failed set-up)
retry() {
  local what="$1" i delay; shift
  for i in 1 2 3; do
    "$@" && return 0
    delay=$((i == 1 ? 5 : 15))
    [ "$i" = 3 ] || { log "$what: attempt $i failed, retrying in ${delay}s"; sleep "$delay"; }
  done
  return 1
}

# node22: a Node >= 22 (verdaccio 6 needs it): the project's (make install), else the machine's.
node22() {
  local n
  for n in "$REPO_ROOT/node_modules/node/bin/node" "$(command -v node 2>/dev/null)"; do
    [ -x "$n" ] && [ "$("$n" -p 'process.versions.node.split(".")[0]' 2>/dev/null)" -ge 22 ] 2>/dev/null && { echo "$n"; return; }
  done
  die "verdaccio needs Node >= 22: run 'make install' (the project's Node 24) or put one on PATH"
}

# python_for <version>: an interpreter of that version with pip, if this machine has one
# (its pip evaluates dependencies' environment markers for that version exactly).
python_for() {
  local v="$1" c
  for c in "python$v" "${PYENV_ROOT:-$HOME/.pyenv}/versions/$v".*/bin/"python$v" "/usr/local/bin/python$v" "/usr/bin/python$v"; do
    command -v "$c" >/dev/null 2>&1 && "$c" -m pip --version >/dev/null 2>&1 && { command -v "$c"; return 0; }
  done
  return 1
}

# --- the servers, installed once per version ------------------------------------------------
ensure_pypiserver() {
  [ -f "$PYPISERVER_VENV/.complete" ] && return
  command -v python3 >/dev/null && python3 -c 'import ensurepip' 2>/dev/null \
    || die "the PyPI mirror needs python3 with venv (apt-get install python3 python3-venv)"
  log "mirror: installing pypiserver $PYPISERVER_VERSION into $PYPISERVER_VENV"
  # A venv's scripts name its path, so it is made in place (not renamed) and used only
  # once the .complete marker says its install finished; an interrupted one is redone.
  rm -rf "$PYPISERVER_VENV" && mkdir -p "$(dirname "$PYPISERVER_VENV")"
  python3 -m venv "$PYPISERVER_VENV"
  retry "pip install pypiserver" env -u PIP_FIND_LINKS "$PYPISERVER_VENV/bin/pip" install --quiet --disable-pip-version-check \
    "pypiserver==$PYPISERVER_VERSION" "waitress==$WAITRESS_VERSION" || die "could not install pypiserver from PyPI"
  touch "$PYPISERVER_VENV/.complete"
}

ensure_verdaccio() {
  [ -f "$VERDACCIO_DIR/.complete" ] && return
  command -v npm >/dev/null || die "the npm mirror needs npm (apt-get install npm, or the machine's Node.js)"
  log "mirror: installing verdaccio $VERDACCIO_VERSION into $VERDACCIO_DIR"
  rm -rf "$VERDACCIO_DIR.tmp" && mkdir -p "$VERDACCIO_DIR.tmp"
  # verdaccio-audit asks for node-fetch by the dist-tag `cjs`, which not every registry
  # serves: pin the version that tag names. (Nothing here uses the audit middleware.)
  cat > "$VERDACCIO_DIR.tmp/package.json" <<EOF
{"name": "codeplane-mirror-verdaccio", "private": true,
 "dependencies": {"verdaccio": "$VERDACCIO_VERSION"}, "overrides": {"node-fetch": "^2.7.0"}}
EOF
  retry "npm install verdaccio" npm install --prefix "$VERDACCIO_DIR.tmp" --omit=dev --no-audit --no-fund \
    --loglevel=error --ignore-scripts --fetch-retries 4 || die "could not install verdaccio from the npm registry"
  touch "$VERDACCIO_DIR.tmp/.complete"
  rm -rf "$VERDACCIO_DIR" && mv "$VERDACCIO_DIR.tmp" "$VERDACCIO_DIR"
}

# The Go proxy's server: Debian's nginx (deps.sh installs it), serving files only.
nginx_bin() {
  local n
  for n in "$(command -v nginx 2>/dev/null)" /usr/sbin/nginx; do [ -x "$n" ] && { echo "$n"; return; }; done
  die "the Go module proxy is served by nginx: apt-get install nginx"
}

# go_cmd <dir> <modcache> <goproxy> <gosumdb> <go args...>: the machine's go in <dir>, with
# the fill's settings alone (none of the user's go env file, GOPRIVATE, GONOSUMDB, ...);
# GOFLAGS -mod=mod unless GO_CMD_FLAGS says otherwise.
go_cmd() {
  local dir="$1" cache="$2" proxy="$3" sumdb="$4"; shift 4
  (cd "$dir" && env -u GOPRIVATE -u GONOPROXY -u GONOSUMDB -u GONOSUMCHECK -u GOINSECURE -u GOFLAGS \
    PATH="/usr/local/go/bin:$PATH" GOENV=off GOWORK=off GOTOOLCHAIN=local GOFLAGS="${GO_CMD_FLAGS:--mod=mod} -modcacherw" \
    GOPROXY="$proxy" GOSUMDB="$sumdb" GOMODCACHE="$cache" GOPATH="$cache/.gopath" GOCACHE="$cache/.gocache" \
    go "$@")
}

# The proxy the fill downloads from: the machine's GOPROXY without "direct" or "off"
# (a fill never fetches from version control), else Go's own.
go_uplink() {
  local p="${MIRROR_GO_UPLINK:-}" e parts out=()
  if [ -z "$p" ]; then
    p="$(PATH="/usr/local/go/bin:$PATH" go env GOPROXY 2>/dev/null || true)"
    IFS=',|' read -r -a parts <<< "$p"
    for e in "${parts[@]}"; do case "$e" in ""|direct|off) ;; *) out+=("$e") ;; esac; done
    p="$(IFS=,; echo "${out[*]}")"
  fi
  echo "${p:-https://proxy.golang.org}"
}

# --- fill -------------------------------------------------------------------------------------
fill_pypi() {
  local dest; dest="$(pypi_dir)"
  [ -d "$dest" ] && { log "mirror: PyPI cached ($dest)"; return; }
  local t0=$SECONDS tmp="$MIRROR_CACHE/.tmp-${dest##*/}-$$" v py
  mkdir -p "$tmp"
  for v in $MIRROR_PYTHONS; do
    if py="$(python_for "$v")"; then
      log "mirror: PyPI: downloading for CPython $v with $py"
    else
      py=python3
      log "mirror: PyPI: downloading for CPython $v with $(python3 --version) (no python$v here: dependencies' markers are read as $(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')'s)"
    fi
    # --find-links from the environment would mix local files into the mirror
    retry "pip download (CPython $v)" env -u PIP_FIND_LINKS "$py" -m pip download --quiet --disable-pip-version-check \
      --no-input --retries 5 --timeout 60 --dest "$tmp" --only-binary=:all: --implementation cp \
      --python-version "$v" --abi "cp${v/./}" "${PLATFORMS[@]}" -r "$MIRROR_DIR/pypi.txt" \
      || { rm -rf "$tmp"; die "mirror: pip download for CPython $v failed (PyPI unreachable, or a package of hack/cluster/mirror/pypi.txt has no wheel for it)"; }
  done
  # Where an interpreter of a version is here, prove the index is complete for it:
  # pip resolves the whole list from these files alone.
  for v in $MIRROR_PYTHONS; do
    py="$(python_for "$v")" || continue
    env -u PIP_FIND_LINKS "$py" -m pip install --quiet --disable-pip-version-check --dry-run --ignore-installed \
      --no-index --find-links "$tmp" -r "$MIRROR_DIR/pypi.txt" >/dev/null \
      || { rm -rf "$tmp"; die "mirror: the downloaded files do not install for CPython $v on their own (see pip's message above)"; }
  done
  (cd "$tmp" && sha256sum -- * > "$tmp/.files.sha256")
  mv "$tmp" "$dest"
  log "mirror: PyPI filled in $((SECONDS - t0))s: $(find "$dest" -type f ! -name '.*' | wc -l) files, $(du -sh "$dest" | cut -f1) ($dest)"
}

fill_npm() {
  local dest; dest="$(npm_dir)"
  [ -d "$dest" ] && { log "mirror: npm cached ($dest)"; return; }
  ensure_verdaccio
  local t0=$SECONDS tmp="$MIRROR_CACHE/.tmp-${dest##*/}-$$" node port uplink pid specs
  node="$(node22)"
  uplink="${MIRROR_NPM_UPLINK:-$(npm config get registry 2>/dev/null || echo https://registry.npmjs.org/)}"
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  mkdir -p "$tmp/storage" "$tmp/work"
  # For the fill only: verdaccio with the real registry as its uplink, on loopback; npm
  # installs the list through it, and verdaccio keeps every tarball it fetched.
  cat > "$tmp/fill.yaml" <<EOF
storage: $tmp/storage
auth: {htpasswd: {file: $tmp/htpasswd, max_users: -1}}
uplinks:
  npmjs: {url: "$uplink", timeout: 60s, max_fails: 5, fail_timeout: 10s}
packages:
  '**': {access: \$all, publish: \$authenticated, proxy: npmjs}
log: {type: stdout, format: pretty, level: warn}
listen: 127.0.0.1:$port
EOF
  "$node" "$VERDACCIO_DIR/node_modules/verdaccio/bin/verdaccio" -c "$tmp/fill.yaml" > "$tmp/verdaccio.log" 2>&1 &
  pid=$!
  # shellcheck disable=SC2064 # the pid and path are fixed now
  trap "kill $pid 2>/dev/null; rm -rf '$tmp'" EXIT
  local i
  for i in $(seq 1 60); do
    curl -fsS --max-time 2 "http://127.0.0.1:$port/-/ping" >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null && [ "$i" != 60 ] || { cat "$tmp/verdaccio.log" >&2; die "mirror: verdaccio did not start for the fill"; }
    sleep 0.5
  done
  mapfile -t specs < <(list_entries "$MIRROR_DIR/npm.txt")
  log "mirror: npm: installing ${specs[*]} through verdaccio (uplink $uplink)"
  echo '{"name": "codeplane-mirror-fill", "private": true}' > "$tmp/work/package.json"
  echo "update-notifier=false" > "$tmp/work/.npmrc"
  # a cache of its own, so every tarball is fetched through verdaccio
  (cd "$tmp/work" && retry "npm install" npm install --registry "http://127.0.0.1:$port/" --cache "$tmp/npm-cache" \
      --userconfig "$tmp/work/.npmrc" --prefer-online --ignore-scripts --no-audit --no-fund --loglevel=error \
      --fetch-retries 4 --fetch-timeout 120000 "${specs[@]}") \
    || { tail -n 20 "$tmp/verdaccio.log" >&2; die "mirror: npm install through verdaccio failed (npm registry unreachable, or a spec of hack/cluster/mirror/npm.txt does not exist)"; }
  kill "$pid"; wait "$pid" 2>/dev/null || true
  trap - EXIT
  "$node" "$MIRROR_DIR/freeze-npm.mjs" "$tmp/storage" "$VERDACCIO_DIR" || { rm -rf "$tmp"; die "mirror: could not freeze the npm storage"; }
  local spec name
  for spec in "${specs[@]}"; do
    name="${spec%@*}"; [ -n "$name" ] || name="$spec"   # @scope/name@range -> @scope/name
    compgen -G "$tmp/storage/$name/*.tgz" >/dev/null || { rm -rf "$tmp"; die "mirror: $spec: no tarball after the fill"; }
  done
  rm -rf "$tmp/work" "$tmp/npm-cache" "$tmp/fill.yaml" "$tmp/htpasswd" "$tmp/verdaccio.log"
  mv "$tmp" "$dest"
  log "mirror: npm filled in $((SECONDS - t0))s: $(find "$dest/storage" -name '*.tgz' | wc -l) tarballs, $(du -sh "$dest" | cut -f1) ($dest)"
}

# Each module@version of go.txt is resolved on its own, in a module of its own that
# requires just it (so its build list is what a repository requiring exactly that
# version selects), and its whole build list downloaded: every .mod its module graph
# reads and every selected module's .zip. Checksums are verified while filling: each
# download is checked against the checksum database (GOSUMDB, sum.golang.org through
# the proxy, unless MIRROR_GO_SUMDB names another; never off). The cache's
# cache/download directory is then the proxy: the GOPROXY protocol is these files.
fill_go() {
  local dest; dest="$(go_dir)"
  [ -d "$dest" ] && { log "mirror: Go cached ($dest)"; return; }
  command -v go >/dev/null || [ -x /usr/local/go/bin/go ] || die "the Go module proxy is filled with go: install Go (docs/local-cluster.md)"
  local t0=$SECONDS tmp="$MIRROR_CACHE/.tmp-${dest##*/}-$$" uplink sumdb="${MIRROR_GO_SUMDB:-sum.golang.org}" specs spec i=0 w mods
  [ "$sumdb" = off ] && sumdb=sum.golang.org
  uplink="$(go_uplink)"
  mkdir -p "$tmp/modcache" "$tmp/work"
  # shellcheck disable=SC2064 # the path is fixed now
  trap "chmod -R u+w '$tmp' 2>/dev/null; rm -rf '$tmp'" EXIT
  mapfile -t specs < <(list_entries "$MIRROR_DIR/go.txt")
  log "mirror: Go: downloading ${specs[*]} and their build lists from $uplink (checksums: $sumdb)"
  for spec in "${specs[@]}"; do
    [[ "$spec" == *@v* ]] || die "mirror: hack/cluster/mirror/go.txt: '$spec' is not module@version"
    i=$((i + 1)); w="$tmp/work/$i"; mkdir -p "$w"
    go_cmd "$w" "$tmp/modcache" off off mod init codeplane.local/mirror-fill >/dev/null 2>&1
    # go's progress ("go: downloading ...") goes to a log, shown when a step fails
    retry "go get $spec" go_cmd "$w" "$tmp/modcache" "$uplink" "$sumdb" get "$spec" 2>>"$tmp/go.log" \
      || { tail -n 20 "$tmp/go.log" >&2; die "mirror: go get $spec failed (the Go module proxy unreachable, no such version, or it needs a newer Go than $(go_cmd "$w" "$tmp/modcache" off off env GOVERSION))"; }
    mapfile -t mods < <(go_cmd "$w" "$tmp/modcache" "$uplink" "$sumdb" list -m -f '{{if not .Main}}{{.Path}}@{{.Version}}{{end}}' all 2>>"$tmp/go.log" | grep -v '^$')
    [ "${#mods[@]}" -gt 0 ] || { tail -n 20 "$tmp/go.log" >&2; die "mirror: go list -m all found no build list for $spec"; }
    retry "go mod download ($spec)" go_cmd "$w" "$tmp/modcache" "$uplink" "$sumdb" mod download "${mods[@]}" 2>>"$tmp/go.log" \
      || { tail -n 20 "$tmp/go.log" >&2; die "mirror: go mod download of $spec's build list failed"; }
    printf '%s\n' "${mods[@]}" > "$w/build-list"
  done
  # The proxy: the download directory without the checksum database's tiles (GOSUMDB is
  # off where it is used; go.sum is what checks it there) and without go's own
  # bookkeeping (lock files, .ziphash), which is no part of the protocol.
  mv "$tmp/modcache/cache/download" "$tmp/proxy"
  rm -rf "$tmp/proxy/sumdb"
  find "$tmp/proxy" \( -name '*.lock' -o -name '*.partial' -o -name '*.tmp' -o -name '*.ziphash' \) -type f -delete
  # Prove it complete: each module again, from these files alone (GOPROXY=file://...,off)
  # into an empty module cache, -mod=readonly against the go.sum the fill wrote (the
  # checksum database's hashes of every .mod its graph reads and every .zip its build
  # needs), as a repository's build will.
  for w in "$tmp"/work/*; do
    mapfile -t mods < "$w/build-list"
    { GO_CMD_FLAGS=-mod=readonly go_cmd "$w" "$tmp/verify" "file://$tmp/proxy,off" off list -m all \
        && GO_CMD_FLAGS=-mod=readonly go_cmd "$w" "$tmp/verify" "file://$tmp/proxy,off" off mod download "${mods[@]}"; } >/dev/null 2>"$w/verify.err" \
      || { cat "$w/verify.err" >&2; die "mirror: the Go proxy's files do not serve ${mods[0]:-$w}'s build list on their own (above)"; }
  done
  mkdir -p "$tmp/dest" && mv "$tmp/proxy" "$tmp/dest/proxy"
  (cd "$tmp/dest/proxy" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > "$tmp/dest/.files.sha256"
  mv "$tmp/dest" "$dest"
  chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"
  trap - EXIT
  log "mirror: Go filled in $((SECONDS - t0))s: $(find "$dest/proxy" -name '*.zip' | wc -l) module zips, $(du -sh "$dest" | cut -f1) ($dest)"
}

fill() {
  mkdir -p "$MIRROR_CACHE"
  # One fill at a time (cluster-up and a test may start together); leftovers of an
  # interrupted fill are removed under the lock.
  exec 8>"$MIRROR_CACHE/.lock"
  flock 8
  rm -rf "$MIRROR_CACHE"/.tmp-*
  case "${1:-all}" in
    pypi) ensure_pypiserver; fill_pypi ;;
    npm) fill_npm ;;
    go) nginx_bin >/dev/null; fill_go ;;
    all) ensure_pypiserver; nginx_bin >/dev/null; fill_pypi; fill_npm; fill_go ;;
    *) die "usage: mirror.sh fill [pypi|npm|go]" ;;
  esac
}

# --- serve --------------------------------------------------------------------------------------
serve() {
  [ $# -eq 4 ] || die "usage: mirror.sh serve pypi|npm|go ADDR PORT STATE_DIR"
  local kind="$1" addr="$2" port="$3" state="$4" dir
  dir="$("$0" path "$kind")" || die "mirror: $kind is not filled for the current list: run 'hack/cluster/mirror.sh fill' (needs the registries once)"
  mkdir -p "$state"
  case "$kind" in
    pypi)
      [ -f "$PYPISERVER_VENV/.complete" ] || die "mirror: pypiserver is not installed: run 'hack/cluster/mirror.sh fill'"
      # served through a link under STATE_DIR, so the process names it (cluster-up finds its own by that)
      ln -sfn "$dir" "$state/pypi"
      # --disable-fallback: a package not here is a 404, never a redirect to pypi.org.
      # --server auto picks waitress (installed beside it): threads, unlike wsgiref.
      # Uploads need a password file; there is none, so nobody can upload.
      exec "$PYPISERVER_VENV/bin/pypi-server" run --server auto --interface "$addr" --port "$port" \
        --disable-fallback --hash-algo sha256 --health-endpoint /health -v "$state/pypi" ;;
    npm)
      [ -f "$VERDACCIO_DIR/.complete" ] || die "mirror: verdaccio is not installed: run 'hack/cluster/mirror.sh fill'"
      # No uplinks and no proxy: what is not in the storage is a 404. Nobody can add a
      # user (max_users -1), so nobody can publish. verdaccio sets its process title to
      # web.title, which can replace its command line: naming the config there keeps
      # STATE_DIR in it either way, where cluster-up recognises its own processes.
      cat > "$state/verdaccio.yaml" <<EOF
# generated by hack/cluster/mirror.sh: serves $dir, nothing else
storage: $dir/storage
auth: {htpasswd: {file: $state/htpasswd, max_users: -1}}
uplinks: {}
packages:
  '**': {access: \$all, publish: \$authenticated}
web: {enable: false, title: "verdaccio -c $state/verdaccio.yaml"}
log: {type: stdout, format: pretty, level: http}
listen: $addr:$port
EOF
      exec "$(node22)" "$VERDACCIO_DIR/node_modules/verdaccio/bin/verdaccio" -c "$state/verdaccio.yaml" ;;
    go)
      # nginx in one process (no master and workers: the pid cluster-up keeps is the server,
      # and nothing outlives it), in the foreground, serving the proxy's files and nothing
      # else: no directory listings, no proxying, a 404 for any module not here (so a
      # client's GOPROXY=<this>,off stops there). /health answers cluster-up's check.
      # As root it stays root: the cache is under root's home, which nginx's usual
      # unprivileged user cannot read. Its temporary files go under STATE_DIR.
      local nginx user=""; nginx="$(nginx_bin)"
      [ "$(id -u)" = 0 ] && user="user root root;"
      mkdir -p "$state/go-nginx"
      ln -sfn "$dir/proxy" "$state/go-proxy"
      cat > "$state/go-nginx.conf" <<EOF
# generated by hack/cluster/mirror.sh: serves $dir/proxy, nothing else
$user
daemon off;
master_process off;
worker_processes 1;
pid $state/go-nginx/nginx.pid;
error_log stderr warn;
events { worker_connections 512; }
http {
  access_log /dev/stdout;
  client_body_temp_path $state/go-nginx/body;
  proxy_temp_path $state/go-nginx/proxy;
  fastcgi_temp_path $state/go-nginx/fastcgi;
  uwsgi_temp_path $state/go-nginx/uwsgi;
  scgi_temp_path $state/go-nginx/scgi;
  types { application/json info; text/plain mod list; application/zip zip; }
  default_type application/octet-stream;
  sendfile on;
  server_tokens off;
  server {
    listen $addr:$port;
    root $state/go-proxy;
    autoindex off;
    location = /health { default_type text/plain; return 200 "ok\n"; }
    location / { limit_except GET { deny all; } try_files \$uri =404; }
  }
}
EOF
      exec "$nginx" -e stderr -p "$state/go-nginx/" -c "$state/go-nginx.conf" ;;
    *) die "usage: mirror.sh serve pypi|npm|go ADDR PORT STATE_DIR" ;;
  esac
}

# --- what runs need -------------------------------------------------------------------------------
# PIP_TRUSTED_HOST: pip refuses a plain-http index on any host but localhost without it.
# Both spellings of npm's variable: npm reads either, pnpm and yarn the lower-case one.
# GOPROXY=<proxy>,off: a module the proxy does not hold is an error, never a fetch from
# version control. GOSUMDB=off: the checksum database is not reachable from builds; a
# repository's go.sum is still checked for every module it lists (that check does not
# depend on GOSUMDB), and what the proxy holds was checked against the database when it
# was filled. (codeplane sets GOTOOLCHAIN=local and GOFLAGS=-modcacherw itself.)
preprocess_env_json() {
  local host="$1" pypi="http://$1:$MIRROR_PYPI_PORT/simple/" npm="http://$1:$MIRROR_NPM_PORT/" go="http://$1:$MIRROR_GO_PORT"
  printf '{"PIP_INDEX_URL":"%s","PIP_TRUSTED_HOST":"%s","UV_INDEX_URL":"%s","NPM_CONFIG_REGISTRY":"%s","npm_config_registry":"%s","GOPROXY":"%s,off","GOSUMDB":"off"}' \
    "$pypi" "$host" "$pypi" "$npm" "$npm" "$go"
}
egress_allow() { echo "$1/32@$MIRROR_PYPI_PORT,$1/32@$MIRROR_NPM_PORT,$1/32@$MIRROR_GO_PORT"; }

env_cmd() {
  local json=0
  [ "${1:-}" = --json ] && { json=1; shift; }
  local host="${1:-$POD_GATEWAY}"
  if [ "$json" = 1 ]; then
    printf '{"pypi":"http://%s:%s/simple/","npm":"http://%s:%s/","go":"http://%s:%s","egressAllow":"%s","preprocessEnv":%s}\n' \
      "$host" "$MIRROR_PYPI_PORT" "$host" "$MIRROR_NPM_PORT" "$host" "$MIRROR_GO_PORT" "$(egress_allow "$host")" "$(preprocess_env_json "$host")"
  else
    # single quotes: the JSON has none
    printf '[ -n "${CODEPLANE_RUN_EGRESS_ALLOW:-}" ] || export CODEPLANE_RUN_EGRESS_ALLOW='"'%s'"'\n' "$(egress_allow "$host")"
    printf '[ -n "${CODEPLANE_RUN_PREPROCESS_ENV:-}" ] || export CODEPLANE_RUN_PREPROCESS_ENV='"'%s'"'\n' "$(preprocess_env_json "$host")"
  fi
}

case "${1:-}" in
  fill) shift; fill "$@" ;;
  path)
    case "${2:-}" in pypi) d="$(pypi_dir)" ;; npm) d="$(npm_dir)" ;; go) d="$(go_dir)" ;; *) die "usage: mirror.sh path pypi|npm|go" ;; esac
    [ -d "$d" ] || exit 1
    echo "$d" ;;
  serve) shift; serve "$@" ;;
  env) shift; env_cmd "$@" ;;
  *) die "usage: mirror.sh fill [pypi|npm|go] | path pypi|npm|go | serve pypi|npm|go ADDR PORT STATE_DIR | env [--json] [HOST]" ;;
esac
