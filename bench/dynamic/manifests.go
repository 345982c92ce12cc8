package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/causeway/causeway/test/testcert"
)

// Namespace and names of the objects the benchmark serves.
const (
	ns       = "bench"
	service  = "web"
	httpHost = "web.bench.test"
)

const ingressClassYAML = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: causeway}
spec: {controller: causeway.io/ingress-controller}
---
`

// serviceYAML is the Service whose EndpointSlice the benchmark rewrites.
func serviceYAML() string {
	return fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: %s}\nspec:\n  ports: [{name: http, port: 80}]\n---\n", service, ns)
}

// sliceYAML is the Service's only EndpointSlice: every address is a ready
// endpoint on port.
func sliceYAML(port int, ips ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: %s-1\n  namespace: %s\n  labels: {kubernetes.io/service-name: %s}\naddressType: IPv4\nports: [{name: http, port: %d, protocol: TCP}]\nendpoints:\n",
		service, ns, service, port)
	if len(ips) == 0 {
		b.WriteString("  []\n")
	}
	for _, ip := range ips {
		fmt.Fprintf(&b, "  - addresses: [%q]\n    conditions: {ready: true}\n", ip)
	}
	return b.String()
}

// ingressYAML routes host (over HTTP only) to the Service.
func ingressYAML(name, host string) string {
	return tlsIngressYAML(name, host, "")
}

// tlsIngressYAML routes host over HTTPS, with the certificate in secret;
// with no secret, over HTTP only.
func tlsIngressYAML(name, host, secret string) string {
	tls := ""
	if secret != "" {
		tls = fmt.Sprintf("  tls: [{hosts: [%q], secretName: %s}]\n", host, secret)
	}
	return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: %s, namespace: %s}
spec:
  ingressClassName: causeway
%s  rules:
  - host: %q
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: %s, port: {number: 80}}}}
---
`, name, ns, tls, host, service)
}

// annotatedIngressYAML routes host's / to svc through an Ingress named name
// with the given ingress-nginx annotations (names without the prefix), in
// their order.
func annotatedIngressYAML(name, host, svc string, annotations ...[2]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: %s\n  namespace: %s\n  annotations:\n", name, ns)
	for _, a := range annotations {
		fmt.Fprintf(&b, "    nginx.ingress.kubernetes.io/%s: %q\n", a[0], a[1])
	}
	fmt.Fprintf(&b, "spec:\n  ingressClassName: causeway\n  rules:\n  - host: %q\n    http:\n      paths:\n      - {path: /, pathType: Prefix, backend: {service: {name: %s, port: {number: 80}}}}\n---\n", host, svc)
	return b.String()
}

// configMapYAML is the controller's ConfigMap (--configmap causeway/config).
func configMapYAML(data map[string]string) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: config, namespace: causeway}\ndata:\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s: %q\n", k, data[k])
	}
	b.WriteString("---\n")
	return b.String()
}

// keyBits maps a -tls-keys name to an RSA size; 0 means ECDSA P-256.
var keyBits = map[string]int{"ecdsa": 0, "rsa2048": 2048}

// certificate is a self-signed certificate and key for one host.
type certificate struct {
	host string
	// varHost is a second name in the certificate, served by the
	// hand-written nginx through a variable certificate path.
	varHost string
	// luaHost is a third name, served by the hand-written nginx through
	// ssl_certificate_by_lua with the parsed certificate cached per worker.
	luaHost string
	kind    string // "ECDSA P-256" or "RSA 2048"
	// pem is the certificate followed by the key, the bundle format the
	// controller writes for nginx too.
	pem []byte
	crt []byte
	key []byte
}

// newCertificate makes a self-signed certificate for host, also valid for
// "var-" + host.
func newCertificate(host string, rsaBits int) (*certificate, error) {
	varHost := "var-" + host
	luaHost := "lua-" + host
	crt, key, err := testcert.SelfSigned(rsaBits, 24*time.Hour, host, varHost, luaHost)
	if err != nil {
		return nil, err
	}
	kind := "ECDSA P-256"
	if rsaBits > 0 {
		kind = fmt.Sprintf("RSA %d", rsaBits)
	}
	c := &certificate{host: host, varHost: varHost, luaHost: luaHost, kind: kind,
		crt: crt, key: key}
	c.pem = append(append([]byte{}, c.crt...), c.key...)
	return c, nil
}

// secretYAML is a kubernetes.io/tls Secret holding the certificate.
func (c *certificate) secretYAML(name string) string {
	return testcert.SecretYAML(ns, name, c.crt, c.key)
}

// writeManifest writes dir/name atomically: a dot-file (which the files
// source ignores) renamed over the target. It returns the moment just
// before the rename, when the change becomes visible.
func writeManifest(dir, name, body string) (time.Time, error) {
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		return time.Time{}, fmt.Errorf("write manifest %s: %w", name, err)
	}
	at := time.Now()
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return time.Time{}, fmt.Errorf("rename manifest %s: %w", name, err)
	}
	return at, nil
}
