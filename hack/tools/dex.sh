#!/usr/bin/env bash
# Build Dex (the OpenID Connect provider the OIDC sign-in tests run against)
# from the Go module proxy into the cache, keyed by version, and print the
# binary's path; only the first run compiles (a few minutes on 2 cores). Used
# by test/oauth/oidc.test.ts.
#
#   hack/tools/dex.sh             # builds if needed, prints .../dex/<version>/bin/dex
#
# Dex's go.mod points its api/v2 module at a sibling folder (a replace
# directive), which `go install module@version` refuses, and its v2 tags are
# not valid versions of the module path github.com/dexidp/dex; so the pinned
# release is fetched by its commit's pseudo-version, the replace is dropped
# for the published api/v2 module of the same release, and the command is
# built from that copy. CGO_ENABLED=0: the tests use Dex's in-memory storage,
# so the cgo-only SQLite driver is left out.
set -euo pipefail

source "$(dirname "$0")/../cluster/lib.sh"
DEX_VERSION="${DEX_VERSION:-v2.45.1}"
# The release's commit as a Go pseudo-version, and the api/v2 module it requires.
DEX_MODULE_VERSION="${DEX_MODULE_VERSION:-v0.0.0-20260303133905-11d2eeb52b42}"
DEX_BIN="$CACHE_DIR/dex/$DEX_VERSION/bin"

if [ -x "$DEX_BIN/dex" ]; then echo "$DEX_BIN/dex"; exit 0; fi

go_env
command -v go >/dev/null || die "Go not found (expected /usr/local/go/bin/go)"

mkdir -p "$CACHE_DIR/dex/$DEX_VERSION"
exec 9>"$CACHE_DIR/dex/$DEX_VERSION/.lock"
flock 9
if [ -x "$DEX_BIN/dex" ]; then echo "$DEX_BIN/dex"; exit 0; fi

log "dex $DEX_VERSION: resolving modules"
dir="$(go mod download -json "github.com/dexidp/dex@$DEX_MODULE_VERSION" | sed -nE 's/^\s*"Dir": "(.*)",?$/\1/p')"
[ -f "$dir/go.mod" ] || die "could not download github.com/dexidp/dex@$DEX_MODULE_VERSION from the module proxy"
src="$CACHE_DIR/dex/$DEX_VERSION/src"
rm -rf "$src" && cp -r "$dir" "$src" && chmod -R u+w "$src"
(
  cd "$src"
  go mod edit -dropreplace github.com/dexidp/dex/api/v2
  api="$(go mod edit -json | sed -nE '/"Path": "github.com\/dexidp\/dex\/api\/v2"/{n;s/^\s*"Version": "(.*)",?$/\1/p}')"
  [ -n "$api" ] || die "no github.com/dexidp/dex/api/v2 requirement in Dex's go.mod"
  go mod download "github.com/dexidp/dex/api/v2@$api"
  log "dex $DEX_VERSION: compiling (api/v2 $api; first time: a few minutes)"
  rm -rf "$DEX_BIN.tmp" && mkdir -p "$DEX_BIN.tmp"
  CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X main.version=$DEX_VERSION" \
    -o "$DEX_BIN.tmp/dex" ./cmd/dex
) || die "dex build failed"
rm -rf "$DEX_BIN" && mv "$DEX_BIN.tmp" "$DEX_BIN"
rm -rf "$src"
log "dex $DEX_VERSION: built into $DEX_BIN"
echo "$DEX_BIN/dex"
