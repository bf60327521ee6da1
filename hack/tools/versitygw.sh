#!/usr/bin/env bash
# Build the Versity S3 Gateway (versitygw: a real S3 server over a plain
# directory, Apache-2.0) from the Go module proxy into the cache, keyed by
# version, and print the binary's path; only the first run compiles (about
# 1.5 minutes on 2 cores with a cold module cache, 45 MB binary). The object
# store's contract tests run S3Store against it on loopback
# (test/helpers/s3-server.ts); docs/decisions/0014-object-store.md says why
# this server and not MinIO or SeaweedFS.
#
#   hack/tools/versitygw.sh       # builds if needed, prints .../versitygw/<version>/bin/versitygw
set -euo pipefail

source "$(dirname "$0")/../cluster/lib.sh"
VERSITYGW_VERSION="${VERSITYGW_VERSION:-v1.8.0}"
VGW_BIN="$CACHE_DIR/versitygw/$VERSITYGW_VERSION/bin"

if [ -x "$VGW_BIN/versitygw" ]; then echo "$VGW_BIN/versitygw"; exit 0; fi

go_env
command -v go >/dev/null || die "Go not found (expected /usr/local/go/bin/go)"

mkdir -p "$CACHE_DIR/versitygw/$VERSITYGW_VERSION"
# Two test files building at once (vitest workers) build once.
exec 9>"$CACHE_DIR/versitygw/$VERSITYGW_VERSION/.lock"
flock 9
if [ -x "$VGW_BIN/versitygw" ]; then echo "$VGW_BIN/versitygw"; exit 0; fi

log "versitygw $VERSITYGW_VERSION: resolving and compiling (first time: 1-2 minutes)"
t0=$SECONDS
rm -rf "$VGW_BIN.tmp" && mkdir -p "$VGW_BIN.tmp"
# go install module@version builds the command exactly as released (its own
# go.mod and go.sum, no replace directives), into GOBIN.
GOBIN="$VGW_BIN.tmp" go install -trimpath \
  -ldflags "-s -w -X main.Version=$VERSITYGW_VERSION" \
  "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION" || die "versitygw build failed"
rm -rf "$VGW_BIN" && mv "$VGW_BIN.tmp" "$VGW_BIN"
log "versitygw $VERSITYGW_VERSION: built into $VGW_BIN in $((SECONDS - t0))s"
echo "$VGW_BIN/versitygw"
