#!/usr/bin/env bash
# The kind path, for machines with Docker: same end state as cluster-up (one
# node, feature gate PodLogsQuerySplitStreams, kubeconfig at .cluster/kubeconfig,
# images codeplane:dev and the catalog images, codeplane-runner:dev and the
# others of images/*/image.json, loaded into the node).
# usage: kind.sh up|down [cluster name]
source "$(dirname "$0")/lib.sh"
name="${2:-codeplane}"
command -v kind >/dev/null || die "kind not found (https://kind.sigs.k8s.io); or use 'make cluster-up' without Docker"
command -v docker >/dev/null || die "docker not found; use 'make cluster-up' instead"
case "${1:-}" in
  up)
    mkdir -p "$CLUSTER_DIR"
    if ! kind get clusters 2>/dev/null | grep -qx "$name"; then
      kind create cluster --name "$name" --config "$HACK_DIR/kind.yaml" --kubeconfig "$KUBECONFIG_OUT" --wait 120s
    else
      kind export kubeconfig --name "$name" --kubeconfig "$KUBECONFIG_OUT"
    fi
    docker build -t "$RUNNER_IMAGE" "$REPO_ROOT/images/runner"
    docker build -t "$APP_IMAGE" "$REPO_ROOT"
    built=("$RUNNER_IMAGE" "$APP_IMAGE")
    # the other catalog images (images/<name>/Dockerfile, built from images/: they read the runner's recipe)
    for image in $(node "$HACK_DIR/catalog.mjs" --names); do
      [ "$image" = runner ] && continue
      tag="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["image"])' "$REPO_ROOT/images/$image/image.json")"
      docker build -f "$REPO_ROOT/images/$image/Dockerfile" -t "$tag" "$REPO_ROOT/images"
      built+=("$tag")
    done
    kind load docker-image --name "$name" "${built[@]}"
    log "kind cluster $name ready; KUBECONFIG=$KUBECONFIG_OUT"
    ;;
  down)
    kind delete cluster --name "$name" --kubeconfig "$KUBECONFIG_OUT"
    ;;
  *) die "usage: kind.sh up|down [name]" ;;
esac
