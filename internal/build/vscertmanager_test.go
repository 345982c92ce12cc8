package build

import (
	"strings"
	"testing"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
)

// TestVirtualServerCertManager: a VirtualServer asking cert-manager for
// its certificate is served either way; with the integration off
// (--enable-cert-manager) a Problem says that no Certificate is asked for.
func TestVirtualServerCertManager(t *testing.T) {
	for _, tc := range []struct {
		name    string
		enabled bool
		problem string
	}{
		{"the integration on", true, ""},
		{"the integration off", false, "spec.tls.cert-manager: the cert-manager integration is off (--enable-cert-manager)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := world(2)
			vs := mkVirtualServer("cafe", "cafe.test", 0, pass("/", "a"))
			vs.Spec.TLS = &nicv1.TLS{Secret: "cafe-tls", CertManager: &nicv1.CertManager{ClusterIssuer: "le"}}
			snap.VirtualServers = []*nicv1.VirtualServer{vs}
			opts := testOpts
			opts.CertManager = tc.enabled
			m, problems := Build(snap, opts)
			var found []string
			for _, p := range problems {
				if strings.Contains(p.Message, "cert-manager") {
					found = append(found, p.Message)
				}
			}
			if (tc.problem == "") != (len(found) == 0) || tc.problem != "" && !strings.Contains(found[0], tc.problem) {
				t.Errorf("problems %q, want %q", found, tc.problem)
			}
			if server(m, "cafe.test").Match("/").Action.Proxy == nil {
				t.Error("the VirtualServer is not served")
			}
		})
	}
}

// TestVirtualServerExternalDNS: likewise for spec.externalDNS and
// --enable-external-dns.
func TestVirtualServerExternalDNS(t *testing.T) {
	for _, tc := range []struct {
		enabled, unpublished bool
		problem              string // "" for none
	}{
		{enabled: true},
		{enabled: false, problem: "the external-dns integration is off (--enable-external-dns)"},
		{enabled: true, unpublished: true, problem: "the controller publishes no address (--publish-service or --publish-address)"},
	} {
		snap := world(2)
		vs := mkVirtualServer("cafe", "cafe.test", 0, pass("/", "a"))
		vs.Spec.ExternalDNS = nicv1.ExternalDNS{Enable: true}
		snap.VirtualServers = []*nicv1.VirtualServer{vs}
		opts := testOpts
		opts.ExternalDNS, opts.NoPublishedAddress = tc.enabled, tc.unpublished
		m, problems := Build(snap, opts)
		var found []string
		for _, p := range problems {
			if strings.Contains(p.Message, "externalDNS") {
				found = append(found, p.Message)
			}
		}
		if (tc.problem == "") != (len(found) == 0) || tc.problem != "" && !strings.Contains(found[0], tc.problem) {
			t.Errorf("%+v: problems %q", tc, found)
		}
		if server(m, "cafe.test").Match("/").Action.Proxy == nil {
			t.Error("the VirtualServer is not served")
		}
	}
}
