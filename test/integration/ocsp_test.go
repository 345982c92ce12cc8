package integration

import (
	"crypto/tls"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ocsp"

	"github.com/causeway/causeway/test/ocsptest"
	"github.com/causeway/causeway/test/testcert"
)

// TestOCSPStapling: with enable-ocsp, the controller asks the responder
// a host certificate names (one run here, on 127.0.0.x) and nginx
// staples its good answer: by Lua without a reload as responses renew,
// or by nginx itself with reload-free-certificates false. A revoked
// certificate gets nothing stapled, with a Problem.
func TestOCSPStapling(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		config map[string]string
		lua    bool
	}{
		{"lua", map[string]string{"enable-ocsp": "true"}, true},
		{"at reload", map[string]string{"enable-ocsp": "true", "reload-free-certificates": "false"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ca := ocsptest.New(t, loopbackIP())
			ca.SetValidity(4 * time.Second)
			crt, key, leaf := ca.Issue(t, "ocsp.test")
			web := startBackend(t, "web")
			c := startController(t, map[string]string{
				"app.yaml": ingressClass + serviceYAML("default", "web", 80, web) + testcert.SecretYAML("default", "ocsp-tls", crt, key) +
					tlsIngressYAML("default", "a", "ocsp.test", "ocsp-tls", "web"),
				"config.yaml": configMapYAML(tc.config),
			}, "--ocsp-min-refresh=1s")
			if tc.lua && c.Metric("causeway_dataplane_mode", `mode="lua"`) != 1 {
				t.Skip("no Lua data plane")
			}
			stapled := func() (*ocsp.Response, error) {
				st, err := c.handshake("ocsp.test", &tls.Config{})
				if err != nil {
					return nil, err
				}
				if len(st.OCSPResponse) == 0 {
					return nil, nil
				}
				return ocsp.ParseResponseForCert(st.OCSPResponse, leaf, ca.Cert)
			}
			var first *ocsp.Response
			eventually(t, 15*time.Second, func() error {
				r, err := stapled()
				if err != nil || r == nil || r.Status != ocsp.Good {
					return fmt.Errorf("staple %v, %v; want a good response", r, err)
				}
				first = r
				return nil
			})
			if !tc.lua {
				return
			}
			// Responses valid 4s renew every 2s, with no reload.
			reloads := c.Metric("causeway_nginx_reloads_total")
			eventually(t, 15*time.Second, func() error {
				r, err := stapled()
				if err != nil || r == nil || !r.ThisUpdate.After(first.ThisUpdate) {
					return fmt.Errorf("staple %v, %v; want a newer one", r, err)
				}
				return nil
			})
			if got := c.Metric("causeway_nginx_reloads_total"); got != reloads {
				t.Fatalf("a renewed response reloaded nginx: %v -> %v", reloads, got)
			}
			ca.SetStatus(leaf, ocsp.Revoked)
			eventually(t, 15*time.Second, func() error {
				if r, err := stapled(); err != nil || r != nil {
					return fmt.Errorf("staple %v, %v after revocation; want none", r, err)
				}
				if !strings.Contains(c.log.String(), "revoked") {
					return fmt.Errorf("no Problem says revoked")
				}
				return nil
			})
		})
	}
}
