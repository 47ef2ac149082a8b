{{- define "gpu-monitoring.labels" -}}
app.kubernetes.io/name: gpu-monitoring
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: taugrid
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{/* The NPD custom-plugin monitor: one permanent Node condition per check. */}}
{{- define "gpu-monitoring.monitor" -}}
{{- $checks := list
  (dict "type" "NvidiaSmiProblem" "check" "nvidia-smi")
  (dict "type" "GPUMissing" "check" "gpu-count")
  (dict "type" "NVLinkStatusInactive" "check" "nvlink")
  (dict "type" "GPUECCErrors" "check" "ecc")
  (dict "type" "IBLinkIssue" "check" "ib")
  (dict "type" "DcgmHealthProblem" "check" "dcgm") -}}
{{- $conditions := list -}}
{{- $rules := list -}}
{{- range $checks -}}
{{- $conditions = append $conditions (dict "type" .type "reason" (printf "%sOk" .type) "message" (printf "%s check passes" .check)) -}}
{{- $rules = append $rules (dict "type" "permanent" "condition" .type "reason" .type "path" "/config/gpu-check.sh" "args" (list .check) "timeout" "30s") -}}
{{- end -}}
{{- dict "plugin" "custom" "pluginConfig" (dict "invoke_interval" "60s" "timeout" "30s" "max_output_length" 200 "concurrency" 2) "source" "gpu-monitor" "metricsReporting" true "conditions" $conditions "rules" $rules | toPrettyJson -}}
{{- end -}}
