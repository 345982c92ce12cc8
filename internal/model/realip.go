package model

import (
	"net/netip"
	"time"
)

// RealIP is where the client's address and the X-Forwarded-* headers sent
// upstream come from (ConfigMap keys use-forwarded-headers, enable-real-ip,
// forwarded-for-header, compute-full-forwarded-for, proxy-real-ip-cidr,
// use-proxy-protocol and proxy-protocol-header-timeout). The zero value of
// each switch is ingress-nginx's default: the client is the TCP peer and no
// header of the client's is trusted.
type RealIP struct {
	// UseForwardedHeaders takes the client's address from
	// ForwardedForHeader, and passes on X-Forwarded-Proto, -Host and
	// -Port, when the peer is in TrustedCIDRs.
	UseForwardedHeaders bool
	// EnableRealIP takes the client's address from ForwardedForHeader when
	// the peer is in TrustedCIDRs, without trusting the other headers.
	EnableRealIP bool
	// ForwardedForHeader names the header the address is read from: an
	// HTTP header name of letters, digits and "-" (nginx ignores others),
	// with X-Forwarded-For and X-Real-IP spelled canonically.
	ForwardedForHeader string
	// ComputeFullForwardedFor, with UseForwardedHeaders, sends upstream
	// the incoming X-Forwarded-For of a trusted peer with the peer's
	// address appended, instead of the client's address alone.
	ComputeFullForwardedFor bool
	// TrustedCIDRs are the peers whose headers (or PROXY protocol
	// header) are believed. Never empty; each prefix is masked.
	TrustedCIDRs []netip.Prefix
	// UseProxyProtocol makes both listeners require a PROXY protocol
	// header (v1 or v2) and takes the client's address from it.
	UseProxyProtocol bool
	// ProxyProtocolHeaderTimeout bounds the wait for the PROXY header.
	ProxyProtocolHeaderTimeout time.Duration
}

// Enabled reports whether nginx's realip module replaces the TCP peer's
// address.
func (r RealIP) Enabled() bool {
	return r.UseForwardedHeaders || r.EnableRealIP || r.UseProxyProtocol
}

// DefaultRealIP is ingress-nginx's defaults. Trusting every IPv4 peer
// (0.0.0.0/0) only matters once a switch is turned on; it is
// ingress-nginx's default, kept so that a migrated ConfigMap means the
// same, and docs/configuration.md tells users to narrow it.
func DefaultRealIP() RealIP {
	return RealIP{
		ForwardedForHeader:         "X-Forwarded-For",
		TrustedCIDRs:               []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")},
		ProxyProtocolHeaderTimeout: 5 * time.Second,
	}
}
