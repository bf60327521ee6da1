#!/usr/bin/env bash
# Build Helm from the Go module proxy into the cache (keyed by version) and
# print the binary's path; only the first run compiles (a few minutes on 2
# cores). Used by the chart test (test/chart/) and `make chart-test`.
#
#   hack/tools/helm.sh            # builds if needed, prints .../helm/<version>/bin/helm
#   HELM_VERSION=v3.21.4 hack/tools/helm.sh
set -euo pipefail

# The cache, log/die and the Go environment are the cluster builds' own.
source "$(dirname "$0")/../cluster/lib.sh"
HELM_VERSION="${HELM_VERSION:-v3.22.0}"
HELM_BIN="$CACHE_DIR/helm/$HELM_VERSION/bin"

if [ -x "$HELM_BIN/helm" ]; then echo "$HELM_BIN/helm"; exit 0; fi

go_env
command -v go >/dev/null || die "Go not found (expected /usr/local/go/bin/go)"

# One build at a time per version (two test runs may start together).
mkdir -p "$CACHE_DIR/helm/$HELM_VERSION"
exec 9>"$CACHE_DIR/helm/$HELM_VERSION/.lock"
flock 9
if [ -x "$HELM_BIN/helm" ]; then echo "$HELM_BIN/helm"; exit 0; fi

log "helm $HELM_VERSION: resolving modules"
gomod="$(go mod download -json "helm.sh/helm/v3@$HELM_VERSION" | sed -nE 's/^\s*"GoMod": "(.*)",?$/\1/p')"
[ -f "$gomod" ] || die "could not download helm.sh/helm/v3@$HELM_VERSION from the module proxy"
# Helm's Makefile stamps its version and the Kubernetes version its client
# libraries speak (the default for `helm template` and `helm lint`); so do we.
kube="$(sed -nE 's/^\s*k8s\.io\/client-go v0\.([0-9]+)\..*/\1/p' "$gomod" | head -1)"
[ -n "$kube" ] || die "no k8s.io/client-go in $gomod"
ld="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  ld+=" -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$kube"
done
log "helm $HELM_VERSION: compiling (Kubernetes 1.$kube libraries; first time: a few minutes)"
rm -rf "$HELM_BIN.tmp"
GOBIN="$HELM_BIN.tmp" go install -trimpath -ldflags "$ld" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" || die "helm build failed"
rm -rf "$HELM_BIN" && mv "$HELM_BIN.tmp" "$HELM_BIN"
log "helm $HELM_VERSION: built into $HELM_BIN"
echo "$HELM_BIN/helm"
