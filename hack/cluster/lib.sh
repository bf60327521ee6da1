# shellcheck shell=bash
# Common settings for the local single-node cluster scripts (sourced, not executed).
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HACK_DIR="$REPO_ROOT/hack/cluster"

# Versions. K8S_VERSION is the newest v1.34 patch the Go module proxy serves
# (its /@v/list is incomplete; probe /@v/v1.34.N.info when bumping).
K8S_VERSION="${K8S_VERSION:-v1.34.12}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
CRICTL_VERSION="${CRICTL_VERSION:-v1.34.0}"
# NetworkPolicy enforcer: kube-router's firewall only (no routing, no service proxy).
# The Go module proxy serves few kube-router versions; v2.1.0 is one of them.
KUBE_ROUTER_VERSION="${KUBE_ROUTER_VERSION:-v2.1.0}"
# Cluster DNS: CoreDNS with only the plugins it needs here (no forwarding anywhere).
COREDNS_VERSION="${COREDNS_VERSION:-v1.15.0}"
# Kueue, the optional admission engine (make kueue; docs/operators/limits.md). The
# Go module proxy lists v0.17.0 only; it speaks the Kubernetes v0.35 API libraries.
KUEUE_VERSION="${KUEUE_VERSION:-v0.17.0}"

CACHE_DIR="${CODEPLANE_CACHE_DIR:-$HOME/.cache/codeplane}"
K8S_BIN="$CACHE_DIR/k8s/$K8S_VERSION/bin"
ETCD_BIN="$CACHE_DIR/etcd/$ETCD_VERSION/bin"
CRICTL_BIN="$CACHE_DIR/crictl/$CRICTL_VERSION/bin"
KUBE_ROUTER_BIN="$CACHE_DIR/kube-router/$KUBE_ROUTER_VERSION/bin"
COREDNS_BIN="$CACHE_DIR/coredns/$COREDNS_VERSION/bin"
KUEUE_BIN="$CACHE_DIR/kueue/$KUEUE_VERSION/bin"

CLUSTER_DIR="${CODEPLANE_CLUSTER_DIR:-$REPO_ROOT/.cluster}"
RUN_DIR="${CODEPLANE_RUN_DIR:-/run/codeplane-cluster}"
LOG_DIR="$CLUSTER_DIR/logs"
PKI_DIR="$CLUSTER_DIR/pki"
KUBECONFIG_OUT="$CLUSTER_DIR/kubeconfig"

APISERVER_PORT="${APISERVER_PORT:-6443}"
ETCD_PORT="${ETCD_PORT:-2379}"
ETCD_PEER_PORT="${ETCD_PEER_PORT:-2380}"
KCM_PORT="${KCM_PORT:-10257}"
SCHED_PORT="${SCHED_PORT:-10259}"
KUBELET_PORT="${KUBELET_PORT:-10250}"
KUBELET_HEALTHZ_PORT="${KUBELET_HEALTHZ_PORT:-10248}"
GIT_PORT="${GIT_PORT:-9418}"
KUBE_ROUTER_HEALTH_PORT="${KUBE_ROUTER_HEALTH_PORT:-20244}"
KUBE_PROXY_HEALTHZ_PORT="${KUBE_PROXY_HEALTHZ_PORT:-10256}"
KUBE_PROXY_METRICS_PORT="${KUBE_PROXY_METRICS_PORT:-10249}"
# The package mirror on the node (hack/cluster/mirror.sh): PyPI simple index, npm registry,
# Go module proxy (3143: apt-cacher-ng, often on a Debian developer's machine, has 3142).
MIRROR_PYPI_PORT="${MIRROR_PYPI_PORT:-3141}"
MIRROR_NPM_PORT="${MIRROR_NPM_PORT:-4873}"
MIRROR_GO_PORT="${MIRROR_GO_PORT:-3143}"

POD_CIDR="${POD_CIDR:-10.244.0.0/24}"
POD_GATEWAY="${POD_GATEWAY:-10.244.0.1}"
SERVICE_CIDR="${SERVICE_CIDR:-10.96.0.0/24}"
BRIDGE_NAME="${BRIDGE_NAME:-cp-br0}"
CNI_NETWORK_NAME="codeplane"
# the kube-dns Service's address: the 10th of the service range (kubeadm's choice)
DNS_SERVICE_IP="${DNS_SERVICE_IP:-$(python3 -c "import ipaddress,sys; print(ipaddress.ip_network(sys.argv[1])[10])" "$SERVICE_CIDR")}"
CLUSTER_DOMAIN="cluster.local"
NODE_NAME="${NODE_NAME:-codeplane-node}"
FEATURE_GATES="PodLogsQuerySplitStreams=true"

PAUSE_IMAGE="codeplane.local/pause:3.10"
COREDNS_IMAGE="codeplane.local/coredns:$COREDNS_VERSION"
KUEUE_IMAGE="codeplane.local/kueue:$KUEUE_VERSION"
RUNNER_IMAGE="codeplane-runner:dev"
APP_IMAGE="codeplane:dev"

log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

export GOTOOLCHAIN=local
go_env() {
  export PATH="/usr/local/go/bin:$PATH"
  export GOPATH="$CACHE_DIR/go"
  export GOMODCACHE="$CACHE_DIR/go/pkg/mod"
  export GOCACHE="$CACHE_DIR/go/build-cache"
  # Modules come from the Go module proxy (your GOPROXY, default Go's own).
  # The checksum database is not reachable from CI, so it is off unless you set GOSUMDB.
  export GOSUMDB="${GOSUMDB:-off}"
  export GOFLAGS="-mod=mod -p=${CODEPLANE_BUILD_JOBS:-2} -buildvcs=false"
  export CGO_ENABLED=0
}

need_root() { [ "$(id -u)" = 0 ] || die "this needs root (it runs containerd and kubelet); re-run with sudo"; }
