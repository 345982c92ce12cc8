{{/* The name of every object: the release name when it already says
causeway, else "<release>-causeway". */}}
{{- define "causeway.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels that select the controller's pods. */}}
{{- define "causeway.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The selector labels as KEY=VALUE,... (--gateway-service-selector). */}}
{{- define "causeway.selectorFlag" -}}
{{- $pairs := list }}
{{- range $k, $v := include "causeway.selectorLabels" . | fromYaml }}
{{- $pairs = append $pairs (printf "%s=%s" $k $v) }}
{{- end }}
{{- join "," $pairs }}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "causeway.labels" -}}
{{ include "causeway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "causeway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "causeway.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "causeway.image" -}}
{{- $img := .Values.controller.image -}}
{{- if $img.digest -}}
{{- printf "%s@%s" $img.repository $img.digest -}}
{{- else -}}
{{- printf "%s:%s" $img.repository (default .Chart.AppVersion $img.tag) -}}
{{- end -}}
{{- end -}}

{{/* The default backend's Deployment and Service (defaultBackend). */}}
{{- define "causeway.defaultBackend.fullname" -}}
{{- printf "%s-%s" (include "causeway.fullname" .) .Values.defaultBackend.name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels that select the default backend's pods: not the controller's
(another app.kubernetes.io/name), so the controller's Service never
selects them. */}}
{{- define "causeway.defaultBackend.selectorLabels" -}}
app.kubernetes.io/name: {{ .Values.defaultBackend.name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: default-backend
{{- end -}}
