#!/usr/bin/env bash
# Tear the local cluster down: stop every process cluster-up started, remove
# pods' sandboxes (network namespaces, veths, shm and volume mounts), the CNI
# bridge and the iptables rules kubelet/CNI/we added. Keeps caches (binaries,
# rootfs), .cluster/pki, the image archives and containerd's image store, so the
# next cluster-up is quick; the cluster's state (etcd, kubelet dir) is wiped.
source "$(dirname "$0")/lib.sh"
need_root
set +e
KUBECTL=("$K8S_BIN/kubectl" --kubeconfig "$PKI_DIR/admin.kubeconfig" --request-timeout 5s)
SOCK="$RUN_DIR/containerd.sock"
CRICTL=("$CRICTL_BIN/crictl" --config "$RUN_DIR/crictl.yaml" --timeout 10s)

pidof_c() { cat "$RUN_DIR/pids/$1.pid" 2>/dev/null; }
# alive <pid>: exists and is not a zombie (exited children of init linger as zombies)
alive() { kill -0 "$1" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
stop() { # stop <name>: SIGTERM, wait up to 15s, then SIGKILL
  local name="$1" p; p="$(pidof_c "$name")"
  if [ -n "$p" ] && kill -0 "$p" 2>/dev/null && grep -qaF "$CLUSTER_DIR" "/proc/$p/cmdline" 2>/dev/null; then
    log "stopping $name (pid $p)"
    kill -TERM "$p" 2>/dev/null
    for _ in $(seq 1 75); do alive "$p" || break; sleep 0.2; done
    alive "$p" && { log "$name: still alive, SIGKILL"; kill -KILL "$p" 2>/dev/null; sleep 0.5; }
  fi
  rm -f "$RUN_DIR/pids/$name.pid"
}

[ -d "$RUN_DIR" ] && printf 'runtime-endpoint: unix://%s\nimage-endpoint: unix://%s\n' "$SOCK" "$SOCK" > "$RUN_DIR/crictl.yaml"
api_up() { [ -x "$K8S_BIN/kubectl" ] && "${KUBECTL[@]}" get --raw /readyz >/dev/null 2>&1; }
cri_up() { [ -S "$SOCK" ] && [ -x "$CRICTL_BIN/crictl" ] && "${CRICTL[@]}" version >/dev/null 2>&1; }

# 1. no new pods: stop the controllers, then delete every pod and let kubelet kill them.
# The NetworkPolicy enforcer goes first: it leaves its rules in place, removed in step 6.
stop pod-gate
stop kube-router
stop kube-proxy
stop kube-controller-manager
stop kube-scheduler
if api_up; then
  log "deleting all pods"
  "${KUBECTL[@]}" delete pods --all --all-namespaces --grace-period=0 --force --wait=false >/dev/null 2>&1
  # kubelet kills the containers of deleted pods (Job pods keep a finalizer the
  # stopped Job controller would remove; that does not matter here)
  if cri_up; then
    for _ in $(seq 1 30); do
      [ -z "$("${CRICTL[@]}" pods --state ready -q 2>/dev/null)" ] && break; sleep 1
    done
  fi
fi
stop kubelet

# 2. remove sandboxes through the CRI (tears down their network and unmounts shm).
# After a crash containerd may be gone while sandboxes, network namespaces and
# mounts remain: start it once more, just for the cleanup.
NETNS=()
if ! cri_up && [ -f "$CLUSTER_DIR/containerd.toml" ] && [ -d "$CLUSTER_DIR/containerd/root" ]; then
  log "containerd is not running: starting it to clean up sandboxes"
  mkdir -p "$RUN_DIR/pids" "$LOG_DIR"
  printf 'runtime-endpoint: unix://%s\nimage-endpoint: unix://%s\n' "$SOCK" "$SOCK" > "$RUN_DIR/crictl.yaml"
  setsid containerd --config "$CLUSTER_DIR/containerd.toml" >> "$LOG_DIR/containerd.log" 2>&1 < /dev/null &
  echo $! > "$RUN_DIR/pids/containerd.pid"
  for _ in $(seq 1 20); do cri_up && break; sleep 0.5; done
fi
if cri_up; then
  mapfile -t NETNS < <("${CRICTL[@]}" inspectp $("${CRICTL[@]}" pods -q) 2>/dev/null \
    | python3 -c 'import json,sys
d=sys.stdin.read().strip()
dec=json.JSONDecoder(); i=0
while i < len(d):
    o,j=dec.raw_decode(d,i); i=j
    while i < len(d) and d[i].isspace(): i+=1
    for ns in o.get("info",{}).get("runtimeSpec",{}).get("linux",{}).get("namespaces",[]):
        if ns.get("type")=="network" and ns.get("path"): print(ns["path"])' 2>/dev/null)
  log "removing containers and pod sandboxes"
  "${CRICTL[@]}" rm --all --force >/dev/null 2>&1
  "${CRICTL[@]}" rmp --all --force >/dev/null 2>&1
fi

# 3. containerd, and any shim it left behind
stop containerd
for p in $(pgrep -f "containerd-shim-runc-v2 .*-address $SOCK( |\$)"); do
  log "killing leftover shim $p"; kill -KILL "$p" 2>/dev/null
done

# processes still in pod cgroups (their shim was killed): kill them
for procs in /sys/fs/cgroup/*/kubepods/cgroup.procs /sys/fs/cgroup/kubepods/cgroup.procs; do
  [ -f "$procs" ] || continue
  for p in $(find "$(dirname "$procs")" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u); do
    log "killing leftover pod process $p ($(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | cut -c1-60))"
    kill -KILL "$p" 2>/dev/null
  done
done

# 4. control plane and git daemon
stop apiserver-relay
stop kube-apiserver
stop etcd
stop git-daemon
stop mirror-pypi
stop mirror-npm
stop mirror-go

# leftovers of a crash (a component killed without its pid file, an orphaned
# child): our binaries whose command line names our directories
for p in $(pgrep -f "$CLUSTER_DIR/|$RUN_DIR/"); do
  case "$(cat "/proc/$p/comm" 2>/dev/null)" in
    etcd|kube-apiserver|kube-controller|kube-scheduler|kubelet|kube-router|kube-proxy|containerd|containerd-shim*|git-daemon|pod-gate.sh|tail|socat|pypi-server|nginx)
      log "killing leftover $(cat "/proc/$p/comm") (pid $p)"; kill -KILL "$p" 2>/dev/null ;;
  esac
done

# the mirror's verdaccio: a Node process named MainThread, known by its config's path
for p in $(pgrep -f "verdaccio.* -c $CLUSTER_DIR/mirror/"); do
  log "killing leftover verdaccio (pid $p)"; kill -KILL "$p" 2>/dev/null
done

# 5. mounts: netns bind mounts, then anything under our dirs (deepest first)
for ns in "${NETNS[@]}"; do
  [ -n "$ns" ] || continue
  umount "$ns" 2>/dev/null; rm -f "$ns" 2>/dev/null
done
for _ in 1 2 3; do
  mapfile -t MNTS < <(findmnt -rn -o TARGET | grep -E "^($CLUSTER_DIR|$RUN_DIR)(/|\$)" | sort -r)
  [ "${#MNTS[@]}" -eq 0 ] && break
  for m in "${MNTS[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
done

# 6. network: veths on the bridge, the bridge, iptables rules added since cluster-up
if ip link show "$BRIDGE_NAME" >/dev/null 2>&1; then
  for v in $(ip -o link show master "$BRIDGE_NAME" 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
    ip link del "$v" 2>/dev/null
  done
  log "deleting bridge $BRIDGE_NAME"
  ip link del "$BRIDGE_NAME"
fi
while iptables -w -t mangle -D FORWARD -i "$BRIDGE_NAME" ! -o "$BRIDGE_NAME" -m comment --comment codeplane-cluster -j DROP 2>/dev/null; do :; done
while iptables -w -D FORWARD -i "$BRIDGE_NAME" ! -o "$BRIDGE_NAME" -m comment --comment codeplane-cluster -j DROP 2>/dev/null; do :; done
for chain in INPUT FORWARD; do
  while iptables -w -D "$chain" -i "$BRIDGE_NAME" -m conntrack ! --ctstate ESTABLISHED,RELATED \
    -m comment --comment "codeplane-cluster: pod not yet known to the NetworkPolicy enforcer" -j DROP 2>/dev/null; do :; done
  while ip6tables -w -D "$chain" -i "$BRIDGE_NAME" -m comment --comment codeplane-cluster -j DROP 2>/dev/null; do :; done
done
while iptables -w -t mangle -D FORWARD -i "$BRIDGE_NAME" -o "$BRIDGE_NAME" -m conntrack ! --ctstate ESTABLISHED,RELATED -j CODEPLANE-POD-GATE 2>/dev/null; do :; done
iptables -w -t mangle -F CODEPLANE-POD-GATE 2>/dev/null && iptables -w -t mangle -X CODEPLANE-POD-GATE
python3 "$HACK_DIR/iptables-restore-diff.py" "$CLUSTER_DIR" || log "warning: iptables cleanup reported problems"
# ipsets made since cluster-up (the enforcer's KUBE-SRC-*/KUBE-DST-* and temporaries); with
# no snapshot (a cluster booted by an older cluster-up), the ones with kube-router's prefixes.
# Their iptables rules are gone by now, so they can be destroyed.
if command -v ipset >/dev/null; then
  for set in $(ipset list -n 2>/dev/null); do
    if [ -f "$CLUSTER_DIR/ipset.before" ]; then grep -qxF "$set" "$CLUSTER_DIR/ipset.before" && continue
    else case "$set" in KUBE-SRC-*|KUBE-DST-*|TMP-*|inet6:KUBE-*|inet6:TMP-*) ;; *) continue ;; esac; fi
    ipset destroy "$set" 2>/dev/null || log "warning: could not destroy ipset $set"
  done
fi

# connection tracking entries of pods and Services (kube-proxy's NAT among them)
if command -v conntrack >/dev/null; then
  for net in "$POD_CIDR" "$SERVICE_CIDR"; do
    conntrack -D -s "$net" >/dev/null 2>&1; conntrack -D -d "$net" >/dev/null 2>&1
  done
fi

# kubelet's pod cgroups (cgroupfs driver): remove the empty kubepods hierarchy
for c in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
  [ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} + 2>/dev/null
done

# 7. state (keep pki, images, containerd image store, logs)
rm -rf "$CLUSTER_DIR/etcd" "$CLUSTER_DIR/kubelet" "$CLUSTER_DIR/pod-logs" "$CLUSTER_DIR/cni/ipam" "$CLUSTER_DIR/git" "$CLUSTER_DIR/mirror" "$RUN_DIR"
rm -f "$CLUSTER_DIR"/iptables.*.before "$CLUSTER_DIR/ipset.before"

# 8. verify
left=""
for p in $(pgrep -f "$CLUSTER_DIR|$RUN_DIR"); do left+=" $p"; done
[ -n "$left" ] && log "warning: processes still referencing the cluster:$left"
if findmnt -rn -o TARGET | grep -qE "^($CLUSTER_DIR|$RUN_DIR)(/|\$)"; then log "warning: mounts left under $CLUSTER_DIR or $RUN_DIR"; fi
log "cluster down"
