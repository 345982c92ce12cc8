package nic

import (
	"errors"
	"fmt"
	"strings"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// The authentication policies that ask someone else: externalAuth asks a
// Service with a subrequest (the auth-url model, model.ExternalAuth). The
// Service and the Secrets are resolved by the builder.

// ExternalAuth is an externalAuth policy.
type ExternalAuth struct {
	// Service is the authentication Service, in the Policy's namespace;
	// Port its port (NGINX Ingress Controller's default: 80, or 443 with
	// TLS).
	Service string
	Port    int32
	// URI is the path asked; SigninURI, when set, where a 401 goes, and
	// SigninBase the prefix of the server's paths proxied to the Service
	// without authentication (the sign-in pages).
	URI, SigninURI, SigninBase string
	// TLS, when set, speaks HTTPS to the Service; TrustedSecret is the
	// nginx.org/ca Secret to verify it with (the builder fills
	// TLS.CASecret).
	TLS           *model.UpstreamTLS
	TrustedSecret string
}

// defaultSigninBase is NGINX Ingress Controller's authSigninRedirectBasePath.
const defaultSigninBase = "/oauth2"

// sameNamespace reads a reference "name" or "namespace/name" that must
// name an object in the Policy's namespace.
func (t *translator) sameNamespace(field, ref string) (string, error) {
	ns, name, ok := strings.Cut(ref, "/")
	if !ok {
		return ref, nil
	}
	if ns != t.ref.Namespace {
		return "", fmt.Errorf("%s %q: Causeway reads objects of the Policy's namespace (%s) only", field, model.Truncate(ref), t.ref.Namespace)
	}
	return name, nil
}

func (t *translator) externalAuth(e *nicv1.ExternalAuth) (*ExternalAuth, error) {
	const f = "spec.externalAuth."
	if e.AuthServiceName == "" {
		return nil, errors.New(f + "authServiceName is required")
	}
	svc, err := t.sameNamespace(f+"authServiceName", e.AuthServiceName)
	if err != nil {
		return nil, err
	}
	out := &ExternalAuth{Service: svc, Port: 80, URI: e.AuthURI}
	if out.URI == "" {
		out.URI = "/"
	}
	if err := model.ValidatePath(out.URI); err != nil {
		return nil, fmt.Errorf(f+"authURI: %v", err)
	}
	if e.SSLEnabled {
		out.Port = 443
		out.TLS = &model.UpstreamTLS{VerifyDepth: 1}
	}
	if len(e.AuthServicePorts) > 0 {
		p := e.AuthServicePorts[0]
		if p < 1 || p > 65535 {
			return nil, fmt.Errorf(f+"authServicePorts[0] %d: want 1 to 65535", p)
		}
		out.Port = int32(p)
		if len(e.AuthServicePorts) > 1 {
			t.unsupported(f+"authServicePorts", "only the first port is asked, as in NGINX Ingress Controller")
		}
	}
	if e.AuthSigninURI != "" {
		if err := model.ValidatePath(e.AuthSigninURI); err != nil {
			return nil, fmt.Errorf(f+"authSigninURI: %v", err)
		}
		out.SigninURI, out.SigninBase = e.AuthSigninURI, defaultSigninBase
		if e.AuthSigninRedirectBasePath != "" {
			if err := model.ValidatePath(e.AuthSigninRedirectBasePath); err != nil {
				return nil, fmt.Errorf(f+"authSigninRedirectBasePath: %v", err)
			}
			out.SigninBase = e.AuthSigninRedirectBasePath
		}
	} else if e.AuthSigninRedirectBasePath != "" {
		t.unsupported(f+"authSigninRedirectBasePath", "it applies with authSigninURI only")
	}
	if e.AuthSnippets != "" {
		t.unsupported(f+"authSnippets", "snippets are not read from Policies")
	}
	if err := t.externalAuthTLS(e, out); err != nil {
		return nil, err
	}
	return out, nil
}

// externalAuthTLS reads the TLS fields, which apply with sslEnabled only.
func (t *translator) externalAuthTLS(e *nicv1.ExternalAuth, out *ExternalAuth) error {
	const f = "spec.externalAuth."
	if out.TLS == nil {
		for _, u := range []struct {
			name string
			set  bool
		}{{"sslVerify", e.SSLVerify}, {"sslVerifyDepth", e.SSLVerifyDepth != nil && *e.SSLVerifyDepth != 1},
			{"trustedCertSecret", e.TrustedCertSecret != ""}, {"sniName", e.SNIName != ""}} {
			if u.set {
				t.unsupported(f+u.name, "it applies with sslEnabled only")
			}
		}
		return nil
	}
	if e.SSLVerifyDepth != nil {
		if *e.SSLVerifyDepth < 0 || *e.SSLVerifyDepth > model.MaxClientVerifyDepth {
			return fmt.Errorf(f+"sslVerifyDepth %d: want 0 to %d", *e.SSLVerifyDepth, model.MaxClientVerifyDepth)
		}
		out.TLS.VerifyDepth = max(*e.SSLVerifyDepth, 1)
	}
	if e.SNIName != "" {
		if err := model.ValidateHost(e.SNIName); err != nil || strings.HasPrefix(e.SNIName, "*.") {
			return fmt.Errorf(f+"sniName %q: want a DNS name", model.Truncate(e.SNIName))
		}
		out.TLS.Name, out.TLS.ServerName = e.SNIName, true
	}
	if e.SSLVerify {
		if e.TrustedCertSecret == "" {
			return errors.New(f + "sslVerify needs trustedCertSecret")
		}
		out.TLS.Verify = true
		if out.TLS.Name == "" {
			// Without sniName the certificate is checked against the
			// Service's cluster name, not the name of nginx's upstream.
			out.TLS.Name = out.Service + "." + t.ref.Namespace + ".svc"
		}
	}
	if e.TrustedCertSecret != "" {
		name, err := t.sameNamespace(f+"trustedCertSecret", e.TrustedCertSecret)
		if err != nil {
			return err
		}
		if !e.SSLVerify {
			t.unsupported(f+"trustedCertSecret", "it applies with sslVerify only")
		} else {
			out.TrustedSecret = name
		}
	}
	return nil
}
