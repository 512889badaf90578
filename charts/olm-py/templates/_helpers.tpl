{{/* Labels every object of the chart carries (no Helm-only labels: `olm install` applies the
same rendering without Helm). */}}
{{- define "olm-py.labels" -}}
app.kubernetes.io/name: olm-py
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: olm-py
{{- end }}

{{/* The Deployment's selector: stable across upgrades. */}}
{{- define "olm-py.selectorLabels" -}}
app.kubernetes.io/name: olm-py
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "olm-py.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}
