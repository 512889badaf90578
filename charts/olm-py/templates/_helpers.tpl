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

{{/* The olm-py image. image.repository has no default (nothing publishes one): without it the
install fails here, before anything is created, saying what to set. */}}
{{- define "olm-py.image" -}}
{{- if not .Values.image.repository -}}
{{- fail "image.repository is not set, and no public registry publishes the olm-py image. Set the image you pushed: --set image.repository=<registry>/olm-py (image.tag defaults to the chart's appVersion). Or, from an olm-py checkout, run `make release REGISTRY=<host[:port]/path>`: it pushes the image and a chart that names it (oci://<host[:port]/path>/charts/olm-py), which installs with no values." -}}
{{- end -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}
