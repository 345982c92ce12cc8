package gateway

import (
	"regexp"
	"testing"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// tlsName is what may reach proxy_ssl_name: a hostname of lower-case
// letters, digits, '-' and '.'.
var tlsName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

// FuzzBackendTLSPolicy feeds arbitrary strings to every field of a
// BackendTLSPolicy that reaches the model: what is accepted holds to the
// hostname grammar and names the checked CA, whatever is refused leaves
// no TLS (its backends fail closed), and render prints what is accepted.
func FuzzBackendTLSPolicy(f *testing.F) {
	f.Add("abc.example.com", "https", "ConfigMap", "ca", "abc.example.com", "System")
	f.Add("a\"b;\nproxy_pass x", "a b", "Secret", "ca/../x", "spiffe://x", "System\x00")
	f.Add("*.example.com", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, host, section, caKind, caName, san, wellKnown string) {
		p := btls("p", 1000, "svc", section)
		p.Spec.Validation.Hostname = gwv1.PreciseHostname(host)
		p.Spec.Validation.CACertificateRefs[0].Kind = gwv1.Kind(caKind)
		p.Spec.Validation.CACertificateRefs[0].Name = gwv1.ObjectName(caName)
		if san != "" {
			p.Spec.Validation.SubjectAltNames = []gwv1.SubjectAltName{{Type: gwv1.HostnameSubjectAltNameType, Hostname: gwv1.Hostname(san)}}
		}
		if wellKnown != "" {
			p.Spec.Validation.CACertificateRefs = nil
			wk := gwv1.WellKnownCACertificatesType(wellKnown)
			p.Spec.Validation.WellKnownCACertificates = &wk
		}
		bt, _ := CheckBackendTLSPolicies([]*gwv1.BackendTLSPolicy{p}, testCA)
		got := bt.Policies[0]
		if got.TLS == nil {
			if got.Accepted.Status == "True" {
				t.Errorf("accepted without TLS: %+v", got.Accepted)
			}
			return
		}
		tls := got.TLS
		if !tlsName.MatchString(tls.Name) || tls.Name != host || !tls.Verify || !tls.ServerName {
			t.Errorf("accepted TLS %+v for hostname %q", tls, host)
		}
		if (tls.CAConfigMap == "") == !tls.SystemCAs {
			t.Errorf("accepted TLS %+v: want exactly one CA source", tls)
		}
		if tls.CAConfigMap != "" && tls.CAConfigMap != "infra/"+caName {
			t.Errorf("CA %q; want infra/%s", tls.CAConfigMap, caName)
		}
		// Render prints it (with the system's CAs: renderLocations's
		// model has no ConfigMap bundle).
		c := *tls
		c.CAConfigMap, c.SystemCAs = "", true
		loc := &model.Location{Match: model.Match{Type: model.Prefix, Path: "/"}, Action: model.ProxyTo("infra/svc/8080"),
			Policy: &model.Policy{Protocol: model.ProtocolHTTPS, UpstreamTLS: &c}}
		if _, err := renderLocations([]*model.Location{loc}, got.Ref); err != nil {
			t.Errorf("render: %v", err)
		}
	})
}
