{{- define "codeplane.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}{{ .Release.Name | trunc 63 | trimSuffix "-" }}{{- else -}}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}{{- end -}}
{{- end -}}

{{- define "codeplane.labels" -}}
app.kubernetes.io/name: codeplane
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "codeplane.selector" -}}
app.kubernetes.io/name: codeplane
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- /* Where Runs, Analyses and their Jobs live: runNamespace.name, by default <release>-runs. */ -}}
{{- define "codeplane.runNamespace" -}}
{{- if not (kindIs "map" .Values.runNamespace) -}}
{{- fail "runNamespace is a map now: set runNamespace.name (and runNamespace.create=false for a namespace that already exists)" -}}
{{- end -}}
{{- default (printf "%s-runs" .Release.Name | trunc 63 | trimSuffix "-") .Values.runNamespace.name -}}
{{- end -}}
