#!/bin/sh
# Install a Go toolchain module's tree as GOROOT, the same in both builds of
# codeplane-go:dev: images/go/Dockerfile (from what GOTOOLCHAIN=go<version>
# fetched) and hack/cluster/images.sh (from `go mod download -json
# golang.org/toolchain@v0.0.1-go<version>.linux-amd64`, its "Dir").
# The module cache keeps files read-only and without execute bits; the go
# command's own toolchain switch makes bin/ and pkg/tool/ executable the same way.
#   sh install-toolchain.sh <module dir> <GOROOT to create, e.g. /usr/local/go>
set -eu
[ -f "$1/bin/go" ] || { echo "install-toolchain.sh: $1 is no Go toolchain (no bin/go)" >&2; exit 1; }
cp -r "$1" "$2"
chmod -R u+w,go-w,a+rX "$2"
chmod a+x "$2"/bin/* "$2"/pkg/tool/*/*
"$2/bin/go" version
