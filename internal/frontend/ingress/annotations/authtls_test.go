package annotations

import (
	"reflect"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/testcorpus"
)

func TestAuthTLS(t *testing.T) {
	ca := ObjectName{Namespace: testRef.Namespace, Name: "client-ca"}
	secret := testRef.Namespace + "/client-ca"
	def := func(mod func(*ClientTLSSettings)) *ClientTLSSettings {
		c := &ClientTLSSettings{Secret: ca, Verify: model.VerifyOn, Depth: 1}
		if mod != nil {
			mod(c)
		}
		return c
	}
	closed := &ClientTLSSettings{Closed: true}
	for _, tc := range []struct {
		name     string
		ann      map[string]string
		want     *ClientTLSSettings
		problems []problem
	}{
		// good
		{"secret alone", map[string]string{"auth-tls-secret": secret}, def(nil), nil},
		{"every setting", map[string]string{"auth-tls-secret": secret, "auth-tls-verify-client": "optional",
			"auth-tls-verify-depth": "3", "auth-tls-error-page": "https://login.example.com/cert",
			"auth-tls-pass-certificate-to-upstream": "true", "auth-tls-match-cn": "CN=(client-a|client-b)"},
			def(func(c *ClientTLSSettings) {
				c.Verify, c.Depth, c.ErrorPage, c.PassCertificate, c.MatchCN =
					model.VerifyOptional, 3, "https://login.example.com/cert", true, "CN=(client-a|client-b)"
			}), nil},
		{"optional_no_ca", map[string]string{"auth-tls-secret": secret, "auth-tls-verify-client": "optional_no_ca"},
			def(func(c *ClientTLSSettings) { c.Verify = model.VerifyOptionalNoCA }), nil},
		{"off", map[string]string{"auth-tls-secret": secret, "auth-tls-verify-client": "off"},
			def(func(c *ClientTLSSettings) { c.Verify = model.VerifyOff }), nil},

		// edge
		{"verify-client in upper case", map[string]string{"auth-tls-secret": secret, "auth-tls-verify-client": "ON"}, def(nil), nil},
		{"deepest chain", map[string]string{"auth-tls-secret": secret, "auth-tls-verify-depth": "10"},
			def(func(c *ClientTLSSettings) { c.Depth = 10 }), nil},
		{"pass false", map[string]string{"auth-tls-secret": secret, "auth-tls-pass-certificate-to-upstream": "False"}, def(nil), nil},
		{"CN with spaces and a class", map[string]string{"auth-tls-secret": secret, "auth-tls-match-cn": "CN=my client [0-9]{1,3}"},
			def(func(c *ClientTLSSettings) { c.MatchCN = "CN=my client [0-9]{1,3}" }), nil},

		// bad: the host closes, never opens
		{"companion without the secret", map[string]string{"auth-tls-verify-client": "on"}, closed,
			[]problem{closes("auth-tls-verify-client")}},
		{"match-cn without the secret", map[string]string{"auth-tls-match-cn": "CN=a"}, closed, []problem{closes("auth-tls-match-cn")}},
		{"secret without namespace", map[string]string{"auth-tls-secret": "client-ca"}, closed, []problem{closes("auth-tls-secret")}},
		{"secret in another namespace", map[string]string{"auth-tls-secret": "other/client-ca"}, closed, []problem{closes("auth-tls-secret")}},
		{"secret name with a quote", map[string]string{"auth-tls-secret": testRef.Namespace + `/a"b`}, closed, []problem{closes("auth-tls-secret")}},
		{"unknown verify mode", map[string]string{"auth-tls-secret": secret, "auth-tls-verify-client": "required"}, closed,
			[]problem{closes("auth-tls-verify-client")}},
		{"two verify modes", map[string]string{"auth-tls-secret": secret, "auth-tls-verify-client": "on off"}, closed,
			[]problem{closes("auth-tls-verify-client")}},
		{"depth 0", map[string]string{"auth-tls-secret": secret, "auth-tls-verify-depth": "0"}, closed, []problem{closes("auth-tls-verify-depth")}},
		{"depth 11", map[string]string{"auth-tls-secret": secret, "auth-tls-verify-depth": "11"}, closed, []problem{closes("auth-tls-verify-depth")}},
		{"depth with sign", map[string]string{"auth-tls-secret": secret, "auth-tls-verify-depth": "+2"}, closed, []problem{closes("auth-tls-verify-depth")}},
		{"depth with space", map[string]string{"auth-tls-secret": secret, "auth-tls-verify-depth": " 2"}, closed, []problem{closes("auth-tls-verify-depth")}},
		{"relative error page", map[string]string{"auth-tls-secret": secret, "auth-tls-error-page": "/error"}, closed,
			[]problem{closes("auth-tls-error-page")}},
		{"error page with a variable", map[string]string{"auth-tls-secret": secret, "auth-tls-error-page": "https://a.example.com/$host"}, closed,
			[]problem{closes("auth-tls-error-page")}},
		{"pass yes", map[string]string{"auth-tls-secret": secret, "auth-tls-pass-certificate-to-upstream": "yes"}, closed,
			[]problem{closes("auth-tls-pass-certificate-to-upstream")}},
		{"CN without CN=", map[string]string{"auth-tls-secret": secret, "auth-tls-match-cn": "client"}, closed,
			[]problem{closes("auth-tls-match-cn")}},
		{"CN breaking out of the quotes", map[string]string{"auth-tls-secret": secret, "auth-tls-match-cn": `CN=a") { return 200; } if ("`}, closed,
			[]problem{closes("auth-tls-match-cn")}},
		{"CN with a variable", map[string]string{"auth-tls-secret": secret, "auth-tls-match-cn": "CN=$host"}, closed,
			[]problem{closes("auth-tls-match-cn")}},
		{"CN with a newline", map[string]string{"auth-tls-secret": secret, "auth-tls-match-cn": "CN=a\n}"}, closed,
			[]problem{closes("auth-tls-match-cn")}},
		{"CN with a semicolon", map[string]string{"auth-tls-secret": secret, "auth-tls-match-cn": "CN=a;"}, closed,
			[]problem{closes("auth-tls-match-cn")}},
		{"CN with a brace", map[string]string{"auth-tls-secret": secret, "auth-tls-match-cn": "CN=a}"}, closed,
			[]problem{closes("auth-tls-match-cn")}},
		{"CN with a lookahead", map[string]string{"auth-tls-secret": secret, "auth-tls-match-cn": "CN=(?=a)"}, closed,
			[]problem{closes("auth-tls-match-cn")}},
		{"empty CN pattern", map[string]string{"auth-tls-secret": secret, "auth-tls-match-cn": "CN="}, closed,
			[]problem{closes("auth-tls-match-cn")}},
		{"two bad values, both named", map[string]string{"auth-tls-secret": secret, "auth-tls-verify-depth": "x", "auth-tls-match-cn": "x"}, closed,
			[]problem{closes("auth-tls-verify-depth"), closes("auth-tls-match-cn")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, problems := parseNames(tc.ann)
			checkProblems(t, problems, tc.problems)
			checkClosed(t, res, tc.problems)
			if !reflect.DeepEqual(res.Server.ClientTLS, tc.want) {
				t.Fatalf("ClientTLS = %+v, want %+v", res.Server.ClientTLS, tc.want)
			}
			if len(res.Server.Keys) != len(tc.ann) {
				t.Fatalf("Keys = %v", res.Server.Keys)
			}
		})
	}
}

// TestAuthTLSInjection tries the shared corpus in every auth-tls value:
// each is refused (and closes the paths), or is a value with no byte that
// nginx's syntax or variables would read.
func TestAuthTLSInjection(t *testing.T) {
	secret := testRef.Namespace + "/client-ca"
	for _, v := range testcorpus.Injection {
		for _, name := range authTLSNames {
			for _, val := range []string{v, "CN=" + v, "https://a.example.com/" + v} {
				ann := map[string]string{"auth-tls-secret": secret, name: val}
				res, problems := parseNames(ann)
				c := res.Server.ClientTLS
				if c == nil {
					t.Fatalf("%s=%q: no ClientTLS", name, val)
				}
				if c.Closed {
					checkProblems(t, problems, []problem{closes(name)})
					continue
				}
				if len(problems) != 0 {
					t.Fatalf("%s=%q: problems %v", name, val, problems)
				}
				for _, s := range []string{c.MatchCN, c.ErrorPage} {
					if strings.ContainsAny(s, "\"'`;$\\\n\r\t\x00#") || strings.IndexFunc(s, func(r rune) bool { return r < ' ' || r > '~' }) >= 0 {
						t.Fatalf("%s=%q accepted as %q", name, val, s)
					}
				}
			}
		}
	}
}
