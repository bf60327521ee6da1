#!/usr/bin/env bash
# Show whether each component of the local cluster runs and is healthy.
source "$(dirname "$0")/lib.sh"
set +e
rc=0
check() { # check <name> <health command>
  local p; p="$(cat "$RUN_DIR/pids/$1.pid" 2>/dev/null)"
  local state="stopped"
  if [ -n "$p" ] && kill -0 "$p" 2>/dev/null && grep -qaF "$CLUSTER_DIR" "/proc/$p/cmdline" 2>/dev/null; then
    if eval "$2" >/dev/null 2>&1; then state="healthy (pid $p)"; else state="UNHEALTHY (pid $p)"; rc=1; fi
  else rc=1; fi
  printf '  %-24s %s   log: %s\n' "$1" "$state" "$LOG_DIR/$1.log"
}
CURL_API="curl -fsS --max-time 3 --cacert $PKI_DIR/ca.crt --cert $PKI_DIR/admin.crt --key $PKI_DIR/admin.key"
echo "codeplane local cluster (Kubernetes $K8S_VERSION, etcd $ETCD_VERSION), state in $CLUSTER_DIR"
check etcd "curl -fsS --max-time 2 http://127.0.0.1:$ETCD_PORT/health"
check kube-apiserver "$CURL_API https://127.0.0.1:$APISERVER_PORT/readyz"
check kube-controller-manager "curl -fsSk --max-time 2 https://127.0.0.1:$KCM_PORT/healthz"
check kube-scheduler "curl -fsSk --max-time 2 https://127.0.0.1:$SCHED_PORT/healthz"
check containerd "ctr -a $RUN_DIR/containerd.sock version"
check kubelet "curl -fsS --max-time 2 http://127.0.0.1:$KUBELET_HEALTHZ_PORT/healthz"
check kube-router "curl -fsS --max-time 2 http://127.0.0.1:$KUBE_ROUTER_HEALTH_PORT/healthz && iptables -w -S INPUT | grep -q -- '-j KUBE-ROUTER-INPUT'"
check pod-gate "iptables -w -t mangle -S CODEPLANE-POD-GATE"
check apiserver-relay "timeout 2 bash -c '</dev/tcp/$POD_GATEWAY/$APISERVER_PORT'"
check kube-proxy "curl -fsS --max-time 2 http://127.0.0.1:$KUBE_PROXY_HEALTHZ_PORT/healthz"
check git-daemon "timeout 2 bash -c '</dev/tcp/$POD_GATEWAY/$GIT_PORT'"
check mirror-pypi "curl -fsS --max-time 2 http://$POD_GATEWAY:$MIRROR_PYPI_PORT/health"
check mirror-npm "curl -fsS --max-time 2 http://$POD_GATEWAY:$MIRROR_NPM_PORT/-/ping"
check mirror-go "curl -fsS --max-time 2 http://$POD_GATEWAY:$MIRROR_GO_PORT/health"
dns="$("$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG_OUT" --request-timeout 5s -n kube-system get deployment coredns -o 'jsonpath={.status.readyReplicas}' 2>/dev/null)"
if [ "$dns" = 1 ]; then printf '  %-24s %s\n' "cluster DNS (CoreDNS)" "ready ($DNS_SERVICE_IP, kubectl -n kube-system logs deploy/coredns)"
else printf '  %-24s %s\n' "cluster DNS (CoreDNS)" "NOT READY (kubectl -n kube-system get pods -l k8s-app=kube-dns)"; rc=1; fi
if [ "$rc" = 0 ]; then
  "$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG_OUT" get nodes -o wide
  echo "KUBECONFIG=$KUBECONFIG_OUT   git://$POD_GATEWAY/<name>"
  echo "package mirror: http://$POD_GATEWAY:$MIRROR_PYPI_PORT/simple/ (PyPI)   http://$POD_GATEWAY:$MIRROR_NPM_PORT/ (npm)   http://$POD_GATEWAY:$MIRROR_GO_PORT (GOPROXY)"
else
  echo "cluster is not (fully) up: run 'make cluster-up'"
fi
exit $rc
