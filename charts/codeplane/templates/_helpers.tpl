{{- define "codeplane.fullname" -}}
{{- if .Values.fullnameOverride -}}{{ .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains .Chart.Name .Release.Name -}}{{ .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else -}}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}{{- end -}}
{{- end -}}

{{- /*
Labels of every object: the recommended app.kubernetes.io set, helm.sh/chart
and commonLabels. Called with the root context (component "server": the
API and controller) or with (dict "ctx" $ "component" "...").
*/ -}}
{{- define "codeplane.labels" -}}
{{- $ctx := . -}}
{{- $component := "server" -}}
{{- if hasKey . "ctx" -}}{{- $ctx = .ctx -}}{{- $component = .component -}}{{- end -}}
{{- $labels := dict
  "app.kubernetes.io/name" "codeplane"
  "app.kubernetes.io/instance" $ctx.Release.Name
  "app.kubernetes.io/version" ($ctx.Chart.AppVersion | toString)
  "app.kubernetes.io/component" $component
  "app.kubernetes.io/part-of" "codeplane"
  "app.kubernetes.io/managed-by" $ctx.Release.Service
  "helm.sh/chart" (printf "%s-%s" $ctx.Chart.Name $ctx.Chart.Version | replace "+" "_")
-}}
{{- toYaml (merge $labels (default dict $ctx.Values.commonLabels)) -}}
{{- end -}}

{{- /* What selects the API pods (Deployment, Service, policies): never changes across upgrades. */ -}}
{{- define "codeplane.selector" -}}
app.kubernetes.io/name: codeplane
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "codeplane.serviceAccountName" -}}
{{- default (include "codeplane.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- /* An image reference from {registry, repository, tag, digest}: the digest wins over the tag; an empty tag is the appVersion. */ -}}
{{- define "codeplane.image" -}}
{{- $image := .image -}}
{{- $ref := $image.repository -}}
{{- with $image.registry }}{{ $ref = printf "%s/%s" . $ref }}{{ end -}}
{{- if $image.digest -}}
{{- printf "%s@%s" $ref $image.digest -}}
{{- else -}}
{{- printf "%s:%s" $ref (default .ctx.Chart.AppVersion ($image.tag | toString)) -}}
{{- end -}}
{{- end -}}

{{- /* Where Runs, Analyses and their Jobs live: runNamespace.name, by default <release>-runs. */ -}}
{{- define "codeplane.runNamespace" -}}
{{- default (printf "%s-runs" .Release.Name | trunc 63 | trimSuffix "-") .Values.runNamespace.name -}}
{{- end -}}

{{- /* The binary's shutdown timeout, its default when config leaves it empty. */ -}}
{{- define "codeplane.shutdownTimeoutSeconds" -}}
{{- default "25" (toString .Values.config.CODEPLANE_SHUTDOWN_TIMEOUT_SECONDS) | int -}}
{{- end -}}

{{- /* The metrics endpoint's port name on the pods and the Service: its own port, or the main one. */ -}}
{{- define "codeplane.metricsPortName" -}}
{{- ternary "metrics" "http" (ne (toString .Values.config.CODEPLANE_METRICS_PORT) "") -}}
{{- end -}}

{{- /* The container port number /metrics is served on. */ -}}
{{- define "codeplane.metricsPort" -}}
{{- default .Values.config.PORT .Values.config.CODEPLANE_METRICS_PORT -}}
{{- end -}}

{{- /* imagePullSecrets -> CODEPLANE_IMAGE_PULL_SECRETS (comma-separated names). */ -}}
{{- define "codeplane.pullSecretNames" -}}
{{- $names := list -}}
{{- range .Values.imagePullSecrets }}{{ $names = append $names .name }}{{ end -}}
{{- join "," $names -}}
{{- end -}}

{{- /*
The API pods' topology spread: topologySpreadConstraints when given (a
missing labelSelector becomes these pods' labels); otherwise, with more than
one replica and defaultTopologySpread, a soft spread over nodes. Each
rollout's pods are counted apart (matchLabelKeys pod-template-hash), so the
new ReplicaSet spreads too.
*/ -}}
{{- define "codeplane.topologySpreadConstraints" -}}
{{- $selector := dict "matchLabels" (include "codeplane.selector" . | fromYaml) -}}
{{- $constraints := list -}}
{{- range .Values.topologySpreadConstraints -}}
{{- $c := deepCopy . -}}
{{- if not (hasKey $c "labelSelector") }}{{ $_ := set $c "labelSelector" $selector }}{{ end -}}
{{- $constraints = append $constraints $c -}}
{{- end -}}
{{- if and (not $constraints) .Values.defaultTopologySpread (gt (int .Values.replicaCount) 1) -}}
{{- $constraints = list (dict "maxSkew" 1 "topologyKey" "kubernetes.io/hostname" "whenUnsatisfiable" "ScheduleAnyway" "labelSelector" $selector "matchLabelKeys" (list "pod-template-hash")) -}}
{{- end -}}
{{- with $constraints }}{{ toYaml . }}{{ end -}}
{{- end -}}

{{- /* The port pods clone from: the git listener's, or the main one. */ -}}
{{- define "codeplane.gitPort" -}}
{{- default .Values.config.PORT .Values.config.CODEPLANE_GIT_PORT -}}
{{- end -}}

{{- /* Where pods clone from: the Service's git port unless config.CODEPLANE_INTERNAL_URL says otherwise. */ -}}
{{- define "codeplane.internalUrl" -}}
{{- default (printf "http://%s.%s.svc:%s" (include "codeplane.fullname" .) .Release.Namespace (include "codeplane.gitPort" . | toString)) .Values.config.CODEPLANE_INTERNAL_URL -}}
{{- end -}}

{{- /*
runs.egress.allow -> CODEPLANE_RUN_EGRESS_ALLOW (CIDR or CIDR@PORT[-END]/proto,
comma-separated). Only written out: the binary checks it and builds the
workload NetworkPolicy from it at start (src/k8s/network-policy.ts; see
docs/decisions/0100-network-policy-one-author.md), so the chart holds no
address logic of its own.
*/ -}}
{{- define "codeplane.egressAllowEnv" -}}
{{- $entries := list -}}
{{- range .Values.runs.egress.allow -}}
  {{- $cidr := toString .cidr -}}
  {{- range .ports -}}
    {{- $range := toString (int .port) -}}
    {{- if .endPort }}{{ $range = printf "%d-%d" (int .port) (int .endPort) }}{{ end -}}
    {{- $entries = append $entries (printf "%s@%s/%s" $cidr $range (lower (default "TCP" .protocol))) -}}
  {{- else -}}
    {{- $entries = append $entries $cidr -}}
  {{- end -}}
{{- end -}}
{{- join "," $entries -}}
{{- end -}}

{{- /* CODEPLANE_RUN_EGRESS_GIT_PODS: this release's API pods, which the workload policy lets runs clone from. */ -}}
{{- define "codeplane.gitPods" -}}
{{- $labels := list -}}
{{- range $k, $v := include "codeplane.selector" . | fromYaml }}{{ $labels = append $labels (printf "%s=%s" $k $v) }}{{ end -}}
{{- printf "%s/%s" .Release.Namespace (join "," $labels) -}}
{{- end -}}

{{- /* The label selector of run and analysis pods: src/k8s/network-policy.ts WORKLOAD_POD_SELECTOR (the API policy admits them to the git port). */ -}}
{{- define "codeplane.workloadPodSelector" -}}
matchLabels:
  app.kubernetes.io/managed-by: codeplane
matchExpressions:
  - key: app.kubernetes.io/component
    operator: In
    values: [run, analysis, environment]
{{- end -}}

{{- /* The workload NetworkPolicy the controller applies in the run namespace (CODEPLANE_RUN_EGRESS_POLICY). */ -}}
{{- define "codeplane.workloadPolicyName" -}}
{{- printf "%s-workloads" (include "codeplane.fullname" .) -}}
{{- end -}}
