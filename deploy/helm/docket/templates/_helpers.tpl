{{- define "docket.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "docket.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* docket.selector: the labels that pick one component's pods; call with (list $ "component"). */}}
{{- define "docket.selector" -}}
{{- $ := index . 0 -}}
app.kubernetes.io/name: {{ $.Chart.Name }}
app.kubernetes.io/instance: {{ $.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "docket.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "docket.clickhouseHost" -}}
{{- if .Values.clickhouse.host -}}{{ .Values.clickhouse.host }}
{{- else if .Values.clickhouse.enabled -}}{{ include "docket.fullname" . }}-clickhouse
{{- else -}}{{ fail "clickhouse.host is required when clickhouse.enabled is false" }}
{{- end -}}
{{- end -}}

{{- define "docket.s3Endpoint" -}}
{{- if .Values.s3.endpoint -}}{{ .Values.s3.endpoint }}
{{- else if .Values.s3.minio.enabled -}}http://{{ include "docket.fullname" . }}-minio:9000
{{- else -}}{{ fail "s3.endpoint is required when s3.minio.enabled is false" }}
{{- end -}}
{{- end -}}

{{/* docket.secretEnv: one variable from a Secret; call with (list NAME SECRET KEY). */}}
{{- define "docket.secretEnv" -}}
- name: {{ index . 0 }}
  valueFrom:
    secretKeyRef: {name: {{ index . 1 | quote }}, key: {{ index . 2 | quote }}}
{{- end -}}

{{- define "docket.contentEnv" -}}
{{ include "docket.secretEnv" (list "DOCKET_CONTENT_SECRET" (required "secrets.content.name is required" .Values.secrets.content.name) .Values.secrets.content.key) }}
- name: DOCKET_S3_ENDPOINT
  value: {{ include "docket.s3Endpoint" . | quote }}
{{ include "docket.secretEnv" (list "DOCKET_S3_ACCESS_KEY" (required "secrets.s3.name is required" .Values.secrets.s3.name) .Values.secrets.s3.accessKeyKey) }}
{{ include "docket.secretEnv" (list "DOCKET_S3_SECRET_KEY" .Values.secrets.s3.name .Values.secrets.s3.secretKeyKey) }}
{{- end -}}

{{/* The password stays in its Secret: Kubernetes expands $(DOCKET_CLICKHOUSE_PASSWORD) in the container. */}}
{{- define "docket.clickhouseEnv" -}}
{{ include "docket.secretEnv" (list "DOCKET_CLICKHOUSE_PASSWORD" (required "secrets.clickhouse.name is required" .Values.secrets.clickhouse.name) .Values.secrets.clickhouse.passwordKey) }}
- name: DOCKET_CLICKHOUSE_DSN
  value: {{ printf "%s://%s:$(DOCKET_CLICKHOUSE_PASSWORD)@%s:%v/%s" .Values.clickhouse.scheme .Values.clickhouse.user (include "docket.clickhouseHost" .) .Values.clickhouse.port .Values.clickhouse.database | quote }}
{{- end -}}

{{/* The ledger storage section (gateway.yaml's DOCKET_LEDGER_STORAGE, the UI overlay's ledgerstorage). */}}
{{- define "docket.ledgerStorage" -}}
{clickhouse: {dsn: "${env:DOCKET_CLICKHOUSE_DSN}"{{ with .Values.clickhouse.cluster }}, cluster: {{ . | quote }}{{ end }}}}
{{- end -}}

{{- define "docket.gatewayEnv" -}}
{{ include "docket.clickhouseEnv" . }}
{{/* The lifecycle extension deletes content objects: gateway.yaml opens the content store too. */}}
{{ include "docket.contentEnv" . }}
- name: DOCKET_LEDGER_STORAGE
  value: {{ printf "{clickhouse: {dsn: \"$(DOCKET_CLICKHOUSE_DSN)\"%s}}" (ternary (printf ", cluster: %q" .Values.clickhouse.cluster) "" (ne .Values.clickhouse.cluster "")) | quote }}
- {name: DOCKET_GATEWAY_CERT, value: /etc/docket/tls/tls.crt}
- {name: DOCKET_GATEWAY_KEY, value: /etc/docket/tls/tls.key}
- {name: DOCKET_AGENT_CA, value: /etc/docket/tls/ca.crt}
- name: DOCKET_AGENT_NAME
  value: {{ required "tls.agent.name is required" .Values.tls.agent.name | quote }}
- name: DOCKET_TRACES_BACKEND
  value: {{ required "tracesBackend is required" .Values.tracesBackend | quote }}
- name: DOCKET_DECISION_WAIT
  value: {{ .Values.gateway.decisionWait | quote }}
{{- end -}}

{{/* The OTLP receivers' TLS and the ingest tokens (agent.yaml, collector.yaml). */}}
{{- define "docket.otlpEnv" -}}
- {name: DOCKET_OTLP_CERT, value: /etc/docket/otlp-tls/tls.crt}
- {name: DOCKET_OTLP_KEY, value: /etc/docket/otlp-tls/tls.key}
- {name: DOCKET_INGEST_TOKENS, value: /etc/docket/ingest/tokens}
{{- end -}}

{{- define "docket.agentEnv" -}}
{{ include "docket.contentEnv" . }}
- {name: DOCKET_GATEWAY_CA, value: /etc/docket/agent-tls/ca.crt}
- {name: DOCKET_AGENT_CERT, value: /etc/docket/agent-tls/tls.crt}
- {name: DOCKET_AGENT_KEY, value: /etc/docket/agent-tls/tls.key}
{{ include "docket.otlpEnv" . }}
- {name: DOCKET_DATA, value: /var/lib/docket}
# agent.yaml's static list, which agent-kubernetes.yaml replaces by the
# dns resolver: empty.
- {name: DOCKET_GATEWAYS, value: "[]"}
{{- end -}}

{{- define "docket.uiEnv" -}}
{{ include "docket.contentEnv" . }}
{{ include "docket.otlpEnv" . }}
{{ include "docket.clickhouseEnv" . }}
- name: DOCKET_TRACES_BACKEND
  value: {{ required "tracesBackend is required" .Values.tracesBackend | quote }}
- {name: DOCKET_DATA, value: /var/lib/docket}
# collector.yaml's UI certificate, which ui-kubernetes.yaml replaces by
# plain HTTP on loopback (TLS ends at the Ingress): empty.
- {name: DOCKET_UI_CERT, value: ""}
- {name: DOCKET_UI_KEY, value: ""}
{{- with .Values.secrets.adminKeys.name }}
{{ include "docket.secretEnv" (list "OPENAI_ADMIN_KEY" . $.Values.secrets.adminKeys.openaiKey) }}
{{ include "docket.secretEnv" (list "ANTHROPIC_ADMIN_KEY" . $.Values.secrets.adminKeys.anthropicKey) }}
{{- end }}
{{- end -}}

{{/* Probes on the collector's health_check extension (port 13133 in every shipped config). */}}
{{- define "docket.probes" -}}
readinessProbe:
  httpGet: {path: /, port: health}
  periodSeconds: 5
  failureThreshold: 3
livenessProbe:
  httpGet: {path: /, port: health}
  initialDelaySeconds: 30
  periodSeconds: 10
  failureThreshold: 6
{{- end -}}

{{- define "docket.securityContext" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 10001
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities: {drop: [ALL]}
{{- end -}}
