{{/* Common labels of every object the umbrella renders. */}}
{{- define "taugrid.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: taugrid
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{/*
"true" when toleration .tol tolerates taint .taint (Kubernetes semantics): an empty key with
Exists matches every key, an empty effect matches every effect, Exists ignores the value and
Equal (or an empty operator) compares it.
*/}}
{{- define "taugrid.tolerates" -}}
{{- $tol := .tol -}}
{{- $taint := .taint -}}
{{- $op := default "Equal" $tol.operator -}}
{{- $keyOK := or (eq (default "" $tol.key) (default "" $taint.key)) (and (eq (default "" $tol.key) "") (eq $op "Exists")) -}}
{{- $effectOK := or (eq (default "" $tol.effect) "") (eq (default "" $tol.effect) (default "" $taint.effect)) -}}
{{- $valueOK := or (eq $op "Exists") (eq (toString (default "" $tol.value)) (toString (default "" $taint.value))) -}}
{{- if and $keyOK $effectOK $valueOK }}true{{ end -}}
{{- end -}}
