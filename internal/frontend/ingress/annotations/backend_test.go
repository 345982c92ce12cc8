package annotations

import (
	"reflect"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// defaultTLS is the UpstreamTLS any proxy-ssl-* annotation starts from.
func defaultTLS() *model.UpstreamTLS {
	return &model.UpstreamTLS{VerifyDepth: 1, Protocols: []string{"TLSv1.2"}, Ciphers: "DEFAULT"}
}

func upstreamTLS(edit func(t *model.UpstreamTLS)) *model.UpstreamTLS {
	t := defaultTLS()
	edit(t)
	return t
}

func TestBackendProtocol(t *testing.T) {
	https := func(kv ...string) map[string]string {
		m := map[string]string{"backend-protocol": "HTTPS"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	caSecret := &ObjectName{Namespace: "default", Name: "backend-ca"}
	for _, tc := range []struct {
		name     string
		ann      map[string]string
		protocol model.BackendProtocol
		tls      *model.UpstreamTLS
		secret   *ObjectName
		problems []problem
	}{
		// backend-protocol
		{name: "HTTPS", ann: https(), protocol: model.ProtocolHTTPS},
		{name: "lower-case https", ann: map[string]string{"backend-protocol": "https"}, protocol: model.ProtocolHTTPS},
		{name: "HTTP", ann: map[string]string{"backend-protocol": "HTTP"}, protocol: model.ProtocolHTTP},
		{name: "lower-case grpc is GRPC", ann: map[string]string{"backend-protocol": "grpc"}, protocol: model.ProtocolGRPC},
		{name: "GRPCS", ann: map[string]string{"backend-protocol": "GRPCS"}, protocol: model.ProtocolGRPCS},
		{name: "AUTO_HTTP is not supported", ann: map[string]string{"backend-protocol": "AUTO_HTTP"}, problems: []problem{ignored("backend-protocol")}},
		{name: "fcgi is not supported", ann: map[string]string{"backend-protocol": "fcgi"}, problems: []problem{ignored("backend-protocol")}},
		{name: "unknown protocol", ann: map[string]string{"backend-protocol": "SPDY"}, problems: []problem{invalid("backend-protocol")}},
		{name: "two protocols", ann: map[string]string{"backend-protocol": "HTTP HTTPS"}, problems: []problem{invalid("backend-protocol")}},
		{name: "unknown protocol with verification asked for fails closed",
			ann:      map[string]string{"backend-protocol": "HTTPS2", "proxy-ssl-verify": "on", "proxy-ssl-secret": "default/backend-ca"},
			problems: []problem{closes("backend-protocol")}},
		{name: "AUTO_HTTP with verification asked for fails closed",
			ann:      map[string]string{"backend-protocol": "AUTO_HTTP", "proxy-ssl-verify": "on", "proxy-ssl-secret": "default/backend-ca"},
			problems: []problem{closes("backend-protocol")}},
		{name: "unknown protocol with verification off",
			ann:      map[string]string{"backend-protocol": "HTTPS2", "proxy-ssl-verify": "off"},
			problems: []problem{invalid("backend-protocol"), ignored("proxy-ssl-verify")}},

		// proxy-ssl-* need a TLS protocol
		{name: "proxy-ssl-* without backend-protocol are ignored",
			ann:      map[string]string{"proxy-ssl-secret": "default/backend-ca", "proxy-ssl-verify": "on"},
			problems: []problem{ignored("proxy-ssl-secret"), ignored("proxy-ssl-verify")}},
		{name: "proxy-ssl-* with GRPC are ignored",
			ann:      map[string]string{"backend-protocol": "GRPC", "proxy-ssl-name": "a.com"},
			protocol: model.ProtocolGRPC, problems: []problem{ignored("proxy-ssl-name")}},
		{name: "GRPCS with a secret", ann: map[string]string{"backend-protocol": "GRPCS", "proxy-ssl-secret": "default/backend-ca"},
			protocol: model.ProtocolGRPCS, tls: defaultTLS(), secret: caSecret},

		// proxy-ssl-secret and proxy-ssl-verify
		{name: "secret alone: the defaults", ann: https("proxy-ssl-secret", "default/backend-ca"),
			protocol: model.ProtocolHTTPS, tls: defaultTLS(), secret: caSecret},
		{name: "everything set", ann: https("proxy-ssl-secret", "default/backend-ca", "proxy-ssl-verify", "on",
			"proxy-ssl-verify-depth", "2", "proxy-ssl-server-name", "on", "proxy-ssl-name", "backend.default.svc",
			"proxy-ssl-protocols", "TLSv1.2 TLSv1.3", "proxy-ssl-ciphers", "HIGH:!AES"),
			protocol: model.ProtocolHTTPS, secret: caSecret, tls: &model.UpstreamTLS{Verify: true, VerifyDepth: 2, ServerName: true,
				Name: "backend.default.svc", Protocols: []string{"TLSv1.2", "TLSv1.3"}, Ciphers: "HIGH:!AES"}},
		{name: "verify ON in upper case", ann: https("proxy-ssl-secret", "default/backend-ca", "proxy-ssl-verify", "ON"),
			protocol: model.ProtocolHTTPS, secret: caSecret, tls: upstreamTLS(func(t *model.UpstreamTLS) { t.Verify = true })},
		{name: "verify on without a secret fails closed", ann: https("proxy-ssl-verify", "on"),
			protocol: model.ProtocolHTTPS, problems: []problem{closes("proxy-ssl-verify")}},
		{name: "verify off without a secret", ann: https("proxy-ssl-verify", "off", "proxy-ssl-server-name", "on"),
			protocol: model.ProtocolHTTPS, tls: upstreamTLS(func(t *model.UpstreamTLS) { t.ServerName = true })},
		{name: "invalid verify fails closed", ann: https("proxy-ssl-secret", "default/backend-ca", "proxy-ssl-verify", "true"),
			protocol: model.ProtocolHTTPS, problems: []problem{closes("proxy-ssl-verify")}},
		{name: "empty verify fails closed", ann: https("proxy-ssl-secret", "default/backend-ca", "proxy-ssl-verify", ""),
			protocol: model.ProtocolHTTPS, problems: []problem{closes("proxy-ssl-verify")}},
		{name: "secret in another namespace", ann: https("proxy-ssl-secret", "kube-system/ca"),
			protocol: model.ProtocolHTTPS, tls: defaultTLS(), problems: []problem{invalid("proxy-ssl-secret")}},
		{name: "secret in another namespace with verify on fails closed",
			ann:      https("proxy-ssl-secret", "kube-system/ca", "proxy-ssl-verify", "on"),
			protocol: model.ProtocolHTTPS, problems: []problem{closes("proxy-ssl-secret")}},
		{name: "secret without a namespace", ann: https("proxy-ssl-secret", "backend-ca"),
			protocol: model.ProtocolHTTPS, tls: defaultTLS(), problems: []problem{invalid("proxy-ssl-secret")}},
		{name: "secret with two slashes", ann: https("proxy-ssl-secret", "default/a/b"),
			protocol: model.ProtocolHTTPS, tls: defaultTLS(), problems: []problem{invalid("proxy-ssl-secret")}},
		{name: "secret with a bad name", ann: https("proxy-ssl-secret", "default/Backend_CA"),
			protocol: model.ProtocolHTTPS, tls: defaultTLS(), problems: []problem{invalid("proxy-ssl-secret")}},

		// proxy-ssl-verify-depth
		{name: "depth 0 means 1", ann: https("proxy-ssl-verify-depth", "0"), protocol: model.ProtocolHTTPS, tls: defaultTLS()},
		{name: "depth 10", ann: https("proxy-ssl-verify-depth", "10"), protocol: model.ProtocolHTTPS,
			tls: upstreamTLS(func(t *model.UpstreamTLS) { t.VerifyDepth = 10 })},
		{name: "depth 11", ann: https("proxy-ssl-verify-depth", "11"), protocol: model.ProtocolHTTPS, tls: defaultTLS(),
			problems: []problem{invalid("proxy-ssl-verify-depth")}},
		{name: "depth -1", ann: https("proxy-ssl-verify-depth", "-1"), protocol: model.ProtocolHTTPS, tls: defaultTLS(),
			problems: []problem{invalid("proxy-ssl-verify-depth")}},

		// proxy-ssl-name and proxy-ssl-server-name
		{name: "name", ann: https("proxy-ssl-name", "api.example.com"), protocol: model.ProtocolHTTPS,
			tls: upstreamTLS(func(t *model.UpstreamTLS) { t.Name = "api.example.com" })},
		{name: "name with a variable", ann: https("proxy-ssl-name", "$host"), protocol: model.ProtocolHTTPS, tls: defaultTLS(),
			problems: []problem{invalid("proxy-ssl-name")}},
		{name: "wildcard name", ann: https("proxy-ssl-name", "*.example.com"), protocol: model.ProtocolHTTPS, tls: defaultTLS(),
			problems: []problem{invalid("proxy-ssl-name")}},
		{name: "IP address name", ann: https("proxy-ssl-name", "10.0.0.1"), protocol: model.ProtocolHTTPS, tls: defaultTLS(),
			problems: []problem{invalid("proxy-ssl-name")}},
		{name: "upper-case name", ann: https("proxy-ssl-name", "API.example.com"), protocol: model.ProtocolHTTPS, tls: defaultTLS(),
			problems: []problem{invalid("proxy-ssl-name")}},
		{name: "server-name invalid", ann: https("proxy-ssl-server-name", "yes"), protocol: model.ProtocolHTTPS, tls: defaultTLS(),
			problems: []problem{invalid("proxy-ssl-server-name")}},

		// proxy-ssl-protocols and proxy-ssl-ciphers
		{name: "protocols any case, commas", ann: https("proxy-ssl-protocols", "tlsv1.3,TLSv1.2"), protocol: model.ProtocolHTTPS,
			tls: upstreamTLS(func(t *model.UpstreamTLS) { t.Protocols = []string{"TLSv1.3", "TLSv1.2"} })},
		{name: "TLSv1.1 refused", ann: https("proxy-ssl-protocols", "TLSv1.1 TLSv1.2"), protocol: model.ProtocolHTTPS, tls: defaultTLS(),
			problems: []problem{invalid("proxy-ssl-protocols")}},
		{name: "SSLv3 refused", ann: https("proxy-ssl-protocols", "SSLv3"), protocol: model.ProtocolHTTPS, tls: defaultTLS(),
			problems: []problem{invalid("proxy-ssl-protocols")}},
		{name: "ciphers with a security level", ann: https("proxy-ssl-ciphers", "ECDHE+AESGCM:!aNULL:@SECLEVEL=2"), protocol: model.ProtocolHTTPS,
			tls: upstreamTLS(func(t *model.UpstreamTLS) { t.Ciphers = "ECDHE+AESGCM:!aNULL:@SECLEVEL=2" })},
		{name: "ciphers with a space", ann: https("proxy-ssl-ciphers", "HIGH !AES"), protocol: model.ProtocolHTTPS, tls: defaultTLS(),
			problems: []problem{invalid("proxy-ssl-ciphers")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, problems := parseNames(tc.ann)
			checkProblems(t, problems, tc.problems)
			checkClosed(t, res, tc.problems)
			if res.Location.Protocol != tc.protocol {
				t.Fatalf("Protocol = %q, want %q", res.Location.Protocol, tc.protocol)
			}
			if !reflect.DeepEqual(res.Location.UpstreamTLS, tc.tls) {
				t.Fatalf("UpstreamTLS = %+v, want %+v", res.Location.UpstreamTLS, tc.tls)
			}
			if !reflect.DeepEqual(res.UpstreamTLSSecret, tc.secret) {
				t.Fatalf("UpstreamTLSSecret = %v, want %v", res.UpstreamTLSSecret, tc.secret)
			}
		})
	}
}
