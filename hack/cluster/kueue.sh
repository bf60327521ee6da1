#!/usr/bin/env bash
# Kueue on the local cluster (make kueue; docs/local-cluster.md, docs/operators/limits.md):
# its controller manager built from the Go module proxy (build-k8s.sh kueue, cached
# under ~/.cache/codeplane/kueue/<version>), an image of it made without Docker
# (images.sh kueue), and its CRDs, RBAC, webhooks and Deployment rendered from
# Kueue's own chart in the module source with hack/cluster/kueue-values.yaml.
#
# usage: kueue.sh [install|manifests|uninstall]
#   install    build (or reuse) everything and apply it to the cluster (KUBECONFIG, else .cluster/kubeconfig)
#   manifests  print the rendered manifests only (no cluster needed)
#   uninstall  delete what install applied (Workloads, queues and CRDs too)
source "$(dirname "$0")/lib.sh"

NAMESPACE=kueue-system
KUBECONFIG="${KUBECONFIG:-$CLUSTER_DIR/kubeconfig}"
KUBECTL=("$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG")

manifests() {
  "$HACK_DIR/build-k8s.sh" kueue >&2
  local src helm
  src="$("$HACK_DIR/build-k8s.sh" kueue-source)"
  [ -d "$src/charts/kueue" ] || die "no charts/kueue in the module source of sigs.k8s.io/kueue@$KUEUE_VERSION ($src)"
  helm="$("$REPO_ROOT/hack/tools/helm.sh")"
  # The chart's APIServices (the visibility API) are left out: kueue-values.yaml turns it off.
  "$helm" template kueue "$src/charts/kueue" --namespace "$NAMESPACE" \
    -f "$HACK_DIR/kueue-values.yaml" --set "controllerManager.manager.image.tag=$KUEUE_VERSION" |
    python3 -c '
import re, sys
docs = re.split(r"(?m)^---\s*$", sys.stdin.read())
keep = [d for d in docs if d.strip() and not re.search(r"(?m)^kind: APIService\s*$", d)]
print("\n---\n".join(d.strip("\n") for d in keep))'
}

install() {
  [ -x "${KUBECTL[0]}" ] || die "kubectl not built ($K8S_BIN): make cluster-build"
  "${KUBECTL[@]}" get --raw /readyz >/dev/null || die "the cluster at $KUBECONFIG does not answer"
  local t0=$SECONDS out="$CLUSTER_DIR/kueue"
  mkdir -p "$out"
  manifests > "$out/manifests.yaml"
  "$HACK_DIR/images.sh" kueue
  "${KUBECTL[@]}" create namespace "$NAMESPACE" --dry-run=client -o yaml | "${KUBECTL[@]}" apply -f - >/dev/null
  log "kueue $KUEUE_VERSION: applying $(grep -c '^kind:' "$out/manifests.yaml") objects"
  "${KUBECTL[@]}" apply --server-side --force-conflicts --field-manager codeplane-kueue -f "$out/manifests.yaml" >/dev/null
  "${KUBECTL[@]}" -n "$NAMESPACE" rollout status deployment/kueue-controller-manager --timeout 300s >&2 \
    || { "${KUBECTL[@]}" -n "$NAMESPACE" logs deployment/kueue-controller-manager --tail 30 >&2; die "kueue did not become ready"; }
  # Ready means its webhooks answer (their certificate is made at start): a dry-run create goes through them.
  local i
  for i in $(seq 1 60); do
    if "${KUBECTL[@]}" create --dry-run=server -f - >/dev/null 2>&1 <<<'{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ResourceFlavor","metadata":{"name":"codeplane-probe"}}'; then
      log "kueue $KUEUE_VERSION: ready in $((SECONDS - t0))s"
      return
    fi
    sleep 2
  done
  die "kueue's webhooks do not answer"
}

uninstall() {
  local out="$CLUSTER_DIR/kueue/manifests.yaml"
  [ -s "$out" ] || out=<(manifests)
  "${KUBECTL[@]}" delete --ignore-not-found --wait=false -f "$out" >/dev/null || true
  "${KUBECTL[@]}" delete namespace "$NAMESPACE" --ignore-not-found --wait=false >/dev/null
  log "kueue: uninstalled"
}

case "${1:-install}" in
  install) install ;;
  manifests) manifests ;;
  uninstall) uninstall ;;
  *) die "usage: kueue.sh [install|manifests|uninstall]" ;;
esac
