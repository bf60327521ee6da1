{{- /*
Network isolation helpers. The workload NetworkPolicy must be exactly what
src/k8s/network-policy.ts builds (test/chart/ compares them), including the
address arithmetic: an allowed CIDR that holds a metadata range gets it as an
`except`, one inside a metadata range is refused. Addresses are handled as
16-bit groups (two for IPv4, eight for IPv6) so one comparison serves both.
*/ -}}

{{- /* The cloud metadata ranges: src/resources/egress.ts METADATA_CIDRS. Denied to runs in every mode. */ -}}
{{- define "codeplane.metadataCIDRs" -}}
["169.254.0.0/16","fd00:ec2::254/128"]
{{- end -}}

{{- /* A CIDR (or bare address) -> JSON {"family":4|6,"groups":[...],"len":N}; fails on a malformed one. */ -}}
{{- define "codeplane.cidr.parse" -}}
{{- $cidr := toString . -}}
{{- $parts := splitList "/" $cidr -}}
{{- $ip := first $parts -}}
{{- $groups := list -}}
{{- $family := 4 -}}
{{- if contains ":" $ip -}}
  {{- $family = 6 -}}
  {{- if not (regexMatch "^[0-9a-fA-F:]+$" $ip) -}}{{- fail (printf "'%s' is not a CIDR (IPv6 addresses are written with hex groups, without an embedded IPv4 part)" $cidr) -}}{{- end -}}
  {{- $halves := splitList "::" (lower $ip) -}}
  {{- if gt (len $halves) 2 -}}{{- fail (printf "'%s' is not a CIDR ('::' appears twice)" $cidr) -}}{{- end -}}
  {{- $head := list -}}
  {{- if ne (first $halves) "" -}}{{- $head = splitList ":" (first $halves) -}}{{- end -}}
  {{- $tail := list -}}
  {{- if and (eq (len $halves) 2) (ne (last $halves) "") -}}{{- $tail = splitList ":" (last $halves) -}}{{- end -}}
  {{- $missing := sub 8 (add (len $head) (len $tail)) | int -}}
  {{- if or (lt $missing 0) (and (eq (len $halves) 1) (ne $missing 0)) -}}{{- fail (printf "'%s' is not a CIDR (an IPv6 address has eight groups)" $cidr) -}}{{- end -}}
  {{- range $head -}}{{- if not (regexMatch "^[0-9a-f]{1,4}$" .) -}}{{- fail (printf "'%s' is not a CIDR" $cidr) -}}{{- end -}}{{- $groups = append $groups (int64 (printf "0x%s" .)) -}}{{- end -}}
  {{- range until $missing -}}{{- $groups = append $groups 0 -}}{{- end -}}
  {{- range $tail -}}{{- if not (regexMatch "^[0-9a-f]{1,4}$" .) -}}{{- fail (printf "'%s' is not a CIDR" $cidr) -}}{{- end -}}{{- $groups = append $groups (int64 (printf "0x%s" .)) -}}{{- end -}}
{{- else -}}
  {{- if not (regexMatch "^[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}$" $ip) -}}{{- fail (printf "'%s' is not a CIDR (write a.b.c.d/n or an IPv6 prefix)" $cidr) -}}{{- end -}}
  {{- $o := splitList "." $ip -}}
  {{- range $o -}}{{- if gt (atoi .) 255 -}}{{- fail (printf "'%s' is not a CIDR" $cidr) -}}{{- end -}}{{- end -}}
  {{- $groups = list (add (mul (atoi (index $o 0)) 256) (atoi (index $o 1))) (add (mul (atoi (index $o 2)) 256) (atoi (index $o 3))) -}}
{{- end -}}
{{- $width := ternary 128 32 (eq $family 6) -}}
{{- $len := $width -}}
{{- if eq (len $parts) 2 -}}
  {{- if not (regexMatch "^[0-9]{1,3}$" (last $parts)) -}}{{- fail (printf "'%s' is not a CIDR" $cidr) -}}{{- end -}}
  {{- $len = atoi (last $parts) -}}
{{- else if gt (len $parts) 2 -}}{{- fail (printf "'%s' is not a CIDR" $cidr) -}}
{{- end -}}
{{- if gt $len $width -}}{{- fail (printf "'%s' is not a CIDR (the prefix length is at most %d)" $cidr $width) -}}{{- end -}}
{{- dict "family" $family "groups" $groups "len" $len | toJson -}}
{{- end -}}

{{- /* dict "outer" A "inner" B -> "true" when every address of B is in A (host bits of A ignored), else "". */ -}}
{{- define "codeplane.cidr.contains" -}}
{{- $o := include "codeplane.cidr.parse" .outer | fromJson -}}
{{- $i := include "codeplane.cidr.parse" .inner | fromJson -}}
{{- if and (eq $o.family $i.family) (le $o.len $i.len) -}}
  {{- $same := true -}}
  {{- $full := div $o.len 16 | int -}}
  {{- range $k := until $full -}}
    {{- if ne (index $o.groups $k) (index $i.groups $k) -}}{{- $same = false -}}{{- end -}}
  {{- end -}}
  {{- $rest := mod $o.len 16 | int -}}
  {{- if and $same (gt $rest 0) -}}
    {{- $unit := index (list 65536 32768 16384 8192 4096 2048 1024 512 256 128 64 32 16 8 4 2 1) $rest -}}
    {{- if ne (div (index $o.groups $full) $unit) (div (index $i.groups $full) $unit) -}}{{- $same = false -}}{{- end -}}
  {{- end -}}
  {{- if $same -}}true{{- end -}}
{{- end -}}
{{- end -}}

{{- /* The prefix length of a CIDR. */ -}}
{{- define "codeplane.cidr.len" -}}
{{- (include "codeplane.cidr.parse" . | fromJson).len | int -}}
{{- end -}}

{{- define "codeplane.gitPort" -}}
{{- default .Values.config.PORT .Values.config.CODEPLANE_GIT_PORT -}}
{{- end -}}

{{- /* Where pods clone from: the Service's git port unless config.CODEPLANE_INTERNAL_URL says otherwise. */ -}}
{{- define "codeplane.internalUrl" -}}
{{- default (printf "http://%s.%s.svc:%s" (include "codeplane.fullname" .) .Release.Namespace (include "codeplane.gitPort" . | toString)) .Values.config.CODEPLANE_INTERNAL_URL -}}
{{- end -}}

{{- /* runs.egress.allow -> CODEPLANE_RUN_EGRESS_ALLOW (CIDR or CIDR@PORT[-END]/proto, comma-separated), checked. */ -}}
{{- define "codeplane.egressAllowEnv" -}}
{{- $entries := list -}}
{{- $seen := dict -}}
{{- range $i, $rule := .Values.runs.egress.allow -}}
  {{- if not $rule.cidr -}}{{- fail (printf "runs.egress.allow[%d]: cidr is required" $i) -}}{{- end -}}
  {{- $cidr := toString $rule.cidr -}}
  {{- $_ := include "codeplane.cidr.parse" $cidr -}}
  {{- if hasKey $seen $cidr -}}{{- fail (printf "runs.egress.allow: %s is listed twice; list each CIDR once with all its ports" $cidr) -}}{{- end -}}
  {{- $_ := set $seen $cidr true -}}
  {{- range $m := include "codeplane.metadataCIDRs" $ | fromJsonArray -}}
    {{- if include "codeplane.cidr.contains" (dict "outer" $m "inner" $cidr) -}}
      {{- fail (printf "runs.egress.allow: '%s' lies inside the cloud metadata range %s, which runs may never reach" $cidr $m) -}}
    {{- end -}}
  {{- end -}}
  {{- if $rule.ports -}}
    {{- range $p := $rule.ports -}}
      {{- $port := int $p.port -}}
      {{- $proto := upper (default "TCP" $p.protocol) -}}
      {{- if or (lt $port 1) (gt $port 65535) -}}{{- fail (printf "runs.egress.allow: %s: port must be 1-65535" $cidr) -}}{{- end -}}
      {{- if not (has $proto (list "TCP" "UDP")) -}}{{- fail (printf "runs.egress.allow: %s: protocol must be TCP or UDP" $cidr) -}}{{- end -}}
      {{- $range := toString $port -}}
      {{- if $p.endPort -}}
        {{- if or (lt (int $p.endPort) $port) (gt (int $p.endPort) 65535) -}}{{- fail (printf "runs.egress.allow: %s: endPort must be from port to 65535" $cidr) -}}{{- end -}}
        {{- $range = printf "%d-%d" $port (int $p.endPort) -}}
      {{- end -}}
      {{- $entries = append $entries (printf "%s@%s/%s" $cidr $range (lower $proto)) -}}
    {{- end -}}
  {{- else -}}
    {{- $entries = append $entries $cidr -}}
  {{- end -}}
{{- end -}}
{{- join "," $entries -}}
{{- end -}}

{{- /* runs.egress.clusterCIDRs, checked. */ -}}
{{- define "codeplane.clusterCIDRs" -}}
{{- range .Values.runs.egress.clusterCIDRs -}}
  {{- if eq (include "codeplane.cidr.len" .) "0" -}}{{- fail (printf "runs.egress.clusterCIDRs: '%s' is every address of its family; use runs.egress.mode=restricted to close egress" .) -}}{{- end -}}
{{- end -}}
{{- toJson .Values.runs.egress.clusterCIDRs -}}
{{- end -}}

{{- /* The label selector of run and analysis pods: src/k8s/network-policy.ts WORKLOAD_POD_SELECTOR. */ -}}
{{- define "codeplane.workloadPodSelector" -}}
matchLabels:
  app.kubernetes.io/managed-by: codeplane
matchExpressions:
  - key: app.kubernetes.io/component
    operator: In
    values: [run, analysis]
{{- end -}}
