{{/* The ClusterRole's rules for namespaced objects, which a Role in the
watched namespace grants instead with controller.scope. */}}
{{- define "causeway.namespacedRules" }}
  # status.loadBalancer.ingress is written with a merge patch of the status
  # subresource only, so the rest of the object is never written.
  - apiGroups: ["networking.k8s.io"]
    resources: ["ingresses/status"]
    verbs: ["patch"]
  # Services also cover --publish-service.
  - apiGroups: [""]
    resources: ["services"]
    verbs: ["list", "watch"]
  - apiGroups: ["discovery.k8s.io"]
    resources: ["endpointslices"]
    verbs: ["list", "watch"]
  # With the custom resources: Pods' labels, for a VirtualServer
  # upstream's subselector (an endpoint names its Pod). Listed and
  # watched as metadata only (no spec, no status); only the name,
  # namespace and labels are kept in memory.
  - apiGroups: [""]
    resources: ["pods"]
    verbs: ["list", "watch"]
  # Every request selects: TLS certificates by fieldSelector
  # type=kubernetes.io/tls, and a Secret that an Ingress annotation names
  # (proxy-ssl-secret, auth-secret, auth-tls-secret), a Policy (basicAuth,
  # apiKey, the CAs of ingressMTLS, egressMTLS, externalAuth) or the
  # controller's ConfigMap (ssl-dh-param) names by fieldSelector
  # metadata.name=<name> in its namespace, only while something names it.
  # RBAC cannot authorize by field selector, hence no resourceNames here.
  - apiGroups: [""]
    resources: ["secrets"]
    verbs: ["list", "watch"]
  # ConfigMaps that an Ingress annotation names (custom-headers,
  # auth-proxy-set-headers), or the controller's ConfigMap (add-headers,
  # proxy-set-headers), in any namespace: every request selects one object,
  # by fieldSelector metadata.name=<name> in its namespace, only while
  # something names it. The names come from those objects, so resourceNames
  # cannot list them.
  - apiGroups: [""]
    resources: ["configmaps"]
    verbs: ["list", "watch"]
  # NGINX Ingress Controller's resources (--enable-custom-resources):
  # dynamic informers list and watch those whose CRDs discovery finds at
  # start.
  - apiGroups: ["k8s.nginx.org"]
    resources: ["virtualservers", "virtualserverroutes", "transportservers", "policies", "globalconfigurations"]
    verbs: ["list", "watch"]
  # The leader writes their status (state, reason, message, and where
  # the kind has them externalEndpoints and referencedBy) as NIC does,
  # with a merge patch of the status subresource only; only objects the
  # informers found are written. GlobalConfiguration has no status.
  - apiGroups: ["k8s.nginx.org"]
    resources: ["virtualservers/status", "virtualserverroutes/status", "transportservers/status", "policies/status"]
    verbs: ["patch"]
  {{- if .Values.controller.gatewayAPI.enabled }}
  # Gateway API's namespaced resources (--enable-gateway-api): dynamic
  # informers list and watch those whose CRDs discovery finds
  # (gateway.networking.k8s.io/v1, the standard channel). GatewayClasses
  # are cluster-scoped: the ClusterRole grants them.
  - apiGroups: ["gateway.networking.k8s.io"]
    resources: ["gateways", "listenersets", "httproutes", "grpcroutes", "tlsroutes", "tcproutes", "udproutes", "referencegrants", "backendtlspolicies"]
    verbs: ["list", "watch"]
  # The leader writes the status of the Gateways, ListenerSets and
  # routes of its classes (a route's entries of other controllers are
  # kept): an update of the status subresource, which for a custom
  # resource writes nothing but status, and after a conflict a get of it,
  # to merge into the newer status. ReferenceGrant has no status; a
  # BackendTLSPolicy's entries of status.ancestors for Gateways of its
  # classes are written the same way (other controllers' are kept).
  - apiGroups: ["gateway.networking.k8s.io"]
    resources: ["gateways/status", "listenersets/status", "httproutes/status", "grpcroutes/status", "tlsroutes/status", "tcproutes/status", "udproutes/status", "backendtlspolicies/status"]
    verbs: ["get", "update"]
  {{- end }}
  {{- if .Values.controller.certManager.enabled }}
  # --enable-cert-manager: the leader reads the Certificate a VirtualServer
  # asks for by name, creates or updates it, and lists the namespace's to
  # delete the ones of a tls.secret the VirtualServer no longer names.
  - apiGroups: ["cert-manager.io"]
    resources: ["certificates"]
    verbs: ["get", "list", "create", "update", "delete"]
  {{- end }}
  {{- if .Values.controller.externalDNS.enabled }}
  # --enable-external-dns: the same for the DNSEndpoint a VirtualServer
  # asks for, named after it.
  - apiGroups: ["externaldns.nginx.org"]
    resources: ["dnsendpoints"]
    verbs: ["get", "list", "create", "update", "delete"]
  {{- end }}
  # Events on Ingresses (and on the Lease, when leadership changes hands):
  # created, then patched when the same event repeats.
  - apiGroups: [""]
    resources: ["events"]
    verbs: ["create", "patch"]
{{- end -}}
