package annotations

import (
	"errors"
	"fmt"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// backendGroup is backend-protocol and the proxy-ssl-* family, which
// configure TLS towards HTTPS and GRPCS backends. Verification is a
// security setting: when proxy-ssl-verify asks for it and it cannot be
// done as written, every path of the Ingress answers 503 rather than
// talking to an unverified backend.
var backendGroup = Group{
	Name: "backend-protocol",
	Annotations: supported("backend-protocol",
		Annotation{Name: "backend-protocol", Scope: ScopeLocation, Default: "HTTP",
			Grammar: "HTTP, HTTPS, GRPC or GRPCS, in any case",
			Difference: "HTTPS and GRPCS connections to the backend are not kept alive nor their TLS sessions resumed: each request opens and verifies its own, so no connection authenticated for one Ingress serves another; AUTO_HTTP and FCGI are not supported (an UnsupportedAnnotation Problem; HTTP is used); " +
				"lower-case grpc gets the same gRPC headers and timeouts as GRPC; an invalid or unsupported value " +
				"with proxy-ssl-verify: on fails closed (503) instead of falling back to plain HTTP"},
		Annotation{Name: "proxy-ssl-secret", Names: model.KindSecret, Scope: ScopeLocation, Default: "none: no client certificate, no CA",
			Grammar: "namespace/name of a Secret in the Ingress's own namespace, holding tls.crt and tls.key, ca.crt, or all three",
			Difference: "used without the other proxy-ssl-* (ingress-nginx reads them only with a secret); " +
				"an invalid value drops the secret (fails closed with proxy-ssl-verify: on) instead of rejecting the Ingress"},
		Annotation{Name: "proxy-ssl-verify", Scope: ScopeLocation, Default: "off",
			Grammar: "on or off (any case)",
			Difference: "an invalid value, or on without a usable proxy-ssl-secret, fails closed: every path of the " +
				"Ingress answers 503 instead of talking to an unverified backend"},
		Annotation{Name: "proxy-ssl-verify-depth", Scope: ScopeLocation, Default: "1",
			Grammar:    "0 to 10 (0 means 1)",
			Difference: "values over 10 are refused"},
		Annotation{Name: "proxy-ssl-name", Scope: ScopeLocation, Default: "the proxied host",
			Grammar:    "a lower-case DNS name",
			Difference: "nginx variables, wildcards and IP addresses are refused"},
		Annotation{Name: "proxy-ssl-server-name", Scope: ScopeLocation, Default: "off",
			Grammar: "on or off (any case)"},
		Annotation{Name: "proxy-ssl-protocols", Scope: ScopeLocation, Default: "TLSv1.2",
			Grammar:    "TLSv1.2 and TLSv1.3 (any case), separated by spaces or commas",
			Difference: "sent in the order written, without duplicates"},
		Annotation{Name: "proxy-ssl-ciphers", Scope: ScopeLocation, Default: "DEFAULT",
			Grammar:    "an OpenSSL cipher list of up to 1024 letters, digits and :+!@._=-",
			Difference: "@SECLEVEL=n is accepted"},
	),
	Parse: parseBackend,
}

// proxySSLAnnotations are the annotations that configure UpstreamTLS.
var proxySSLAnnotations = []string{"proxy-ssl-secret", "proxy-ssl-verify", "proxy-ssl-verify-depth",
	"proxy-ssl-name", "proxy-ssl-server-name", "proxy-ssl-protocols", "proxy-ssl-ciphers"}

// backendProtocols are ingress-nginx's values; AUTO_HTTP and FCGI are
// recognized only to say they are not supported.
var backendProtocols = map[string]bool{
	"HTTP": true, "HTTPS": true, "GRPC": true, "GRPCS": true, "AUTO_HTTP": true, "FCGI": true,
}

// tlsProtocols are the proxy-ssl-protocols ingress-nginx accepts.
var tlsProtocols = map[string]bool{"TLSv1.2": true, "TLSv1.3": true}

// Bounds of proxy-ssl-verify-depth and proxy-ssl-protocols.
const (
	maxVerifyDepth  = 10
	maxTLSProtocols = 8 // as written, duplicates included
)

// errNeedsCA is why proxy-ssl-verify: on without a secret fails closed.
var errNeedsCA = errors.New("needs proxy-ssl-secret with a ca.crt to verify against")

func parseBackend(r *Reader, res *Result) {
	// Verification is asked for unless proxy-ssl-verify is absent or off;
	// an unreadable value counts as asking.
	v, verifySet := r.Get("proxy-ssl-verify")
	verifyAsked := verifySet && !isSwitchOff(v)
	closed := false

	proto := model.ProtocolHTTP
	if v, ok := r.Get("backend-protocol"); ok {
		p, err := parseBackendProtocol(v)
		switch {
		case err != nil && verifyAsked:
			r.FailClosed("backend-protocol", v, fmt.Errorf("%w; proxy-ssl-verify asks for a verified TLS backend", err))
			closed = true
		case err != nil:
			r.Invalid("backend-protocol", v, err)
		case p == "AUTO_HTTP" || p == "FCGI":
			why := fmt.Errorf("%s is not supported: Causeway speaks HTTP, HTTPS, GRPC or GRPCS to backends", p)
			if verifyAsked {
				r.FailClosed("backend-protocol", v, fmt.Errorf("%w; proxy-ssl-verify asks for a verified TLS backend", why))
				closed = true
			} else {
				r.Ignored("backend-protocol", fmt.Sprintf("value %q is not supported (Causeway speaks HTTP, HTTPS, GRPC or GRPCS to backends); HTTP is used", p))
			}
		default:
			proto = model.BackendProtocol(p)
			res.Location.Protocol = proto
		}
	}
	if !anySet(r, proxySSLAnnotations) || closed {
		return
	}
	if !proto.TLS() {
		for _, n := range proxySSLAnnotations {
			if r.Has(n) {
				r.Ignored(n, `only applies with backend-protocol "HTTPS" or "GRPCS"`)
			}
		}
		return
	}

	t := &model.UpstreamTLS{VerifyDepth: 1, Protocols: []string{"TLSv1.2"}, Ciphers: "DEFAULT"}
	if verifySet {
		on, err := parseNginxSwitch(v)
		if err != nil {
			// Reading it as off could only weaken security.
			r.FailClosed("proxy-ssl-verify", v, err)
			closed = true
		}
		t.Verify = on
	}
	var secret *ObjectName
	if s, ok := r.Get("proxy-ssl-secret"); ok {
		n, err := parseProxySSLSecret(s, r.ref.Namespace)
		switch {
		case err == nil:
			secret = &n
		case verifyAsked:
			r.FailClosed("proxy-ssl-secret", s, fmt.Errorf("%w; proxy-ssl-verify needs its ca.crt", err))
			closed = true
		default:
			r.Invalid("proxy-ssl-secret", s, err)
		}
	} else if t.Verify {
		r.FailClosed("proxy-ssl-verify", v, errNeedsCA)
		closed = true
	}
	Set(r, "proxy-ssl-verify-depth", &t.VerifyDepth, func(s string) (int, error) {
		n, err := parseInt(s, 0, maxVerifyDepth)
		return max(n, 1), err
	})
	Set(r, "proxy-ssl-name", &t.Name, parseProxySSLName)
	Set(r, "proxy-ssl-server-name", &t.ServerName, parseNginxSwitch)
	Set(r, "proxy-ssl-protocols", &t.Protocols, func(s string) ([]string, error) {
		return model.ParseTokenList(s, tlsProtocols, maxTLSProtocols)
	})
	Set(r, "proxy-ssl-ciphers", &t.Ciphers, model.ParseCipherList)
	if closed {
		return // the paths answer 503; nothing to configure
	}
	res.Location.UpstreamTLS = t
	res.UpstreamTLSSecret = secret
}

// anySet reports whether any of names is set.
func anySet(r *Reader, names []string) bool {
	for _, n := range names {
		if r.Has(n) {
			return true
		}
	}
	return false
}

// parseBackendProtocol returns one of backendProtocols, matched in any
// case.
func parseBackendProtocol(s string) (string, error) {
	p, err := model.ParseTokenList(s, backendProtocols, 1)
	if err != nil {
		return "", errors.New("want HTTP, HTTPS, GRPC or GRPCS")
	}
	return p[0], nil
}

// nginxSwitch is the values of an nginx flag.
var nginxSwitch = map[string]bool{"on": true, "off": true}

// parseNginxSwitch parses an nginx flag: on or off, in any case as nginx
// reads them.
func parseNginxSwitch(s string) (bool, error) {
	v, err := model.ParseTokenList(s, nginxSwitch, 1)
	if err != nil {
		return false, errors.New("want on or off")
	}
	return v[0] == "on", nil
}

// isSwitchOff reports whether s reads as off.
func isSwitchOff(s string) bool {
	on, err := parseNginxSwitch(s)
	return err == nil && !on
}

// parseProxySSLSecret parses "namespace/name" of a Secret, which must be
// in the Ingress's namespace ns.
func parseProxySSLSecret(s, ns string) (ObjectName, error) {
	space, name, ok := strings.Cut(s, "/")
	if !ok || space == "" || name == "" {
		return ObjectName{}, errors.New("want namespace/name of a Secret")
	}
	if space != ns {
		return ObjectName{}, fmt.Errorf("the Secret must be in the Ingress's namespace %q", ns)
	}
	if err := model.ValidateObjectName("secret", name); err != nil {
		return ObjectName{}, err
	}
	return ObjectName{Namespace: space, Name: name}, nil
}

// parseProxySSLName checks the name a backend certificate is verified
// against: a DNS name, no wildcard, no IP address, no variable.
func parseProxySSLName(s string) (string, error) {
	if strings.HasPrefix(s, "*.") {
		return "", errors.New("want a DNS name, not a wildcard")
	}
	if err := model.ValidateHost(s); err != nil {
		return "", err
	}
	return s, nil
}
