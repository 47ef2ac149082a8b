{{- define "tau-core-controller.labels" -}}
app.kubernetes.io/name: tau-core-controller
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: {{ .Values.partOf }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{/* global.imageRegistry/repository, unless the repository names its own registry host. */}}
{{- define "tau-core-controller.image" -}}
{{- $img := .Values.image -}}
{{- $registry := dig "imageRegistry" "" (.Values.global | default dict) | trimSuffix "/" -}}
{{- $host := first (splitList "/" $img.repository) -}}
{{- $repository := $img.repository -}}
{{- $ownHost := or (contains "." $host) (contains ":" $host) (eq $host "localhost") -}}
{{- if and $registry (not (and (contains "/" $img.repository) $ownHost)) -}}
{{- $repository = printf "%s/%s" $registry $img.repository -}}
{{- end -}}
{{- if $img.digest -}}
{{ $repository }}@{{ $img.digest }}
{{- else -}}
{{ $repository }}:{{ default .Chart.AppVersion $img.tag }}
{{- end -}}
{{- end -}}
