#!/usr/bin/env bash
# Build the Kubernetes control-plane/node binaries and etcd from the Go module
# proxy into the cache (keyed by version). Only the first run pays.
source "$(dirname "$0")/lib.sh"
go_env
command -v go >/dev/null || die "Go not found (expected /usr/local/go/bin/go)"

K8S_BINS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl kube-proxy)

build_k8s() {
  # only what is missing (kube-proxy came later: a cache with the others builds just it)
  local missing=()
  for b in "${K8S_BINS[@]}"; do [ -x "$K8S_BIN/$b" ] || missing+=("$b"); done
  if [ "${#missing[@]}" = 0 ]; then log "kubernetes $K8S_VERSION: cached in $K8S_BIN"; return; fi
  local mod="$CACHE_DIR/k8s/$K8S_VERSION/src"
  local staging="${K8S_VERSION/v1./v0.}"
  mkdir -p "$mod" "$K8S_BIN"
  log "kubernetes $K8S_VERSION: generating wrapper module in $mod (staging modules $staging)"
  {
    echo "module codeplane.local/k8s-build"
    echo
    echo "go 1.25.0"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    echo "replace ("
    for m in api apiextensions-apiserver apimachinery apiserver cli-runtime client-go \
      cloud-provider cluster-bootstrap code-generator component-base component-helpers \
      controller-manager cri-api cri-client csi-translation-lib dynamic-resource-allocation \
      endpointslice externaljwt kms kube-aggregator kube-controller-manager kube-proxy \
      kube-scheduler kubectl kubelet metrics mount-utils pod-security-admission \
      sample-apiserver sample-cli-plugin sample-controller; do
      echo "	k8s.io/$m => k8s.io/$m $staging"
    done
    echo ")"
  } > "$mod/go.mod"
  local pkgs=()
  for b in "${missing[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
  log "kubernetes $K8S_VERSION: resolving modules (downloads ~300 MB the first time)"
  (cd "$mod" && go get "${pkgs[@]/%/@$K8S_VERSION}")
  local major minor
  major="$(echo "$K8S_VERSION" | sed -E 's/^v([0-9]+)\..*/\1/')"
  minor="$(echo "$K8S_VERSION" | sed -E 's/^v[0-9]+\.([0-9]+)\..*/\1/')"
  local date; date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  local ld="-s -w"
  for p in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    ld+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=$major -X $p.gitMinor=$minor"
    ld+=" -X $p.gitTreeState=clean -X $p.buildDate=$date -X $p.gitCommit=module-proxy"
  done
  log "kubernetes $K8S_VERSION: compiling ${missing[*]} (all of them the first time: ~6 min on 2 cores)"
  local t0=$SECONDS
  (cd "$mod" && go build -trimpath -ldflags "$ld" -o "$K8S_BIN.tmp/" "${pkgs[@]}") &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do sleep 30; kill -0 "$pid" 2>/dev/null && log "  ...still compiling kubernetes ($((SECONDS - t0))s)"; done
  wait "$pid" || die "kubernetes build failed"
  mv "$K8S_BIN.tmp/"* "$K8S_BIN/" && rmdir "$K8S_BIN.tmp"
  log "kubernetes $K8S_VERSION: built in $((SECONDS - t0))s"
}

build_etcd() {
  if [ -x "$ETCD_BIN/etcd" ]; then log "etcd $ETCD_VERSION: cached in $ETCD_BIN"; return; fi
  local mod="$CACHE_DIR/etcd/$ETCD_VERSION/src"
  mkdir -p "$mod" "$ETCD_BIN"
  printf 'module codeplane.local/etcd-build\n\ngo 1.24\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" > "$mod/go.mod"
  log "etcd $ETCD_VERSION: resolving and compiling"
  (cd "$mod" && go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" \
    && go build -trimpath -ldflags "-s -w" -o "$ETCD_BIN/etcd.tmp" go.etcd.io/etcd/server/v3) \
    || die "etcd build failed"
  mv "$ETCD_BIN/etcd.tmp" "$ETCD_BIN/etcd"
  log "etcd $ETCD_VERSION: built"
}

build_crictl() {
  if [ -x "$CRICTL_BIN/crictl" ]; then log "crictl $CRICTL_VERSION: cached in $CRICTL_BIN"; return; fi
  local mod="$CACHE_DIR/crictl/$CRICTL_VERSION/src"
  mkdir -p "$mod" "$CRICTL_BIN"
  printf 'module codeplane.local/crictl-build\n\ngo 1.24\n\nrequire sigs.k8s.io/cri-tools %s\n' "$CRICTL_VERSION" > "$mod/go.mod"
  log "crictl $CRICTL_VERSION: resolving and compiling"
  (cd "$mod" && go get "sigs.k8s.io/cri-tools/cmd/crictl@$CRICTL_VERSION" \
    && go build -trimpath -ldflags "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=$CRICTL_VERSION" \
      -o "$CRICTL_BIN/crictl.tmp" sigs.k8s.io/cri-tools/cmd/crictl) || die "crictl build failed"
  mv "$CRICTL_BIN/crictl.tmp" "$CRICTL_BIN/crictl"
  log "crictl $CRICTL_VERSION: built"
}

# kube-router, used only as the NetworkPolicy enforcer (docs/local-cluster.md)
build_kube_router() {
  if [ -x "$KUBE_ROUTER_BIN/kube-router" ]; then log "kube-router $KUBE_ROUTER_VERSION: cached in $KUBE_ROUTER_BIN"; return; fi
  local mod="$CACHE_DIR/kube-router/$KUBE_ROUTER_VERSION/src"
  local pkg=github.com/cloudnativelabs/kube-router/v2
  mkdir -p "$mod" "$KUBE_ROUTER_BIN"
  printf 'module codeplane.local/kube-router-build\n\ngo 1.21\n\nrequire %s %s\n' "$pkg" "$KUBE_ROUTER_VERSION" > "$mod/go.mod"
  log "kube-router $KUBE_ROUTER_VERSION: resolving and compiling"
  local t0=$SECONDS
  (cd "$mod" && go get "$pkg/cmd/kube-router@$KUBE_ROUTER_VERSION" \
    && go build -trimpath -ldflags "-s -w -X $pkg/pkg/version.Version=$KUBE_ROUTER_VERSION -X $pkg/pkg/version.BuildDate=module-proxy" \
      -o "$KUBE_ROUTER_BIN/kube-router.tmp" "$pkg/cmd/kube-router") || die "kube-router build failed"
  mv "$KUBE_ROUTER_BIN/kube-router.tmp" "$KUBE_ROUTER_BIN/kube-router"
  log "kube-router $KUBE_ROUTER_VERSION: built in $((SECONDS - t0))s"
}

# CoreDNS for cluster DNS, with a main of ours that compiles in only the plugins the
# cluster's Corefile uses (the stock binary links every plugin: cloud SDKs and all).
# There is no forward plugin: names outside the cluster cannot be sent anywhere.
COREDNS_PLUGINS=(ready health errors log loadbalance cache template kubernetes)
build_coredns() {
  if [ -x "$COREDNS_BIN/coredns" ]; then log "coredns $COREDNS_VERSION: cached in $COREDNS_BIN"; return; fi
  local mod="$CACHE_DIR/coredns/$COREDNS_VERSION/src"
  local pkg=github.com/coredns/coredns
  mkdir -p "$mod" "$COREDNS_BIN"
  printf 'module codeplane.local/coredns-build\n\ngo 1.26.0\n\nrequire %s %s\n' "$pkg" "$COREDNS_VERSION" > "$mod/go.mod"
  {
    echo "// Generated by hack/cluster/build-k8s.sh: CoreDNS with the plugins ${COREDNS_PLUGINS[*]}."
    echo "package main"
    echo
    echo "import ("
    echo "	\"$pkg/core/dnsserver\""
    echo "	\"$pkg/coremain\""
    for p in "${COREDNS_PLUGINS[@]}"; do echo "	_ \"$pkg/plugin/$p\""; done
    echo ")"
    echo
    echo "func main() {"
    # execution order: the stock order (core/dnsserver/zdirectives.go) restricted to ours
    printf '	if err := dnsserver.SetDirectives([]string{'
    printf '"%s", ' "${COREDNS_PLUGINS[@]}" | sed 's/, $//'
    echo '}); err != nil {'
    echo "		panic(err)"
    echo "	}"
    echo "	coremain.Run()"
    echo "}"
  } > "$mod/main.go"
  log "coredns $COREDNS_VERSION: resolving and compiling (plugins: ${COREDNS_PLUGINS[*]})"
  local t0=$SECONDS
  (cd "$mod" && go get "$pkg@$COREDNS_VERSION" \
    && go build -trimpath -ldflags "-s -w -X $pkg/coremain.GitCommit=module-proxy" -o "$COREDNS_BIN/coredns.tmp" .) \
    || die "coredns build failed"
  mv "$COREDNS_BIN/coredns.tmp" "$COREDNS_BIN/coredns"
  log "coredns $COREDNS_VERSION: built in $((SECONDS - t0))s"
}

# Kueue's controller manager (cmd/kueue), the optional admission engine; its module
# source (charts/kueue: CRDs, RBAC, webhooks) is what hack/cluster/kueue.sh installs.
build_kueue() {
  if [ -x "$KUEUE_BIN/manager" ]; then log "kueue $KUEUE_VERSION: cached in $KUEUE_BIN"; return; fi
  local mod="$CACHE_DIR/kueue/$KUEUE_VERSION/src"
  local pkg=sigs.k8s.io/kueue
  mkdir -p "$mod" "$KUEUE_BIN"
  printf 'module codeplane.local/kueue-build\n\ngo 1.25.0\n\nrequire %s %s\n' "$pkg" "$KUEUE_VERSION" > "$mod/go.mod"
  log "kueue $KUEUE_VERSION: resolving and compiling (~10 min on 2 cores the first time)"
  local t0=$SECONDS
  (cd "$mod" && go get "$pkg/cmd/kueue@$KUEUE_VERSION" \
    && go build -trimpath -ldflags "-s -w -X $pkg/pkg/version.GitVersion=$KUEUE_VERSION -X $pkg/pkg/version.GitCommit=module-proxy" \
      -o "$KUEUE_BIN/manager.tmp" "$pkg/cmd/kueue") || die "kueue build failed"
  mv "$KUEUE_BIN/manager.tmp" "$KUEUE_BIN/manager"
  log "kueue $KUEUE_VERSION: built in $((SECONDS - t0))s"
}

# The directory of a module's source in the module cache (downloaded if missing).
module_dir() { go mod download -json "$1@$2" | sed -nE 's/^\s*"Dir": "(.*)",?$/\1/p'; }

case "${1:-all}" in
  k8s) build_k8s ;;
  etcd) build_etcd ;;
  crictl) build_crictl ;;
  kube-router) build_kube_router ;;
  coredns) build_coredns ;;
  kueue) build_kueue ;;
  kueue-source) go_env; module_dir sigs.k8s.io/kueue "$KUEUE_VERSION" ;;
  all) build_etcd; build_crictl; build_kube_router; build_coredns; build_k8s ;;
esac
