#!/usr/bin/env bash
# Boot (or check) the local single-node Kubernetes cluster. Idempotent: healthy
# components are left alone, so a second run on a healthy cluster is quick.
#
# Components (all processes of this machine, logs in .cluster/logs/):
#   etcd, kube-apiserver, kube-controller-manager, kube-scheduler   (control plane)
#   containerd (own socket/root/state) + runc + bridge CNI, kubelet (node)
#   kube-router, firewall only: enforces NetworkPolicy               (network policy)
#   kube-proxy (iptables), CoreDNS as a pod behind the kube-dns Service (services, DNS)
#   git daemon on the bridge gateway (git://$POD_GATEWAY/NAME)       (fixtures)
#   pypiserver, verdaccio and nginx on the bridge gateway (mirror.sh) (package mirror)
source "$(dirname "$0")/lib.sh"
need_root
T0=$SECONDS

"$HACK_DIR/deps.sh"
"$HACK_DIR/build-k8s.sh" all

mkdir -p "$CLUSTER_DIR" "$LOG_DIR" "$RUN_DIR/pids" "$CLUSTER_DIR/bin"
for b in kubectl kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy; do ln -sfn "$K8S_BIN/$b" "$CLUSTER_DIR/bin/$b"; done
ln -sfn "$ETCD_BIN/etcd" "$CLUSTER_DIR/bin/etcd"
ln -sfn "$KUBE_ROUTER_BIN/kube-router" "$CLUSTER_DIR/bin/kube-router"
rm -f "$CLUSTER_DIR/bin/crictl"
printf '#!/bin/sh\nexec "%s" --config "%s" "$@"\n' "$CRICTL_BIN/crictl" "$RUN_DIR/crictl.yaml" > "$CLUSTER_DIR/bin/crictl"
chmod +x "$CLUSTER_DIR/bin/crictl"
KUBECTL=("$K8S_BIN/kubectl" --kubeconfig "$PKI_DIR/admin.kubeconfig")
CTR=(ctr -a "$RUN_DIR/containerd.sock")

"$HACK_DIR/pki.sh"

pidfile() { echo "$RUN_DIR/pids/$1.pid"; }
# alive <pid>: the process exists and is not a zombie.
alive() { kill -0 "$1" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
# running <name>: its pid file names a live process of ours (a reused pid is not)
running() { local p; p="$(cat "$(pidfile "$1")" 2>/dev/null)" && [ -n "$p" ] && alive "$p" \
  && grep -qaF "$CLUSTER_DIR" "/proc/$p/cmdline" 2>/dev/null; }

# fail <component>: name the component, show the tail of its log, exit non-zero.
fail() {
  log "FAILED: $1 did not become healthy. Last lines of $LOG_DIR/$1.log:"
  tail -n 25 "$LOG_DIR/$1.log" >&2 2>/dev/null || true
  die "$1 failed to start (full log: $LOG_DIR/$1.log; 'make cluster-down' cleans up)"
}

# restart_if_changed <name> <config file>: a running component whose generated
# config changed since it started is stopped, so start() starts it again.
restart_if_changed() {
  local sum; sum="$(sha256sum "$2" | cut -c1-64)"
  if running "$1" && [ "$(cat "$RUN_DIR/pids/$1.conf" 2>/dev/null)" != "$sum" ]; then
    log "$1: configuration changed, restarting"
    kill "$(cat "$(pidfile "$1")")" 2>/dev/null || true
    for _ in $(seq 1 20); do running "$1" || break; sleep 0.5; done
  fi
  echo "$sum" > "$RUN_DIR/pids/$1.conf"
}

# port_free <addr> <port>: nothing listens there
port_free() { ! timeout 1 bash -c "</dev/tcp/$1/$2" 2>/dev/null; }

# start <name> <health command> <ports "addr:port ..."> <argv...>
start() {
  local name="$1" health="$2" ports="$3"; shift 3
  if running "$name" && eval "$health" >/dev/null 2>&1; then log "$name: running"; return; fi
  if running "$name"; then
    log "$name: running but unhealthy, restarting"
    kill "$(cat "$(pidfile "$name")")" 2>/dev/null || true
    for _ in $(seq 1 20); do running "$name" || break; sleep 0.5; done
  fi
  local ap
  for ap in $ports; do
    # (a component just stopped for a restart may take a moment to let go of its port)
    for _ in $(seq 1 20); do port_free "${ap%:*}" "${ap##*:}" && break; sleep 0.5; done
    port_free "${ap%:*}" "${ap##*:}" || die "$name: $ap is already in use by another process ($(ss -Hltnp "sport = :${ap##*:}" 2>/dev/null | awk '{print $NF}' | head -1)); stop it or override the port (docs/local-cluster.md)"
  done
  [ -f "$LOG_DIR/$name.log" ] && mv -f "$LOG_DIR/$name.log" "$LOG_DIR/$name.log.1"
  log "$name: starting"
  setsid "$@" > "$LOG_DIR/$name.log" 2>&1 < /dev/null &
  local pid=$!
  echo "$pid" > "$(pidfile "$name")"
  local i
  for i in $(seq 1 "${START_TIMEOUT:-60}"); do
    if eval "$health" >/dev/null 2>&1; then log "$name: healthy (${i}s)"; return; fi
    # The process we just started, by its pid alone: until the forked shell has
    # exec'd the command, its cmdline is still this script's, and `running`
    # (which checks the cmdline against stale pid files) would call it dead.
    alive "$pid" || fail "$name"
    sleep 1
  done
  fail "$name"
}

CURL_API=(curl -fsS --max-time 3 --cacert "$PKI_DIR/ca.crt" --cert "$PKI_DIR/admin.crt" --key "$PKI_DIR/admin.key")

# --- network: the bridge exists before kubelet so the node IP is the gateway ------
if ! ip link show "$BRIDGE_NAME" >/dev/null 2>&1; then
  # Remember the iptables state before we (kubelet, CNI) touch it, for cluster-down.
  for t in filter nat mangle; do
    iptables-save -t "$t" > "$CLUSTER_DIR/iptables.v4.$t.before" 2>/dev/null || true
    ip6tables-save -t "$t" > "$CLUSTER_DIR/iptables.v6.$t.before" 2>/dev/null || true
  done
  ipset list -n > "$CLUSTER_DIR/ipset.before" 2>/dev/null || true
  log "network: creating bridge $BRIDGE_NAME $POD_GATEWAY/${POD_CIDR#*/}"
  ip link add "$BRIDGE_NAME" type bridge
  ip addr add "$POD_GATEWAY/${POD_CIDR#*/}" dev "$BRIDGE_NAME"
  ip link set "$BRIDGE_NAME" up
fi
# The gateway's MAC address must never change. A bridge whose address was not set takes the
# lowest address of its ports, so it changed each time a pod's veth joined or left (seen: three
# addresses in 40 s); a pod that had resolved 10.244.0.1 to the old one sent its packets to an
# address no port has any more, which the bridge floods to the pods and never delivers to the
# node, until the pod's ARP entry went stale and was probed again: its checkout could not connect
# to the node for 30-134 s. Setting the address (to the one it has) pins it: the kernel then keeps
# it whatever ports come and go (addr_assign_type 3, "set"). Also done for a bridge made before.
if [ "$(cat "/sys/class/net/$BRIDGE_NAME/addr_assign_type" 2>/dev/null)" != 3 ]; then
  ip link set "$BRIDGE_NAME" address "$(cat "/sys/class/net/$BRIDGE_NAME/address")"
  log "network: pinned $BRIDGE_NAME's address $(cat "/sys/class/net/$BRIDGE_NAME/address")"
fi
# ensure_rule <iptables|ip6tables> <table> <chain> <rule...>: add the rule unless it is there
# (at the end of the chain: the enforcer's jump stays first, see below)
ensure_rule() {
  local cmd="$1" table="$2" chain="$3"; shift 3
  "$cmd" -w -t "$table" -C "$chain" "$@" 2>/dev/null || "$cmd" -w -t "$table" -A "$chain" "$@"
}
# Pods reach the node and each other, nothing beyond (no masquerade, forwarding off the bridge dropped).
# The drop is in the mangle table, which netfilter runs before the filter table: in filter
# FORWARD the NetworkPolicy enforcer keeps its jump first and ACCEPTs the traffic a policy
# allows (or that no policy restricts), so a drop placed there would never be reached.
ensure_rule iptables mangle FORWARD -i "$BRIDGE_NAME" ! -o "$BRIDGE_NAME" -m comment --comment codeplane-cluster -j DROP
# (clusters booted before the enforcer existed had it in filter FORWARD)
while iptables -w -D FORWARD -i "$BRIDGE_NAME" ! -o "$BRIDGE_NAME" -m comment --comment codeplane-cluster -j DROP 2>/dev/null; do :; done
# Fail closed for pods the enforcer does not know yet. A pod's containers run before its IP
# reaches the API and the enforcer has made its chain (measured: ~0.5 s in which a pod under
# a deny-all policy reached the kubelet, ~0.3 s in which it reached other pods). Such a pod's
# first connection is dropped, so it waits for a TCP retransmission (1 s; a DNS lookup, for
# the resolver's retry: 5 s) instead of escaping its policy; replies to the node's own
# connections (kubelet probes) pass. (Holding the packets in an NFQUEUE instead does not
# work: kube-router's syncs replace the filter table, which drops every queued packet.)
# - to the node (INPUT): the enforcer ACCEPTs or REJECTs the traffic of every pod it knows,
#   so new connections from the bridge that come back to INPUT are from unknown pods.
ensure_rule iptables filter INPUT -i "$BRIDGE_NAME" -m conntrack ! --ctstate ESTABLISHED,RELATED \
  -m comment --comment "codeplane-cluster: pod not yet known to the NetworkPolicy enforcer" -j DROP
# - between pods (FORWARD): there the destination's chain alone accepts what its ingress
#   allows, so the gate runs first (mangle): CODEPLANE-POD-GATE RETURNs the pods the enforcer
#   has rules for (kept up to date by hack/cluster/pod-gate.sh) and drops the rest.
iptables -w -t mangle -N CODEPLANE-POD-GATE 2>/dev/null \
  && iptables -w -t mangle -A CODEPLANE-POD-GATE -m comment --comment "codeplane-cluster: pod not yet known to the NetworkPolicy enforcer" -j DROP
ensure_rule iptables mangle FORWARD -i "$BRIDGE_NAME" -o "$BRIDGE_NAME" -m conntrack ! --ctstate ESTABLISHED,RELATED -j CODEPLANE-POD-GATE
# The node's own connections to a Service address that kube-proxy has not translated (a new
# Service in the instant before its rules, or an address no Service has) are refused here
# instead of leaving by the default route: seen in the Helm e2e, a client's first connection
# to a new cluster IP went out eth0 to the host's gateway, was answered off the machine, and
# the client kept that connection alive for its next minute of requests. filter
# OUTPUT runs after nat OUTPUT, so translated connections carry the pod's address by then.
# (Pods' untranslated traffic cannot leave: forwarding off the bridge is dropped above.)
ensure_rule iptables filter OUTPUT -d "$SERVICE_CIDR" \
  -m comment --comment "codeplane-cluster: Service address not translated by kube-proxy" -j REJECT
# IPv4 only: the enforcer polices IPv4. Without this, pods reach every service of the node
# that listens on all addresses (`::`, Node's default) over the bridge's IPv6 link-local
# address, and each other over theirs, whatever their policies say.
sysctl -qw "net.ipv6.conf.$BRIDGE_NAME.disable_ipv6=1"
for chain in INPUT FORWARD; do
  ensure_rule ip6tables filter "$chain" -i "$BRIDGE_NAME" -m comment --comment codeplane-cluster -j DROP
done
modprobe br_netfilter 2>/dev/null || true
modprobe overlay 2>/dev/null || true

# write_if_changed <file>: stdin replaces <file> atomically, only when it differs
# (containerd watches the CNI directory and would read a half-written file).
write_if_changed() {
  local tmp; tmp="$(mktemp "$1.XXXXXX")"
  cat > "$tmp"
  if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else chmod 644 "$tmp"; mv -f "$tmp" "$1"; fi
}

mkdir -p "$CLUSTER_DIR/cni/net.d" "$CLUSTER_DIR/cni/ipam"
write_if_changed "$CLUSTER_DIR/cni/net.d/10-codeplane.conflist" <<CNI
{
  "cniVersion": "0.4.0",
  "name": "$CNI_NETWORK_NAME",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE_NAME",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$CLUSTER_DIR/cni/ipam",
        "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$POD_GATEWAY"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
CNI

# --- etcd ---------------------------------------------------------------------------
# etcd reads ETCD_* environment variables as flags: ours (ETCD_PORT, ETCD_VERSION, ...) are not for it
ETCD_ENV_UNSET=()
for v in $(compgen -e | grep '^ETCD_' || true); do ETCD_ENV_UNSET+=(-u "$v"); done
start etcd "curl -fsS --max-time 2 http://127.0.0.1:$ETCD_PORT/health" "127.0.0.1:$ETCD_PORT 127.0.0.1:$ETCD_PEER_PORT" \
  env "${ETCD_ENV_UNSET[@]}" "$ETCD_BIN/etcd" --name codeplane --data-dir "$CLUSTER_DIR/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "codeplane=http://127.0.0.1:$ETCD_PEER_PORT" \
  --quota-backend-bytes 2147483648 --unsafe-no-fsync --log-level warn

# --- kube-apiserver -------------------------------------------------------------------
start kube-apiserver "${CURL_API[*]} https://127.0.0.1:$APISERVER_PORT/readyz" "127.0.0.1:$APISERVER_PORT" \
  "$K8S_BIN/kube-apiserver" \
  --bind-address 127.0.0.1 --secure-port "$APISERVER_PORT" --advertise-address "$POD_GATEWAY" \
  --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
  --service-cluster-ip-range "$SERVICE_CIDR" --endpoint-reconciler-type none \
  --client-ca-file "$PKI_DIR/ca.crt" \
  --tls-cert-file "$PKI_DIR/apiserver.crt" --tls-private-key-file "$PKI_DIR/apiserver.key" \
  --kubelet-client-certificate "$PKI_DIR/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI_DIR/apiserver-kubelet-client.key" \
  --kubelet-certificate-authority "$PKI_DIR/ca.crt" --kubelet-preferred-address-types InternalIP \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "$PKI_DIR/sa.pub" --service-account-signing-key-file "$PKI_DIR/sa.key" \
  --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
  --requestheader-client-ca-file "$PKI_DIR/ca.crt" --requestheader-allowed-names front-proxy-client \
  --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
  --requestheader-extra-headers-prefix X-Remote-Extra- \
  --proxy-client-cert-file "$PKI_DIR/front-proxy-client.crt" --proxy-client-key-file "$PKI_DIR/front-proxy-client.key" \
  --allow-privileged=true --profiling=false \
  --feature-gates "$FEATURE_GATES" --v=1

# --- the API server on the node address, for pods ----------------------------------------
# The API server listens on 127.0.0.1 only, not on the machine's other interfaces. This relay
# (plain TCP: TLS stays end to end) serves it at $POD_GATEWAY:$APISERVER_PORT too, where the
# `kubernetes` Service leads (in-cluster clients: CoreDNS, codeplane's own pod). Pods reach it
# only where their NetworkPolicy allows, like any other port of the node.
start apiserver-relay "timeout 2 bash -c '</dev/tcp/$POD_GATEWAY/$APISERVER_PORT'" "$POD_GATEWAY:$APISERVER_PORT" \
  socat -lf "$LOG_DIR/apiserver-relay.log" "TCP-LISTEN:$APISERVER_PORT,bind=$POD_GATEWAY,reuseaddr,fork" "TCP:127.0.0.1:$APISERVER_PORT"

# --- controller-manager and scheduler ---------------------------------------------------
start kube-controller-manager "curl -fsSk --max-time 2 https://127.0.0.1:$KCM_PORT/healthz" "127.0.0.1:$KCM_PORT" \
  "$K8S_BIN/kube-controller-manager" \
  --kubeconfig "$PKI_DIR/controller-manager.kubeconfig" \
  --authentication-kubeconfig "$PKI_DIR/controller-manager.kubeconfig" \
  --authorization-kubeconfig "$PKI_DIR/controller-manager.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port "$KCM_PORT" --leader-elect=false \
  --service-account-private-key-file "$PKI_DIR/sa.key" --root-ca-file "$PKI_DIR/ca.crt" \
  --use-service-account-credentials=true \
  --cluster-signing-cert-file "$PKI_DIR/ca.crt" --cluster-signing-key-file "$PKI_DIR/ca.key" \
  --controllers '*,-cloud-node-lifecycle,-service-lb-controller,-node-route-controller' \
  --profiling=false --v=1

start kube-scheduler "curl -fsSk --max-time 2 https://127.0.0.1:$SCHED_PORT/healthz" "127.0.0.1:$SCHED_PORT" \
  "$K8S_BIN/kube-scheduler" \
  --kubeconfig "$PKI_DIR/scheduler.kubeconfig" \
  --authentication-kubeconfig "$PKI_DIR/scheduler.kubeconfig" \
  --authorization-kubeconfig "$PKI_DIR/scheduler.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port "$SCHED_PORT" --leader-elect=false --profiling=false --v=1

# --- containerd -------------------------------------------------------------------------
mkdir -p "$CLUSTER_DIR/containerd" "$RUN_DIR/containerd"
# Without CAP_SYS_RESOURCE (some VMs and sandboxes drop it) nothing may lower an
# oom_score_adj, and runc fails to start any pod (kubelet asks -998 for sandboxes):
# then containerd clamps the values to its own.
RESTRICT_OOM=false
capeff="$(awk '/^CapEff:/ {print $2}' /proc/self/status)"
if [ $(( (16#$capeff >> 24) & 1 )) = 0 ]; then
  RESTRICT_OOM=true
  log "containerd: no CAP_SYS_RESOURCE here, restricting oom_score_adj of containers"
fi
cat > "$CLUSTER_DIR/containerd.toml" <<TOML
version = 2
root = "$CLUSTER_DIR/containerd/root"
state = "$RUN_DIR/containerd/state"
[grpc]
  address = "$RUN_DIR/containerd.sock"
[ttrpc]
  address = "$RUN_DIR/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$CLUSTER_DIR/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  stream_server_address = "127.0.0.1"
  enable_selinux = false
  restrict_oom_score_adj = $RESTRICT_OOM
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "$(command -v runc)"
        Root = "$RUN_DIR/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$CLUSTER_DIR/cni/net.d"
    max_conf_num = 1
TOML
restart_if_changed containerd "$CLUSTER_DIR/containerd.toml"
start containerd "${CTR[*]} version" "" containerd --config "$CLUSTER_DIR/containerd.toml" --log-level info
printf 'runtime-endpoint: unix://%s\nimage-endpoint: unix://%s\ntimeout: 10\n' "$RUN_DIR/containerd.sock" "$RUN_DIR/containerd.sock" > "$RUN_DIR/crictl.yaml"

# --- images: import what is not there yet -----------------------------------------------
have_image() { local l; l="$("${CTR[@]}" -n k8s.io images ls -q 2>/dev/null)"; grep -qx "$1" <<< "$l"; }
if ! have_image "$PAUSE_IMAGE" || ! have_image "docker.io/library/$RUNNER_IMAGE"; then
  if [ ! -s "$CLUSTER_DIR/images/pause.tar" ] || [ ! -s "$CLUSTER_DIR/images/runner.tar" ]; then
    "$HACK_DIR/images.sh" pause; "$HACK_DIR/images.sh" runner
  else
    for f in pause runner app; do
      [ -s "$CLUSTER_DIR/images/$f.tar" ] && { log "images: importing $f"; "${CTR[@]}" -n k8s.io images import "$CLUSTER_DIR/images/$f.tar" >/dev/null; }
    done
  fi
fi
if ! have_image "$COREDNS_IMAGE"; then
  [ -s "$CLUSTER_DIR/images/coredns.tar" ] && { log "images: importing coredns"; "${CTR[@]}" -n k8s.io images import "$CLUSTER_DIR/images/coredns.tar" >/dev/null; }
  have_image "$COREDNS_IMAGE" || "$HACK_DIR/images.sh" coredns
fi
if ! have_image "docker.io/library/$APP_IMAGE"; then
  # codeplane:dev from this checkout (`make images` rebuilds it after changes)
  if [ -s "$CLUSTER_DIR/images/app.tar" ]; then
    log "images: importing app"; "${CTR[@]}" -n k8s.io images import "$CLUSTER_DIR/images/app.tar" >/dev/null
  else
    "$HACK_DIR/images.sh" app
  fi
fi

# --- kubelet ----------------------------------------------------------------------------
mkdir -p "$CLUSTER_DIR/kubelet" "$CLUSTER_DIR/pod-logs"
cat > "$CLUSTER_DIR/kubelet.yaml" <<KUBELET
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $POD_GATEWAY
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI_DIR/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $PKI_DIR/kubelet-serving.crt
tlsPrivateKeyFile: $PKI_DIR/kubelet-serving.key
containerRuntimeEndpoint: unix://$RUN_DIR/containerd.sock
cgroupDriver: cgroupfs
failSwapOn: false
featureGates:
  $(echo "$FEATURE_GATES" | sed 's/=/: /; s/,/\n  /g')
podLogsDir: $CLUSTER_DIR/pod-logs
# images are imported locally and cannot be pulled again: never garbage-collect them
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 2%, imagefs.available: 2%, nodefs.inodesFree: 2%}
maxPods: 110
serializeImagePulls: false
resolvConf: /etc/resolv.conf
clusterDomain: $CLUSTER_DOMAIN
clusterDNS: [$DNS_SERVICE_IP]
KUBELET
restart_if_changed kubelet "$CLUSTER_DIR/kubelet.yaml"
start kubelet "curl -fsS --max-time 2 http://127.0.0.1:$KUBELET_HEALTHZ_PORT/healthz" "127.0.0.1:$KUBELET_HEALTHZ_PORT $POD_GATEWAY:$KUBELET_PORT" \
  "$K8S_BIN/kubelet" --config "$CLUSTER_DIR/kubelet.yaml" \
  --kubeconfig "$PKI_DIR/kubelet.kubeconfig" --root-dir "$CLUSTER_DIR/kubelet" \
  --hostname-override "$NODE_NAME" --node-ip "$POD_GATEWAY" --v=1

# --- git daemon for fixtures ---------------------------------------------------------------
mkdir -p "$CLUSTER_DIR/git"
start git-daemon "timeout 2 bash -c '</dev/tcp/$POD_GATEWAY/$GIT_PORT'" "$POD_GATEWAY:$GIT_PORT" \
  "$(git --exec-path)/git-daemon" --reuseaddr --export-all --informative-errors --base-path="$CLUSTER_DIR/git" \
  --listen="$POD_GATEWAY" --port="$GIT_PORT" --verbose "$CLUSTER_DIR/git"

# --- package mirror: PyPI, npm and Go modules on the bridge gateway -------------------------
# Filled once from the registries (cached by the lists' hash; a warm cache is not
# touched), then served with no way out. A changed list restarts the server on its new
# fill. A fill that fails (registries unreachable and nothing cached) leaves the cluster
# without a mirror rather than without a cluster: cluster-status shows it stopped.
if "$HACK_DIR/mirror.sh" fill; then
  mkdir -p "$CLUSTER_DIR/mirror"
  for kind in pypi npm go; do
    "$HACK_DIR/mirror.sh" path "$kind" > "$CLUSTER_DIR/mirror/$kind.path"
    restart_if_changed "mirror-$kind" "$CLUSTER_DIR/mirror/$kind.path"
  done
  start mirror-pypi "curl -fsS --max-time 2 http://$POD_GATEWAY:$MIRROR_PYPI_PORT/health" "$POD_GATEWAY:$MIRROR_PYPI_PORT" \
    "$HACK_DIR/mirror.sh" serve pypi "$POD_GATEWAY" "$MIRROR_PYPI_PORT" "$CLUSTER_DIR/mirror"
  start mirror-npm "curl -fsS --max-time 2 http://$POD_GATEWAY:$MIRROR_NPM_PORT/-/ping" "$POD_GATEWAY:$MIRROR_NPM_PORT" \
    "$HACK_DIR/mirror.sh" serve npm "$POD_GATEWAY" "$MIRROR_NPM_PORT" "$CLUSTER_DIR/mirror"
  start mirror-go "curl -fsS --max-time 2 http://$POD_GATEWAY:$MIRROR_GO_PORT/health" "$POD_GATEWAY:$MIRROR_GO_PORT" \
    "$HACK_DIR/mirror.sh" serve go "$POD_GATEWAY" "$MIRROR_GO_PORT" "$CLUSTER_DIR/mirror"
else
  log "WARNING: package mirror: the fill failed (above); the cluster runs without it ('hack/cluster/mirror.sh fill' retries)"
fi

# --- wait for the node --------------------------------------------------------------------
log "waiting for node $NODE_NAME to be Ready"
for i in $(seq 1 120); do
  if [ "$("${KUBECTL[@]}" get node "$NODE_NAME" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]; then
    break
  fi
  [ "$i" = 120 ] && fail kubelet
  sleep 1
done
# --- NetworkPolicy enforcer -----------------------------------------------------------------
# kube-router with only its firewall (no routing, no service proxy, no CNI). Per local pod
# it makes a chain KUBE-POD-FW-* in the filter table and jumps to it, by the pod's
# source address, from INPUT, FORWARD and OUTPUT: a pod's egress policy therefore also
# covers traffic to the node's own addresses (API server, kubelet, git daemon, anything
# listening on 10.244.0.1), which never crosses FORWARD. Denied packets are REJECTed.
# kube-router RETURNs pods' traffic to the node's "NodePort" ports whatever the policy;
# that range is 0-1 here (kube-router wants two ports; port 0 cannot be connected to;
# kube-proxy's NodePorts are translated before INPUT and checked as what they lead to),
# and what it RETURNs meets the drop of "pod not yet known" above: no port of the node is
# open to a pod whose policy does not allow it.
KUBE_ROUTER_HEALTH="curl -fsS --max-time 2 http://127.0.0.1:$KUBE_ROUTER_HEALTH_PORT/healthz && iptables -w -S INPUT | grep -q -- '-j KUBE-ROUTER-INPUT'"
if ! running kube-router || ! eval "$KUBE_ROUTER_HEALTH" >/dev/null 2>&1; then
  "${KUBECTL[@]}" apply -f - >/dev/null <<'RBAC'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "codeplane:kube-router"}
rules:
- apiGroups: [""]
  resources: [namespaces, pods, nodes, services, endpoints]
  verbs: [get, list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [get, list, watch]
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "codeplane:kube-router"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "codeplane:kube-router"}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: "codeplane:kube-router"}
RBAC
fi
# --iptables-sync-period 10s (default 5m): a pod whose address arrived after kube-router's last
# event-driven sync, with no other pod event after it, stays unknown (its new connections to the
# node dropped by "pod not yet known" above) until the next periodic sync. Seen in CI: an
# analysis pod's checkout could not connect to the node for 134 s. A full sync takes ~0.1 s.
start kube-router "$KUBE_ROUTER_HEALTH" "127.0.0.1:$KUBE_ROUTER_HEALTH_PORT" \
  "$KUBE_ROUTER_BIN/kube-router" --kubeconfig "$PKI_DIR/kube-router.kubeconfig" \
  --hostname-override "$NODE_NAME" \
  --run-firewall=true --run-router=false --run-service-proxy=false --run-loadbalancer=false \
  --enable-cni=false --enable-pod-egress=false --enable-ipv4=true --enable-ipv6=false \
  --service-cluster-ip-range "$SERVICE_CIDR" --service-node-port-range 0-1 \
  --iptables-sync-period 10s \
  --health-port "$KUBE_ROUTER_HEALTH_PORT" --metrics-port 0 --v=1
# lets pods the enforcer knows talk to other pods (see CODEPLANE-POD-GATE above)
restart_if_changed pod-gate "$HACK_DIR/pod-gate.sh"
start pod-gate "iptables -w -t mangle -S CODEPLANE-POD-GATE" "" "$HACK_DIR/pod-gate.sh" "$CLUSTER_DIR"

# --- Services: kube-proxy ---------------------------------------------------------------
# iptables mode, from the same Kubernetes build. It changes no sysctl: no localhost NodePorts
# (they need route_localnet), conntrack limits and timeouts left as they are.
# (kube-proxy exits when its configuration file is written to, even with the same content)
write_if_changed "$CLUSTER_DIR/kube-proxy.yaml" <<PROXY
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $PKI_DIR/kube-proxy.kubeconfig}
hostnameOverride: $NODE_NAME
mode: iptables
clusterCIDR: $POD_CIDR
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:$KUBE_PROXY_HEALTHZ_PORT
metricsBindAddress: 127.0.0.1:$KUBE_PROXY_METRICS_PORT
nodePortAddresses: [$POD_GATEWAY/32]
iptables: {localhostNodePorts: false, masqueradeAll: false}
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
PROXY
restart_if_changed kube-proxy "$CLUSTER_DIR/kube-proxy.yaml"
start kube-proxy "curl -fsS --max-time 2 http://127.0.0.1:$KUBE_PROXY_HEALTHZ_PORT/healthz" "127.0.0.1:$KUBE_PROXY_HEALTHZ_PORT 127.0.0.1:$KUBE_PROXY_METRICS_PORT" \
  "$K8S_BIN/kube-proxy" --config "$CLUSTER_DIR/kube-proxy.yaml" --v=1

# --- cluster DNS: CoreDNS -----------------------------------------------------------------
# A pod in kube-system labelled k8s-app=kube-dns behind the kube-dns Service
# ($DNS_SERVICE_IP, the kubelet's clusterDNS), so that a NetworkPolicy egress rule to those
# pods on port 53 is what allows DNS, as on other clusters. It answers $CLUSTER_DOMAIN and
# reverse lookups from the API and NXDOMAIN for every other name: nothing is forwarded
# anywhere. It reads the API as in-cluster clients do: `kubernetes` Service -> relay above.
DNS_MANIFEST="$CLUSTER_DIR/cluster-dns.yaml"
cat > "$DNS_MANIFEST" <<DNS
# The \`kubernetes\` Service's endpoint (the API server's endpoint reconciler is off).
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kubernetes-codeplane-cluster
  namespace: default
  labels: {kubernetes.io/service-name: kubernetes, endpointslice.kubernetes.io/managed-by: codeplane-cluster}
addressType: IPv4
endpoints: [{addresses: ["$POD_GATEWAY"], conditions: {ready: true}}]
ports: [{name: https, port: $APISERVER_PORT, protocol: TCP}]
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "codeplane:coredns"}
rules:
- apiGroups: [""]
  resources: [services, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "codeplane:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "codeplane:coredns"}
subjects: [{kind: ServiceAccount, name: coredns, namespace: kube-system}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  Corefile: |
    $CLUSTER_DOMAIN:53 in-addr.arpa:53 ip6.arpa:53 {
        errors
        health :8080
        ready :8181
        kubernetes $CLUSTER_DOMAIN in-addr.arpa ip6.arpa {
            ttl 30
        }
        cache 30
        loadbalance
    }
    # every other name: no such name, and nothing sent anywhere
    .:53 {
        errors
        template ANY ANY {
            rcode NXDOMAIN
        }
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  replicas: 1
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      serviceAccountName: coredns
      priorityClassName: system-cluster-critical
      dnsPolicy: Default
      terminationGracePeriodSeconds: 5
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        runAsGroup: 65532
        seccompProfile: {type: RuntimeDefault}
        sysctls: [{name: net.ipv4.ip_unprivileged_port_start, value: "53"}]
      containers:
      - name: coredns
        image: $COREDNS_IMAGE
        imagePullPolicy: Never
        args: [-conf, /etc/coredns/Corefile]
        ports:
        - {name: dns, containerPort: 53, protocol: UDP}
        - {name: dns-tcp, containerPort: 53, protocol: TCP}
        readinessProbe: {httpGet: {path: /ready, port: 8181}, periodSeconds: 2}
        livenessProbe: {httpGet: {path: /health, port: 8080}, initialDelaySeconds: 10, periodSeconds: 10}
        resources: {requests: {cpu: 50m, memory: 40Mi}, limits: {memory: 170Mi}}
        securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
        volumeMounts: [{name: config, mountPath: /etc/coredns, readOnly: true}]
      volumes: [{name: config, configMap: {name: coredns}}]
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  clusterIP: $DNS_SERVICE_IP
  selector: {k8s-app: kube-dns}
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
DNS
dns_sum="$(sha256sum "$DNS_MANIFEST" | cut -c1-64)"
dns_ready() { [ "$("${KUBECTL[@]}" -n kube-system get deployment coredns -o 'jsonpath={.status.readyReplicas}' 2>/dev/null)" = 1 ]; }
if [ "$(cat "$RUN_DIR/pids/cluster-dns.conf" 2>/dev/null)" != "$dns_sum" ] || ! dns_ready; then
  log "cluster DNS: applying CoreDNS ($COREDNS_VERSION) and the kube-dns Service ($DNS_SERVICE_IP)"
  "${KUBECTL[@]}" apply -f "$DNS_MANIFEST" >/dev/null
  # a changed Corefile reaches the pod by a restart (there is no reload plugin)
  [ -f "$RUN_DIR/pids/cluster-dns.conf" ] && "${KUBECTL[@]}" -n kube-system rollout restart deployment coredns >/dev/null
  for i in $(seq 1 "${START_TIMEOUT:-60}"); do dns_ready && break; [ "$i" = "${START_TIMEOUT:-60}" ] && {
    "${KUBECTL[@]}" -n kube-system get pods -l k8s-app=kube-dns -o wide >&2
    "${KUBECTL[@]}" -n kube-system logs deployment/coredns --tail 20 >&2
    die "cluster DNS: CoreDNS did not become ready"; }; sleep 1; done
  echo "$dns_sum" > "$RUN_DIR/pids/cluster-dns.conf"
  log "cluster DNS: ready"
else
  log "cluster DNS: ready"
fi

# the default service account must exist before pods can be created
for i in $(seq 1 60); do "${KUBECTL[@]}" -n default get serviceaccount default >/dev/null 2>&1 && break; sleep 1; done
"${KUBECTL[@]}" get nodes -o wide
log "cluster up in $((SECONDS - T0))s. KUBECONFIG=$KUBECONFIG_OUT  kubectl: $CLUSTER_DIR/bin/kubectl"
log "git server: git://$POD_GATEWAY/<name> (publish with hack/cluster/git-publish.sh <dir> <name>)"
log "package mirror: http://$POD_GATEWAY:$MIRROR_PYPI_PORT/simple/ (PyPI), http://$POD_GATEWAY:$MIRROR_NPM_PORT/ (npm), http://$POD_GATEWAY:$MIRROR_GO_PORT (GOPROXY); runs' settings: hack/cluster/mirror.sh env"
