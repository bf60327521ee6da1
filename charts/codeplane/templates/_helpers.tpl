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

{{- define "codeplane.runNamespace" -}}
{{- default .Release.Namespace .Values.runNamespace -}}
{{- end -}}
