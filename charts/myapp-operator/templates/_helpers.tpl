{{/* The release's name prefix of every object, at most 63 characters. */}}
{{- define "myapp-operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "myapp-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* What selects the manager's pods. */}}
{{- define "myapp-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
control-plane: controller-manager
{{- end -}}

{{- define "myapp-operator.serviceAccountName" -}}
{{ include "myapp-operator.fullname" . }}-controller-manager
{{- end -}}


{{/* Fails on a dnsProvider the chart does not know. */}}
{{- define "myapp-operator.dnsProvider" -}}
{{- $p := .Values.dnsProvider | default "http" -}}
{{- if not (has $p (list "http" "rfc2136" "webhook")) -}}
{{- fail (printf "dnsProvider must be http, rfc2136 or webhook, not %q" $p) -}}
{{- end -}}
{{- $p -}}
{{- end -}}

{{/* Fails on a backupProvider the chart does not know. */}}
{{- define "myapp-operator.backupProvider" -}}
{{- $p := .Values.backupProvider | default "http" -}}
{{- if not (has $p (list "http" "s3")) -}}
{{- fail (printf "backupProvider must be http or s3, not %q" $p) -}}
{{- end -}}
{{- $p -}}
{{- end -}}

{{/* Whether a provider uses the external services' bearer token: "true"
or "". */}}
{{- define "myapp-operator.usesToken" -}}
{{- if or (eq (include "myapp-operator.dnsProvider" .) "http") (eq (include "myapp-operator.backupProvider" .) "http") -}}
true
{{- end -}}
{{- end -}}

{{/* Where the S3 keys are mounted, with backupProvider: s3. */}}
{{- define "myapp-operator.s3CredentialsDir" -}}
/etc/myapp.dev/s3
{{- end -}}

{{/* The webhook sidecar's image, with dnsProvider: webhook: both parts are
required, as in external-dns's chart. */}}
{{- define "myapp-operator.webhookImage" -}}
{{- with .Values.webhook.image -}}
{{- printf "%s:%s" (required "webhook.image.repository is required with dnsProvider: webhook" .repository) (required "webhook.image.tag is required with dnsProvider: webhook" .tag) -}}
{{- end -}}
{{- end -}}

{{/* Where the TSIG key file is mounted, with dnsProvider: rfc2136. */}}
{{- define "myapp-operator.tsigKeyDir" -}}
/etc/myapp.dev/tsig
{{- end -}}

{{/* The manager's image: by digest when one is set, else by tag (the
chart's appVersion by default). */}}
{{- define "myapp-operator.image" -}}
{{- with .Values.image -}}
{{- if .digest -}}
{{- printf "%s@%s" .repository .digest -}}
{{- else -}}
{{- printf "%s:%s" .repository (.tag | default $.Chart.AppVersion) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Whether the chart installs a PodDisruptionBudget: as
podDisruptionBudget.enable says, or, when it is null, with more than one
replica. */}}
{{- define "myapp-operator.pdbEnabled" -}}
{{- $enable := .Values.podDisruptionBudget.enable -}}
{{- if kindIs "bool" $enable -}}
{{- if $enable }}true{{ end -}}
{{- else if gt (int .Values.replicaCount) 1 -}}
true
{{- end -}}
{{- end -}}

{{/* Fails when several replicas would run without leader election: each
would reconcile every object, and two managers would race on every DNS
record and backup. */}}
{{- define "myapp-operator.leaderElectionRequired" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.manager.leaderElection.enabled) -}}
{{- fail (printf "replicaCount %d needs manager.leaderElection.enabled: without leader election every replica would reconcile every object" (int .Values.replicaCount)) -}}
{{- end -}}
{{- end -}}
