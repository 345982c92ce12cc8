package render

import (
	"net/netip"

	"github.com/causeway/causeway/internal/model"
)

// GlobalConfiguration HTTP listeners (model.HTTPListener): a server with
// Listeners listens on them instead of the controller's HTTP and HTTPS
// ports, and each listener in use gets a default server that answers the
// hosts not served there with 404, so a request for another host never
// reaches a VirtualServer that did not ask for the port.

// listenerDefaultView is one listener's default server.
type listenerDefaultView struct {
	Listen []string
	SSL    bool
	// Reject refuses every TLS handshake (ssl-reject-handshake): the
	// listener's hosts all have servers of their own.
	Reject bool `json:",omitempty"`
	// HTTP2On is the http2 directive (use-http2, where the data plane
	// has it): the default server of an address decides whether a
	// cleartext connection may start with HTTP/2's preface.
	HTTP2On bool `json:",omitempty"`
	// Cert is the PEM bundle of the listener's own certificate, "" for
	// the default one, DefaultCert (tlscontext.go); "" both without TLS.
	Cert        string `json:",omitempty"`
	DefaultCert string `json:",omitempty"`
	// Misdirected is as serverView's.
	Misdirected string `json:",omitempty"`
	// ClientTLS is the listener's client certificate check
	// (listenerClientTLS), nil for none.
	ClientTLS *clientTLSView `json:",omitempty"`
}

// listenLines are the listen addresses of an HTTP listener: its ipv4 and
// ipv6 when given, else the controller's listen address.
func listenLines(l *model.HTTPListener, p Params, proxyProtocol bool) ([]string, error) {
	out, err := listenerAddrs(l.IPv4, l.IPv6, l.Port, p)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if proxyProtocol {
			out[i] += " proxy_protocol"
		}
		if l.H2C && !l.SSL && !p.Flavour.HTTP2Directive() {
			// Where the data plane has the http2 directive, the
			// server's "http2 on" serves both on one port.
			out[i] += " http2"
		}
	}
	return out, nil
}

// listenerAddrs are the address:port a GlobalConfiguration listener binds,
// HTTP or stream: its ipv4 and ipv6 when given, else the controller's
// listen address.
func listenerAddrs(v4, v6 netip.Addr, port int, p Params) ([]string, error) {
	var addrs []string
	for _, a := range []netip.Addr{v4, v6} {
		if a.IsValid() {
			addrs = append(addrs, a.String())
		}
	}
	if len(addrs) == 0 {
		addrs = []string{p.ListenAddress}
	}
	var out []string
	for _, a := range addrs {
		line, err := listen(a, port)
		if err != nil {
			return nil, err
		}
		out = append(out, line)
	}
	return out, nil
}

// planListeners sets a server's listen lines from its Listeners; ok is
// false when it is served on none (it then gets no server block: one
// without listen would take nginx's default port).
func planListeners(v *serverView, srv *model.Server, p Params, proxyProtocol bool) (ok bool, err error) {
	l := srv.Listeners
	v.ListenHTTP, v.ListenHTTPS = "", ""
	if l.HTTP != nil {
		lines, err := listenLines(l.HTTP, p, proxyProtocol)
		if err != nil {
			return false, err
		}
		v.ListenHTTP, v.ListenHTTPMore = lines[0], lines[1:]
	}
	if l.HTTPS != nil {
		lines, err := listenLines(l.HTTPS, p, proxyProtocol)
		if err != nil {
			return false, err
		}
		v.ListenHTTPS, v.ListenHTTPSMore = lines[0], lines[1:]
		v.Misdirected = misdirectedVariable(l.HTTPS)
	}
	return l.HTTP != nil || l.HTTPS != nil, nil
}

// listenerDefaults are the default servers of the listeners in use.
func listenerDefaults(m *model.Model, p Params) ([]listenerDefaultView, error) {
	// A listener whose default server is a model server (a Gateway's
	// routes for every host) gets no 404 server.
	served := map[*model.HTTPListener]bool{}
	for _, srv := range m.Servers {
		if srv.Host == "" && srv.Listeners != nil {
			served[srv.Listeners.HTTP], served[srv.Listeners.HTTPS] = true, true
		}
	}
	var out []listenerDefaultView
	var defaultCert string
	for _, l := range m.HTTPListeners {
		if served[l] {
			continue
		}
		lines, err := listenLines(l, p, m.Config.RealIP.UseProxyProtocol)
		if err != nil {
			return nil, err
		}
		v := listenerDefaultView{Listen: lines, SSL: l.SSL, Reject: l.SSL && m.Config.SSLRejectHandshake,
			HTTP2On: m.Config.HTTP2 && p.Flavour.HTTP2Directive(), Misdirected: misdirectedVariable(l)}
		if v.ClientTLS, err = listenerClientTLS(l, m, p); err != nil {
			return nil, err
		}
		if l.SSL && l.Certificate != "" {
			if v.Cert, _, err = certDirectives(p.StateDir, l.Certificate, certAtReload, false); err != nil {
				return nil, err
			}
			v.Reject = false
		} else if l.SSL {
			if defaultCert == "" {
				if defaultCert, err = defaultCertArg(m, p.StateDir); err != nil {
					return nil, err
				}
			}
			v.DefaultCert = defaultCert
		}
		out = append(out, v)
	}
	return out, nil
}
