package spec

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Namespace is where a row's objects live.
const Namespace = "default"

// In moves a row into namespace ns and its hosts under the suffix
// ".<ns>.test" instead of ".test", so that many rows can be served by one
// controller without meeting: hosts, annotation values, the request and
// the expected response are all rewritten.
func (c AnnotationCase) In(ns string) AnnotationCase {
	hosts := strings.NewReplacer(".test", "."+ns+".test", Namespace+"/", ns+"/")
	out := c
	out.Ingresses = nil
	for _, ing := range c.Ingresses {
		ing.Host = hosts.Replace(ing.Host)
		a := map[string]string{}
		for k, v := range ing.Annotations {
			a[k] = hosts.Replace(v)
		}
		ing.Annotations = a
		out.Ingresses = append(out.Ingresses, ing)
	}
	out.Request.Host = hosts.Replace(c.Request.Host)
	out.Want.Location = hosts.Replace(c.Want.Location)
	out.Want.Host = hosts.Replace(c.Want.Host)
	if c.Want.Upstream != nil {
		out.Want.Upstream = map[string]string{}
		for k, v := range c.Want.Upstream {
			if k == "X-Namespace" {
				v = ns
			}
			out.Want.Upstream[k] = v
		}
	}
	out.namespace = ns
	return out
}

func (c AnnotationCase) ns() string {
	if c.namespace != "" {
		return c.namespace
	}
	return Namespace
}

// Endpoint is the address a Service's one endpoint listens on.
type Endpoint struct {
	IP   string
	Port int
}

// Services lists every Service a row names, in Ingress order: its paths'
// Services and those its annotations name (default-backend).
func (c AnnotationCase) Services() []string {
	var out []string
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, ing := range c.Ingresses {
		for _, r := range ing.Paths {
			add(r.Service)
		}
		add(ing.Annotations["default-backend"])
	}
	return out
}

// Manifests writes the row's objects as YAML manifests: its Ingresses
// (created one second apart, in order, with the annotations under
// prefix), a Service per name on port 80 with one ready endpoint from
// endpoints (none for Empty Services), and its ConfigMaps.
func (c AnnotationCase) Manifests(prefix string, endpoints map[string]Endpoint) string {
	var b strings.Builder
	for i, ing := range c.Ingresses {
		fmt.Fprintf(&b, "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: %s\n  namespace: %s\n  uid: uid-%s-%s\n  creationTimestamp: \"2026-01-01T00:00:%02dZ\"\n",
			ing.Name, c.ns(), c.ns(), ing.Name, i)
		if len(ing.Annotations) > 0 {
			b.WriteString("  annotations:\n")
			keys := make([]string, 0, len(ing.Annotations))
			for k := range ing.Annotations {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				fmt.Fprintf(&b, "    %s/%s: %q\n", prefix, k, withAuthService(ing.Annotations[k], endpoints))
			}
		}
		fmt.Fprintf(&b, "spec:\n  ingressClassName: causeway\n")
		if ing.TLS {
			fmt.Fprintf(&b, "  tls:\n  - hosts: [%q]\n", ing.Host)
		}
		fmt.Fprintf(&b, "  rules:\n  - host: %q\n    http:\n      paths:\n", ing.Host)
		for _, r := range ing.Paths {
			fmt.Fprintf(&b, "      - {path: %q, pathType: %s, backend: {service: {name: %s, port: {number: 80}}}}\n", r.Path, r.Type, r.Service)
		}
		b.WriteString("---\n")
	}
	for _, svc := range c.Services() {
		e := endpoints[svc]
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: %s}\nspec:\n  clusterIP: 10.96.0.10\n  ports: [{name: http, port: 80}]\n---\n", svc, c.ns())
		eps := "  []\n"
		if !slices.Contains(c.Empty, svc) {
			eps = fmt.Sprintf("  - addresses: [%q]\n    conditions: {ready: true}\n", e.IP)
		}
		fmt.Fprintf(&b, "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: %s-1\n  namespace: %s\n  labels: {kubernetes.io/service-name: %s}\naddressType: IPv4\nports: [{name: http, port: %d, protocol: TCP}]\nendpoints:\n%s---\n",
			svc, c.ns(), svc, e.Port, eps)
	}
	names := make([]string, 0, len(c.ConfigMaps))
	for n := range c.ConfigMaps {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		b.WriteString(ConfigMapYAML(c.ns(), n, c.ConfigMaps[n]))
	}
	for _, n := range slices.Sorted(maps.Keys(c.Secrets)) {
		b.WriteString(SecretYAML(c.ns(), n, c.Secrets[n]))
	}
	return b.String()
}

// ConfigMapYAML is a ConfigMap manifest.
func ConfigMapYAML(ns, name string, data map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata:\n", name, ns)
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s: %q\n", k, data[k])
	}
	b.WriteString("---\n")
	return b.String()
}

// UnionConfig merges the Config of rows: equal values once, different
// values of one key joined with ", " (the keys rows set are lists).
func UnionConfig(rows []AnnotationCase) map[string]string {
	out := map[string]string{}
	for _, r := range rows {
		for k, v := range r.Config {
			switch prev, ok := out[k]; {
			case !ok:
				out[k] = v
			case prev != v:
				out[k] = prev + ", " + v
			}
		}
	}
	return out
}
