package gateway

import (
	"testing"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestClientValidation: an HTTPS listener takes its port's validation
// before the default, with its CA's key and mode; an HTTP listener takes
// none.
func TestClientValidation(t *testing.T) {
	g := clientCA(clientCA(gateway("g", listener("http", 80, "HTTP"), listener("https", 443, "HTTPS", cert("tls-validity-checks-certificate")),
		listener("other", 8443, "HTTPS", cert("tls-validity-checks-certificate"))), 0, "ca"), 8443, "other-ca")
	g.Spec.TLS.Frontend.PerPort[0].TLS.Validation.Mode = gwv1.AllowInsecureFallback
	got, _ := CheckGateway(g, ourClass, addresses, testInputs())
	want := map[gwv1.SectionName]*ClientValidation{
		"http":  nil,
		"https": {CA: infra + "/ca"},
		"other": {CA: infra + "/other-ca", InsecureFallback: true},
	}
	if c := conds(got.Status.Conditions); c != gwReady+" InsecureFrontendValidationMode=True/ConfigurationChanged" {
		t.Errorf("Gateway conditions %s, want InsecureFrontendValidationMode for the port's AllowInsecureFallback", c)
	}
	for _, l := range got.Listeners {
		w, v := want[l.Name], l.ClientValidation
		if (w == nil) != (v == nil) || (w != nil && *w != *v) {
			t.Errorf("listener %s: validation %+v, want %+v", l.Name, v, w)
		}
		if !l.Ready() {
			t.Errorf("listener %s is not served", l.Name)
		}
	}
}
