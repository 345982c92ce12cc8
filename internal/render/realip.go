package render

import "fmt"

// clientAddressView feeds the "client address" block of nginx.conf.tmpl:
// the realip module, the PROXY protocol header timeout, and the maps that
// define the variables every proxy_set_header block sends upstream
// ($causeway_forwarded_for, _proto, _host and _port).
type clientAddressView struct {
	// RealIPHeader is real_ip_header's argument ("proxy_protocol" or a
	// header name); "" leaves the realip module off.
	RealIPHeader string
	// Trusted are the peers whose header is believed, for
	// set_real_ip_from and the geo block.
	Trusted []string
	// Passthrough trusts the PROXY header of unix-socket peers too (the
	// TLS passthrough proxy, which alone reaches the HTTPS socket), for
	// set_real_ip_from only; ServerPortMap defines $causeway_server_port,
	// the PROXY header's port (a unix socket has none) or the listener's.
	Passthrough, ServerPortMap bool
	// PassedPort, when not 0, defines $causeway_server_port instead as
	// the listener's port, or this one on the HTTPS socket that the
	// passthrough server passes connections to (stream pass: no header,
	// and the socket has no port).
	PassedPort int
	// TrustForwarded (use-forwarded-headers) passes on the X-Forwarded-*
	// headers of trusted peers; TrustSource is the variable holding the
	// address that must be trusted.
	TrustForwarded bool
	TrustSource    string
	// FullForwardedFor passes on a trusted peer's X-Forwarded-For with the
	// peer (Peer) appended.
	FullForwardedFor bool
	Peer             string
	// ProxyProtocol is on when the listeners require the PROXY header
	// (client_header_timeout bounds the wait for it: see requests.go).
	ProxyProtocol bool
	// Scheme and Port are what X-Forwarded-Proto and -Port say when no
	// trusted header overrides them.
	Scheme, Port string
}

// ClientAddress prepares the client address block from the typed
// configuration. Every value printed is a constant of this function or
// went through a generator of escape.go.
func (v *mainView) ClientAddress() (*clientAddressView, error) {
	c := v.Config.RealIP
	out := &clientAddressView{Scheme: "$scheme", Port: "$server_port", TrustSource: "$realip_remote_addr", Peer: "$realip_remote_addr",
		Passthrough: v.passthrough && !v.passthroughPass}
	switch {
	case !c.Enabled() && v.passthroughPass:
		// The passed connection is the client's own: only its port needs
		// filling in.
		out.PassedPort, out.Port = v.httpsPort, "$causeway_server_port"
		return out, nil
	case !c.Enabled() && v.passthrough:
		// Only HTTPS requests, through the passthrough proxy, carry a
		// PROXY header: its address is the client's.
		out.RealIPHeader, out.ServerPortMap, out.Port = "proxy_protocol", true, "$causeway_server_port"
		return out, nil
	case !c.Enabled():
		return out, nil
	case v.passthrough && !c.UseProxyProtocol:
		return nil, fmt.Errorf("TLS passthrough with the client address from a header")
	}
	for _, p := range c.TrustedCIDRs {
		s, err := realIPCIDR(p)
		if err != nil {
			return nil, err
		}
		out.Trusted = append(out.Trusted, s)
	}
	if len(out.Trusted) == 0 {
		return nil, fmt.Errorf("the real client address needs at least one trusted CIDR")
	}
	if c.UseProxyProtocol {
		out.RealIPHeader = "proxy_protocol"
		out.ProxyProtocol = true
		out.Scheme, out.Port = "$causeway_proxy_protocol_scheme", "$proxy_protocol_server_port"
		out.TrustSource, out.Peer = "$proxy_protocol_addr", "$proxy_protocol_addr"
	} else {
		h, err := realIPHeaderName(c.ForwardedForHeader)
		if err != nil {
			return nil, err
		}
		out.RealIPHeader = h
	}
	out.TrustForwarded = c.UseForwardedHeaders
	out.FullForwardedFor = c.UseForwardedHeaders && c.ComputeFullForwardedFor
	return out, nil
}
