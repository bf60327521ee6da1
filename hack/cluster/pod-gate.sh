#!/usr/bin/env bash
# Keeps the mangle chain CODEPLANE-POD-GATE listing (RETURN) exactly the pods the
# NetworkPolicy enforcer has rules for; new connections between pods from any other
# source are dropped there (cluster-up jumps to it from mangle FORWARD, which runs
# before the enforcer's filter chains). Started and stopped by cluster-up/down.
#
# Why: a pod's containers run before its IP reaches the API and kube-router has made
# its chain. For pod-to-pod traffic in that window, only the destination's chain runs,
# and a destination without an ingress policy accepts the packet: a new pod under a
# deny-all egress policy reached other pods for ~0.3 s (and kept the connections).
# Traffic to the node is covered without this (see "pod not yet known" in up.sh).
#
# Which pods kube-router knows is read from its own rules (`-s IP -j KUBE-POD-FW-*` in
# KUBE-ROUTER-INPUT), after each of its syncs (its log says "sync iptables took") and
# every 2 s. The chain is replaced atomically (iptables-restore --noflush).
# usage: pod-gate.sh CLUSTER_DIR   (the argument lets cluster-up/down recognise the process)
source "$(dirname "$0")/lib.sh"
set +e
CHAIN=CODEPLANE-POD-GATE
current=""

sync_gate() {
  local rules ips
  rules="$(iptables -w -S KUBE-ROUTER-INPUT 2>/dev/null)" || return
  ips="$(sed -nE 's|^-A KUBE-ROUTER-INPUT -s ([0-9.]+)/32 .*-j KUBE-POD-FW-[A-Z0-9]+$|\1|p' <<< "$rules" | sort -u)"
  [ "$ips" = "$current" ] && return
  {
    echo "*mangle"
    echo ":$CHAIN - [0:0]"
    for ip in $ips; do echo "-A $CHAIN -s $ip/32 -j RETURN"; done
    echo "-A $CHAIN -m comment --comment \"codeplane-cluster: pod not yet known to the NetworkPolicy enforcer\" -j DROP"
    echo "COMMIT"
  } | iptables-restore -w --noflush && current="$ips" \
    && log "pod-gate: $(wc -w <<< "$ips") known pod(s)${ips:+: $(echo $ips)}"
}

exec 3< <(exec tail -n 0 -F "$LOG_DIR/kube-router.log" 2>/dev/null)
TAIL_PID=$!
trap 'kill "$TAIL_PID" 2>/dev/null; exit 0' TERM INT
log "pod-gate: following $LOG_DIR/kube-router.log"
sync_gate
while :; do
  if read -r -t 2 line <&3; then
    case "$line" in *"sync iptables took"*) ;; *) continue ;; esac
  elif ! kill -0 "$TAIL_PID" 2>/dev/null; then
    sleep 2
  fi
  sync_gate
done
