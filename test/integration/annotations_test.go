package integration

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/causeway/causeway/test/harness"
	"github.com/causeway/causeway/test/spec"
)

// TestAnnotationTableAgainstNginx sends every row of the annotation
// behaviour table to a real nginx, each row in its own namespace and
// hosts, all served by one controller, and compares with the row's
// expected response (which the build tests check the Model against too).
func TestAnnotationTableAgainstNginx(t *testing.T) {
	t.Parallel()
	runAnnotationTable(t, spec.AnnotationTable)
}

// TestConfigAccessTableAgainstNginx sends the rows whose ConfigMap keys
// would change every other row's answer, each to a controller of its own.
func TestConfigAccessTableAgainstNginx(t *testing.T) {
	t.Parallel()
	for _, tc := range spec.ConfigAccessTable {
		t.Run(tc.Name, func(t *testing.T) { runAnnotationTable(t, []spec.AnnotationCase{tc}) })
	}
}

// runAnnotationTable serves table with one controller and sends each row's
// request.
func runAnnotationTable(t *testing.T, table []spec.AnnotationCase) {
	var m strings.Builder
	m.WriteString(ingressClass)
	rows := make([]spec.AnnotationCase, len(table))
	for i, tc := range table {
		rows[i] = writeRow(t, &m, tc, fmt.Sprintf("r%02d", i))
	}
	if cfg := spec.UnionConfig(rows); len(cfg) > 0 {
		m.WriteString(spec.ConfigMapYAML("causeway", "config", cfg)) // the harness's --configmap
	}
	c := startController(t, map[string]string{"annotations.yaml": m.String()})
	for i, tc := range rows {
		t.Run(table[i].Name, func(t *testing.T) {
			if d := askRow(c, tc); d != "" {
				t.Fatal(d)
			}
		})
	}
}

// askRow sends row tc's request to c and says how the answer differs from
// the row's, "" for not at all.
func askRow(c *controller, tc spec.AnnotationCase) string {
	r := tc.Request
	if r.Scheme == "" {
		r.Scheme = "http"
	}
	port := c.HTTPPort
	if r.Scheme == "https" {
		port = c.HTTPSPort
	}
	res, err := harness.Do(net.JoinHostPort(c.IP, strconv.Itoa(port)),
		harness.Request{Method: r.Method, Scheme: r.Scheme, Host: r.Host, Path: r.Path, Header: r.Header, Body: r.Body, From: r.From})
	if err != nil {
		return err.Error()
	}
	if d := tc.Want.Mismatch(observed(res), spec.Ports{HTTP: c.HTTPPort, HTTPS: c.HTTPSPort}); d != "" {
		return fmt.Sprintf("%s\nbody: %.300s", d, res.Body)
	}
	return ""
}

// writeRow moves a row into namespace ns and writes the namespace and the
// row's objects to m, starting an echo backend per Service.
func writeRow(t *testing.T, m *strings.Builder, tc spec.AnnotationCase, ns string) spec.AnnotationCase {
	row := tc.In(ns)
	fmt.Fprintf(m, "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---\n", ns)
	eps := map[string]spec.Endpoint{}
	if row.UsesAuthService() {
		eps[spec.AuthService] = startSpecAuthService(t)
	}
	for _, svc := range row.Services() {
		if svc == spec.AuthService {
			continue
		}
		b := startBackend(t, svc)
		eps[svc] = spec.Endpoint{IP: b.IP, Port: b.Port}
	}
	m.WriteString(row.Manifests("nginx.ingress.kubernetes.io", eps))
	return row
}

// observed turns an exchange into the table's terms.
func observed(res harness.Result) spec.Response {
	out := spec.Response{Status: res.Status, Location: res.Location, Service: res.Reply.Service, URI: res.Reply.URI,
		Host: res.Reply.Host, Upstream: res.Reply.Headers, Header: map[string]string{}, HeaderPrefix: map[string]string{}}
	for k, v := range res.Header {
		out.Header[k] = strings.Join(v, ", ")
		out.HeaderPrefix[k] = v[0]
	}
	return out
}
