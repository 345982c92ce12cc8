package model

import "net/netip"

// HTTPListener is an HTTP listener of the GlobalConfiguration that a
// VirtualServer is served on (spec.listener) instead of the controller's
// HTTP and HTTPS ports.
type HTTPListener struct {
	Name string
	Port int
	// SSL makes it an HTTPS listener.
	SSL bool
	// Certificate is the key of the TLSSecret (in Model.Secrets) its
	// default server presents, for server names no server of the
	// listener has; "" for the controller's default certificate. A
	// Gateway's HTTPS listener without a hostname presents its own.
	Certificate string
	// H2C serves HTTP/2 without TLS, by prior knowledge (a Gateway
	// port with GRPCRoutes). Where the data plane cannot tell HTTP/2 from
	// HTTP/1 on one cleartext port (nginx before 1.25.1), the port then
	// speaks HTTP/2 only.
	H2C bool
	// Hostnames are, on an HTTPS port of Gateway listeners, the
	// listeners' hostnames ("" for one without, "*.suffix" for a
	// wildcard covering any number of labels), sorted. A request whose
	// Host goes to another of them than its server name (SNI) does is
	// answered 421 Misdirected Request, as Gateway API asks of HTTPS
	// listeners that share a port. Empty: no such check.
	Hostnames []string
	// ClientCA, on an HTTPS listener, is the key of the ProxyCA (in
	// Model.ProxyCAs) every client certificate is checked against; a
	// request without a valid one gets no answer, unless
	// ClientCAOptional, which serves it all the same. "" for none.
	ClientCA         string
	ClientCAOptional bool
	// IPv4 and IPv6 are the addresses it binds; when neither is valid it
	// binds the controller's listen address, as the other ports do.
	IPv4, IPv6 netip.Addr
}

// ServerListeners are the listeners a server is served on instead of the
// controller's HTTP and HTTPS ports. A nil one means the server is not
// served over that protocol; with both nil it is not served at all.
type ServerListeners struct {
	HTTP, HTTPS *HTTPListener
}
