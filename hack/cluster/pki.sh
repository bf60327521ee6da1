#!/usr/bin/env bash
# Generate the cluster's CA, serving/client certificates, kubeconfigs and the
# service-account key pair with openssl. Existing files are kept, so restarts
# reuse the same identities (and kubeconfig).
source "$(dirname "$0")/lib.sh"
mkdir -p "$PKI_DIR"
cd "$PKI_DIR"
umask 077

if [ ! -s ca.crt ]; then
  log "pki: creating CA"
  openssl ecparam -name prime256v1 -genkey -noout -out ca.key 2>/dev/null
  openssl req -x509 -new -key ca.key -sha256 -days 3650 -subj "/CN=codeplane-local-cluster-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
    -out ca.crt 2>/dev/null
fi

# cert <name> <subject> <extendedKeyUsage> [subjectAltName]
cert() {
  local name="$1" subj="$2" eku="$3" san="${4:-}"
  [ -s "$name.crt" ] && return 0
  openssl ecparam -name prime256v1 -genkey -noout -out "$name.key" 2>/dev/null
  openssl req -new -key "$name.key" -subj "$subj" -out "$name.csr" 2>/dev/null
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    [ -n "$san" ] && echo "subjectAltName=$san"
  } > "$name.ext"
  openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -sha256 -days 3650 \
    -extfile "$name.ext" -out "$name.crt" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
}

# The first address of the service CIDR is the `kubernetes` service IP.
svc_ip="$(python3 -c "import ipaddress,sys; print(ipaddress.ip_network(sys.argv[1])[1])" "$SERVICE_CIDR")"
cert apiserver "/CN=kube-apiserver" serverAuth \
  "IP:127.0.0.1,IP:$POD_GATEWAY,IP:$svc_ip,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
cert admin "/O=system:masters/CN=codeplane-admin" clientAuth
cert controller-manager "/CN=system:kube-controller-manager" clientAuth
cert scheduler "/CN=system:kube-scheduler" clientAuth
cert kubelet-client "/O=system:nodes/CN=system:node:$NODE_NAME" clientAuth
cert front-proxy-client "/CN=front-proxy-client" clientAuth
# the NetworkPolicy enforcer (kube-router): read-only, bound by up.sh to a ClusterRole
cert kube-router "/CN=codeplane:kube-router" clientAuth
cert kube-proxy "/CN=system:kube-proxy" clientAuth
cert kubelet-serving "/CN=$NODE_NAME" serverAuth "IP:$POD_GATEWAY,IP:127.0.0.1,DNS:$NODE_NAME"

if [ ! -s sa.key ]; then
  log "pki: creating service-account key pair"
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
fi

# kubeconfig <file> <cert name>
kubeconfig() {
  local out="$1" name="$2"
  cat > "$out.tmp" <<KC
apiVersion: v1
kind: Config
clusters:
- name: codeplane-local
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority-data: $(base64 -w0 < ca.crt)
users:
- name: $name
  user:
    client-certificate-data: $(base64 -w0 < "$name.crt")
    client-key-data: $(base64 -w0 < "$name.key")
contexts:
- name: codeplane-local
  context:
    cluster: codeplane-local
    user: $name
current-context: codeplane-local
KC
  mv "$out.tmp" "$out"
}
kubeconfig controller-manager.kubeconfig controller-manager
kubeconfig scheduler.kubeconfig scheduler
kubeconfig kubelet.kubeconfig kubelet-client
kubeconfig admin.kubeconfig admin
kubeconfig kube-router.kubeconfig kube-router
kubeconfig kube-proxy.kubeconfig kube-proxy
umask 022
cp admin.kubeconfig "$KUBECONFIG_OUT.tmp" && chmod 600 "$KUBECONFIG_OUT.tmp" && mv "$KUBECONFIG_OUT.tmp" "$KUBECONFIG_OUT"
# run through sudo: the user who ran it gets to read the kubeconfig
if [ -n "${SUDO_UID:-}" ]; then chown "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$KUBECONFIG_OUT"; fi
