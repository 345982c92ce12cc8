{{/* The controller's Pod template, shared by the Deployment and the
DaemonSet (controller.kind), indented to sit under "template:". */}}
{{- define "causeway.podTemplate" -}}
{{- $c := .Values.controller }}
{{- $ports := include "causeway.ports" . | fromYaml }}
{{- $status := include "causeway.statusPorts" . | fromYaml }}
    metadata:
      labels:
        {{- include "causeway.selectorLabels" . | nindent 8 }}
        {{- with $c.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        # A changed controller.config needs no restart; only the flags do.
        checksum/args: {{ toJson $c.extraArgs | sha256sum | trunc 16 }}
        {{- with $c.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "causeway.serviceAccountName" . }}
      terminationGracePeriodSeconds: {{ $c.terminationGracePeriodSeconds }}
      {{- with $c.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- if $c.hostNetwork }}
      hostNetwork: true
      {{- end }}
      dnsPolicy: {{ $c.dnsPolicy }}
      {{- with .Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        runAsNonRoot: true
        runAsUser: 101
        runAsGroup: 101
        seccompProfile:
          type: RuntimeDefault
      {{- with $c.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $c.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $c.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- if and $c.topologySpreadConstraints (ne $c.kind "DaemonSet") }}
      topologySpreadConstraints:
        {{- range $c.topologySpreadConstraints }}
        - {{- toYaml . | nindent 10 }}
          labelSelector:
            matchLabels:
              {{- include "causeway.selectorLabels" $ | nindent 14 }}
        {{- end }}
      {{- end }}
      {{- include "causeway.tunnel.check" . }}
      {{- if .Values.tunnel.enabled }}
      initContainers:
        {{- include "causeway.tunnel.initContainers" . }}
      {{- end }}
      containers:
        - name: controller
          image: {{ include "causeway.image" . }}
          imagePullPolicy: {{ $c.image.pullPolicy }}
          args:
            - controller
            - --configmap={{ .Release.Namespace }}/{{ include "causeway.fullname" . }}
            {{- if and $c.service.enabled (include "causeway.publishService" .) }}
            - --publish-service={{ .Release.Namespace }}/{{ include "causeway.fullname" . }}
            {{- end }}
            - --leader-election-id={{ $c.electionID }}
            - --ingress-class={{ $c.ingressClass }}
            - --controller-name={{ $c.ingressClassResource.controllerValue }}
            {{- if $c.watchIngressWithoutClass }}
            - --watch-ingress-without-class=true
            {{- end }}
            {{- if $c.scope.enabled }}
            - --watch-namespace={{ default .Release.Namespace $c.scope.namespace }}
            {{- else if $c.scope.namespaceSelector }}
            - --watch-namespace-selector={{ $c.scope.namespaceSelector }}
            {{- end }}
            {{- if .Values.tcp }}
            - --tcp-services-configmap={{ .Release.Namespace }}/{{ include "causeway.fullname" . }}-tcp
            {{- end }}
            {{- if .Values.udp }}
            - --udp-services-configmap={{ .Release.Namespace }}/{{ include "causeway.fullname" . }}-udp
            {{- end }}
            {{- if .Values.defaultBackend.enabled }}
            - --default-backend-service={{ .Release.Namespace }}/{{ include "causeway.defaultBackend.fullname" . }}
            {{- end }}
            {{- if $c.gatewayAPI.enabled }}
            - --gateway-service-type={{ $c.gatewayAPI.serviceType }}
            - --gateway-port-range={{ $c.gatewayAPI.portRange }}
            # The Gateways' Services select the Pods by the Deployment's
            # own selector labels.
            - --gateway-service-selector={{ include "causeway.selectorFlag" . }}
            {{- else }}
            - --enable-gateway-api=false
            {{- end }}
            {{- if $c.certManager.enabled }}
            - --enable-cert-manager=true
            {{- end }}
            {{- if $c.externalDNS.enabled }}
            - --enable-external-dns=true
            {{- end }}
            - --http-port={{ $ports.http }}
            - --https-port={{ $ports.https }}
            {{- if $ports.privileged }}
            # Ports below 1024 for uid 101: the copy of nginx that carries
            # the file capability cap_net_bind_service (docs/install.md).
            - --nginx-binary=/usr/sbin/nginx-net-bind-service
            {{- end }}
            {{- if $status.one }}
            # /healthz, /readyz and /metrics on one port, as in ingress-nginx.
            - --healthz-port={{ $status.health }}
            {{- else }}
            - --health-port={{ $status.health }}
            - --metrics-port={{ $status.metrics }}
            {{- end }}
            - --enable-metrics={{ $c.metrics.enabled }}
            # A directory of its own in the volume: the volume itself is
            # the kubelet's (root, 0777), and the state directory must be
            # private to the controller.
            - --state-dir=/var/lib/causeway/state
            - --shutdown-grace-period={{ $c.shutdownGracePeriod }}
            - --shutdown-timeout={{ $c.shutdownTimeout }}
            {{- if $c.admissionWebhooks.enabled }}
            - --validating-webhook-address=:{{ $c.admissionWebhooks.port }}
            - --validating-webhook-configuration={{ include "causeway.fullname" . }}-admission
            - --validating-webhook-mode={{ $c.admissionWebhooks.mode }}
            {{- end }}
            {{- range $k, $v := $c.extraArgs }}
            {{- if eq (toString $v) "" }}
            - --{{ $k }}
            {{- else }}
            - --{{ $k }}={{ $v }}
            {{- end }}
            {{- end }}
          env:
            - name: POD_NAMESPACE
              valueFrom:
                fieldRef:
                  fieldPath: metadata.namespace
            # controller_pod on the nginx_ingress_controller_* metrics.
            - name: POD_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            {{- with $c.extraEnvs }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          ports:
            - name: http
              containerPort: {{ $ports.http }}
              {{- if $c.hostPort.enabled }}
              hostPort: {{ $c.hostPort.ports.http }}
              {{- end }}
            - name: https
              containerPort: {{ $ports.https }}
              {{- if $c.hostPort.enabled }}
              hostPort: {{ $c.hostPort.ports.https }}
              {{- end }}
            {{- if not $status.one }}
            - name: health
              containerPort: {{ $status.health }}
            {{- end }}
            - name: metrics
              containerPort: {{ $status.metrics }}
            {{- range $proto, $services := dict "tcp" .Values.tcp "udp" .Values.udp }}
            {{- range $port, $_ := $services }}
            - name: {{ $port }}-{{ $proto }}
              containerPort: {{ $port }}
              protocol: {{ upper $proto }}
              {{- if $c.hostPort.enabled }}
              hostPort: {{ $port }}
              {{- end }}
            {{- end }}
            {{- end }}
            {{- if $c.admissionWebhooks.enabled }}
            - name: webhook
              containerPort: {{ $c.admissionWebhooks.port }}
            {{- end }}
          # Liveness never depends on the API server: during an API outage
          # nginx keeps serving the last good configuration.
          livenessProbe:
            httpGet:
              path: /healthz
              port: {{ $status.probePort }}
            periodSeconds: 10
            failureThreshold: 3
          # Ready once caches have synced and a configuration is live; not
          # ready from the first moment of a shutdown
          # (controller.shutdownGracePeriod).
          readinessProbe:
            httpGet:
              path: /readyz
              port: {{ $status.probePort }}
            periodSeconds: 2
            failureThreshold: 2
          startupProbe:
            httpGet:
              path: /healthz
              port: {{ $status.probePort }}
            periodSeconds: 2
            failureThreshold: 30
          {{- with $c.lifecycle }}
          lifecycle:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          resources:
            {{- toYaml $c.resources | nindent 12 }}
          securityContext:
            readOnlyRootFilesystem: true
            {{- if $ports.privileged }}
            # The file capability of nginx-net-bind-service is granted only
            # to a process that may gain privileges, and only within the
            # bounding set.
            allowPrivilegeEscalation: true
            capabilities:
              drop: ["ALL"]
              add: ["NET_BIND_SERVICE"]
            {{- else }}
            allowPrivilegeEscalation: false
            capabilities:
              drop: ["ALL"]
            {{- end }}
          volumeMounts:
            - name: state
              mountPath: /var/lib/causeway
            - name: tmp
              mountPath: /tmp
            {{- with $c.extraVolumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
        {{- if .Values.tunnel.enabled }}
        {{- include "causeway.tunnel.container" . }}
        {{- end }}
      volumes:
        - name: state
          emptyDir: {}
        - name: tmp
          emptyDir: {}
        {{- if .Values.tunnel.enabled }}
        {{- include "causeway.tunnel.volumes" . }}
        {{- end }}
        {{- with $c.extraVolumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
{{- end -}}

{{/* The ports nginx listens on in the container: the unprivileged
containerPort values, or on the host network the hostPort values (the
node's ports 80 and 443), and whether one is below 1024. */}}
{{- define "causeway.ports" -}}
{{- $c := .Values.controller -}}
{{- $http := int $c.containerPort.http -}}
{{- $https := int $c.containerPort.https -}}
{{- if $c.hostNetwork -}}
{{- $http = int $c.hostPort.ports.http -}}
{{- $https = int $c.hostPort.ports.https -}}
{{- end -}}
{{- $privileged := or (lt $http 1024) (lt $https 1024) -}}
{{- range $port, $_ := merge (dict) .Values.tcp .Values.udp -}}
{{- if lt (int $port) 1024 }}{{ $privileged = true }}{{ end -}}
{{- end -}}
http: {{ $http }}
https: {{ $https }}
privileged: {{ $privileged }}
{{- end -}}

{{/* The ports of /healthz and /readyz (health) and /metrics, and the one
the probes use: one port, named metrics, with ingress-nginx's layout
(controller.ingressNginxLayout, 10254) or equal healthPort and
metrics.port. */}}
{{- define "causeway.statusPorts" -}}
{{- $c := .Values.controller -}}
{{- $health := int $c.healthPort -}}
{{- $metrics := int $c.metrics.port -}}
{{- if $c.ingressNginxLayout -}}
{{- $health = 10254 -}}
{{- $metrics = 10254 -}}
{{- end -}}
health: {{ $health }}
metrics: {{ $metrics }}
one: {{ eq $health $metrics }}
probePort: {{ if eq $health $metrics }}metrics{{ else }}health{{ end }}
{{- end -}}

{{/* Whether Ingress status publishes the Service's addresses:
controller.publishService.enabled, ingress-nginx's name, or
controller.service.publish, the older one; either false turns it off. */}}
{{- define "causeway.publishService" -}}
{{- if and .Values.controller.publishService.enabled .Values.controller.service.publish -}}
true
{{- end -}}
{{- end -}}
