package files

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Gateway API's kinds decode with the source's scheme, land in their own
// snapshot fields, and get the default namespace like the built-in kinds,
// but GatewayClass, which is cluster-scoped; a malformed one is a Problem
// that blocks none of the others.
func TestGatewayAPIResources(t *testing.T) {
	const manifest = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: causeway}
spec: {controllerName: causeway.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: causeway
  listeners:
  - {name: https, port: 443, protocol: HTTPS, hostname: "*.example.com", tls: {certificateRefs: [{name: wildcard}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: team}
spec:
  parentRefs: [{name: gw, namespace: default}]
  hostnames: [www.example.com]
  rules: [{backendRefs: [{name: web, port: 80, weight: 3}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: grpc}
spec: {rules: [{backendRefs: [{name: grpc, port: 9000}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: tls}
spec: {hostnames: [db.example.com], rules: [{backendRefs: [{name: db, port: 5432}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: tcp}
spec: {rules: [{backendRefs: [{name: db, port: 5432}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: UDPRoute
metadata: {name: dns}
spec: {rules: [{backendRefs: [{name: coredns, port: 53}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: allow, namespace: certs}
spec:
  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: default}]
  to: [{group: "", kind: Secret}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: tls}
spec:
  targetRefs: [{group: "", kind: Service, name: web}]
  validation: {caCertificateRefs: [{group: "", kind: ConfigMap, name: ca}], hostname: web.internal}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: broken}
spec: {hostnames: "not a list"}
---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TCPRoute
metadata: {name: old}
spec: {}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: team, namespace: team}
spec:
  parentRef: {name: gw, namespace: default}
  listeners:
  - {name: https, port: 8443, protocol: HTTPS, hostname: team.example.com, tls: {certificateRefs: [{name: team-cert}]}}
`
	dir := t.TempDir()
	file := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	put := func(kind, ns, name string) { got[kind] = append(got[kind], ns+"/"+name) }
	for _, o := range snap.GatewayClasses {
		put("GatewayClass", o.Namespace, o.Name)
	}
	for _, o := range snap.Gateways {
		put("Gateway", o.Namespace, o.Name)
	}
	for _, o := range snap.ListenerSets {
		put("ListenerSet", o.Namespace, o.Name)
	}
	for _, o := range snap.HTTPRoutes {
		put("HTTPRoute", o.Namespace, o.Name)
	}
	for _, o := range snap.GRPCRoutes {
		put("GRPCRoute", o.Namespace, o.Name)
	}
	for _, o := range snap.TLSRoutes {
		put("TLSRoute", o.Namespace, o.Name)
	}
	for _, o := range snap.TCPRoutes {
		put("TCPRoute", o.Namespace, o.Name)
	}
	for _, o := range snap.UDPRoutes {
		put("UDPRoute", o.Namespace, o.Name)
	}
	for _, o := range snap.ReferenceGrants {
		put("ReferenceGrant", o.Namespace, o.Name)
	}
	for _, o := range snap.BackendTLSPolicies {
		put("BackendTLSPolicy", o.Namespace, o.Name)
	}
	want := map[string][]string{
		"GatewayClass": {"/causeway"}, "Gateway": {"default/gw"}, "ListenerSet": {"team/team"}, "HTTPRoute": {"team/web"}, "GRPCRoute": {"default/grpc"},
		"TLSRoute": {"default/tls"}, "TCPRoute": {"default/tcp"}, "UDPRoute": {"default/dns"},
		"ReferenceGrant": {"certs/allow"}, "BackendTLSPolicy": {"default/tls"},
	}
	for kind, names := range want {
		if !slices.Equal(got[kind], names) {
			t.Errorf("%s: %v, want %v", kind, got[kind], names)
		}
	}
	// Whole, typed objects.
	if r := snap.HTTPRoutes[0]; len(r.Spec.Rules) != 1 || *r.Spec.Rules[0].BackendRefs[0].Weight != 3 || r.Spec.Hostnames[0] != "www.example.com" {
		t.Errorf("HTTPRoute %+v", r.Spec)
	}
	if g := snap.Gateways[0]; g.Spec.Listeners[0].TLS.CertificateRefs[0].Name != "wildcard" || g.Spec.Listeners[0].Protocol != gwv1.HTTPSProtocolType {
		t.Errorf("Gateway %+v", g.Spec)
	}
	if ls := snap.ListenerSets[0]; ls.Spec.ParentRef.Name != "gw" || ls.Spec.Listeners[0].Port != 8443 ||
		ls.Spec.Listeners[0].TLS.CertificateRefs[0].Name != "team-cert" {
		t.Errorf("ListenerSet %+v", ls.Spec)
	}
	problems := map[string]bool{}
	for _, p := range snap.Problems {
		if p.Where != file {
			t.Errorf("problem %+v not in %s", p, file)
		}
		problems[strings.Fields(p.Message)[0]+" "+strings.Fields(p.Message)[1]] = true
	}
	if len(snap.Problems) != 2 || !problems["document 10:"] || !problems["document 11:"] ||
		!strings.Contains(snap.Problems[1].Message, "v1alpha2") {
		t.Errorf("problems %+v: want the malformed HTTPRoute (10) and the v1alpha2 TCPRoute (11)", snap.Problems)
	}
}

// Namespaces (cluster-scoped: no default namespace) come with their name
// and labels only; a Service labelled as a Gateway's is a Gateway Service
// as well as a Service.
func TestNamespacesAndGatewayServices(t *testing.T) {
	const manifest = `apiVersion: v1
kind: Namespace
metadata: {name: team, labels: {shared: "true"}, annotations: {note: dropped}}
---
apiVersion: v1
kind: Service
metadata:
  name: gw-default-gw-0123456789
  namespace: causeway-system
  labels: {app.kubernetes.io/managed-by: causeway-gateway, gateway.causeway.io/namespace: default, gateway.causeway.io/name: gw}
spec:
  ports: [{name: p80, port: 80, targetPort: 20000}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  ports: [{port: 80}]
`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ns.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Namespaces) != 1 || snap.Namespaces[0].Name != "team" || snap.Namespaces[0].Namespace != "" ||
		snap.Namespaces[0].Labels["shared"] != "true" || snap.Namespaces[0].Annotations != nil {
		t.Errorf("Namespaces %+v", snap.Namespaces)
	}
	if len(snap.Services) != 2 || len(snap.GatewayServices) != 1 || snap.GatewayServices[0].Namespace != "causeway-system" {
		t.Errorf("Services %d, GatewayServices %+v", len(snap.Services), snap.GatewayServices)
	}
}
