{{/* The edge tunnel's server beside nginx (tunnel.enabled,
docs/tunnel.md "Ingress traffic to edge Pods"): an init container with
NET_ADMIN writes the DNAT rules of tunnel.edgeCIDRs into the Pod's own
network namespace once, so the server container needs no privilege. */}}

{{- define "causeway.tunnel.check" -}}
{{- $c := .Values.controller -}}
{{- if .Values.tunnel.enabled -}}
{{- if $c.hostNetwork -}}
{{- fail "tunnel.enabled with controller.hostNetwork would write the tunnel's DNAT rules into the node's own network namespace; run the controller in its Pod network" -}}
{{- end -}}
{{- if not .Values.tunnel.edgeCIDRs -}}
{{- fail "tunnel.enabled needs tunnel.edgeCIDRs: the edge Pod networks nginx reaches through the tunnel" -}}
{{- end -}}
{{- if or (not .Values.tunnel.tlsSecret) (not .Values.tunnel.agentCASecret) -}}
{{- fail "tunnel.enabled needs tunnel.tlsSecret (the server's certificate) and tunnel.agentCASecret (ca.crt: the CA of the agents' certificates)" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "causeway.tunnel.initContainers" -}}
{{- $t := .Values.tunnel }}
        - name: tunnel-iptables
          image: {{ include "causeway.image" . }}
          imagePullPolicy: {{ .Values.controller.image.pullPolicy }}
          args:
            - tunnel
            - iptables
            - --target=127.0.0.1:{{ $t.transparentPort }}
            {{- range $t.edgeCIDRs }}
            - {{ printf "--cidr=%s" . | quote }}
            {{- end }}
          # iptables needs root with NET_ADMIN (and NET_RAW) in the Pod's
          # network namespace; nothing else, and only until the rules are
          # written.
          securityContext:
            runAsNonRoot: false
            runAsUser: 0
            runAsGroup: 0
            readOnlyRootFilesystem: true
            allowPrivilegeEscalation: false
            capabilities:
              drop: ["ALL"]
              add: ["NET_ADMIN", "NET_RAW"]
          volumeMounts:
            # iptables' lock file, /run/xtables.lock
            - name: tunnel-run
              mountPath: /run
{{- end -}}

{{- define "causeway.tunnel.container" -}}
{{- $t := .Values.tunnel }}
        - name: tunnel-server
          image: {{ include "causeway.image" . }}
          imagePullPolicy: {{ .Values.controller.image.pullPolicy }}
          args:
            - tunnel
            - server
            - --server-id=$(POD_NAME)
            # Replicas count one another by their Leases, so agents link
            # to every one, a rollout's surge Pod and an autoscaler's too.
            - --server-count-from-leases
            - --lease-namespace=$(POD_NAMESPACE)
            - --lease-label=causeway.io/tunnel-server={{ include "causeway.fullname" . }}
            - --agent-bind-address=:{{ $t.agentPort }}
            - --tls-cert-file=/etc/causeway/tunnel/tls/tls.crt
            - --tls-private-key-file=/etc/causeway/tunnel/tls/tls.key
            - --agent-ca-file=/etc/causeway/tunnel/agent-ca/ca.crt
            - --transparent-bind-address=127.0.0.1:{{ $t.transparentPort }}
            # Agents may claim CIDRs under routeAllow only; node addresses
            # are not looked up in the API (the controller's RBAC has no
            # nodes).
            - --authorize-node-addresses=false
            {{- range $t.routeAllow }}
            - {{ printf "--route-allow=%s" . | quote }}
            {{- end }}
            - --health-bind-address=:{{ $t.healthPort }}
            {{- range $k, $v := $t.extraArgs }}
            - {{ printf "--%s=%v" $k $v | quote }}
            {{- end }}
          env:
            - name: POD_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            - name: POD_NAMESPACE
              valueFrom:
                fieldRef:
                  fieldPath: metadata.namespace
          ports:
            - name: tunnel-agent
              containerPort: {{ $t.agentPort }}
            - name: tunnel-health
              containerPort: {{ $t.healthPort }}
          readinessProbe:
            httpGet:
              path: /readyz
              port: tunnel-health
            periodSeconds: 2
          livenessProbe:
            httpGet:
              path: /healthz
              port: tunnel-health
            periodSeconds: 10
          resources:
            {{- toYaml $t.resources | nindent 12 }}
          securityContext:
            readOnlyRootFilesystem: true
            allowPrivilegeEscalation: false
            capabilities:
              drop: ["ALL"]
          volumeMounts:
            - name: tunnel-tls
              mountPath: /etc/causeway/tunnel/tls
              readOnly: true
            - name: tunnel-agent-ca
              mountPath: /etc/causeway/tunnel/agent-ca
              readOnly: true
{{- end -}}

{{- define "causeway.tunnel.volumes" -}}
{{- $t := .Values.tunnel }}
        - name: tunnel-run
          emptyDir: {}
        - name: tunnel-tls
          secret:
            secretName: {{ $t.tlsSecret }}
        - name: tunnel-agent-ca
          secret:
            secretName: {{ $t.agentCASecret }}
{{- end -}}
