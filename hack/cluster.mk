# Local single-node Kubernetes for development and CI (docs/local-cluster.md).
# Included by the top-level Makefile. Everything runs on this machine, no Docker;
# the kind-* targets are the alternative for machines that have Docker.

CLUSTER_HACK := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))/cluster
CLUSTER_SUDO := $(if $(filter 0,$(shell id -u)),,sudo -E)
CLUSTER_KUBECONFIG ?= $(CURDIR)/.cluster/kubeconfig
KIND_CLUSTER_NAME ?= codeplane

.PHONY: cluster-up cluster-down cluster-status cluster-build cluster-reset cluster-test images kueue kueue-uninstall kind-up kind-down

cluster-up: ## Boot the local single-node Kubernetes cluster (builds binaries and images on first run)
	$(CLUSTER_SUDO) $(CLUSTER_HACK)/up.sh

cluster-down: ## Stop the local cluster and remove its processes, mounts, network and iptables rules
	$(CLUSTER_SUDO) $(CLUSTER_HACK)/down.sh

cluster-status: ## Show the health of each local cluster component
	@$(CLUSTER_SUDO) $(CLUSTER_HACK)/status.sh

cluster-build: ## Build (or verify cached) Kubernetes, etcd, crictl, kube-router and CoreDNS binaries only
	$(CLUSTER_HACK)/build-k8s.sh all

cluster-reset: cluster-down ## Tear down and delete all local cluster state (.cluster/), keeping the build caches
	$(CLUSTER_SUDO) rm -rf $(CURDIR)/.cluster

cluster-test: ## Run the cluster smoke and NetworkPolicy tests against .cluster/kubeconfig (or KUBECONFIG)
	KUBECONFIG=$${KUBECONFIG:-$(CLUSTER_KUBECONFIG)} npx vitest run --config test/cluster/vitest.config.ts

images: ## Build pause, CoreDNS, the catalog images (codeplane-runner:dev, -go, -build, -python-next, -torch-standin) and codeplane:dev without Docker; import them if the cluster is up
	$(CLUSTER_SUDO) $(CLUSTER_HACK)/images.sh all

kueue: ## Install Kueue (the optional admission engine) into the cluster at KUBECONFIG or .cluster/: built from the Go module proxy and cached by version, image made without Docker
	$(CLUSTER_SUDO) env KUBECONFIG=$${KUBECONFIG:-$(CLUSTER_KUBECONFIG)} $(CLUSTER_HACK)/kueue.sh install

kueue-uninstall: ## Remove Kueue from the cluster (its CRDs, queues and Workloads too)
	$(CLUSTER_SUDO) env KUBECONFIG=$${KUBECONFIG:-$(CLUSTER_KUBECONFIG)} $(CLUSTER_HACK)/kueue.sh uninstall

kind-up: ## Alternative with Docker: kind cluster with the same feature gates, kubeconfig and images
	$(CLUSTER_HACK)/kind.sh up $(KIND_CLUSTER_NAME)

kind-down: ## Delete the kind cluster
	$(CLUSTER_HACK)/kind.sh down $(KIND_CLUSTER_NAME)
