package render

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
)

// TLS passthrough (model.Passthrough): a stream server on the HTTPS port
// reads the TLS server name (ssl_preread) and proxies, with a PROXY
// protocol header, either to one passed-through host's stream server or
// to the http servers' HTTPS listener, both on unix sockets in the
// workers' private sockets directory. The inner hop is what lets the
// passed-through connection skip the PROXY header: nginx sends it to every
// destination of a server or to none.
//
// Where the stream module has pass (flavour.StreamPass: nginx 1.25.5,
// Angie 1.6), the server passes the accepted connection itself to the
// chosen socket's listener instead: no second connection, no copying
// through the worker and no PROXY header, since the connection keeps the
// client's address.

// unixPeer is set_real_ip_from's name for unix-socket peers: the
// passthrough proxy, the only client of the inner sockets.
const unixPeer = "unix:"

// passthroughView feeds passthrough.stream.tmpl.
type passthroughView struct {
	Listen      string
	AcceptProxy bool
	// Pass hands connections over with pass rather than proxy_pass.
	Pass        bool
	Trusted     []string
	HTTPSSocket string
	Names       []passthroughName
}

// passthroughName is one map entry: a server name (a quoted string or a
// case-insensitive regex for a wildcard) and its inner socket.
type passthroughName struct {
	Key, Socket string
}

// passthroughFile renders the passthrough stream file: each route's
// upstream and inner server (stream.conf.tmpl), then the map and the
// server on the HTTPS port.
func passthroughFile(m *model.Model, p Params) ([]byte, []model.ObjectRef, error) {
	pt := m.Passthrough
	rip := m.Config.RealIP
	if rip.Enabled() && !rip.UseProxyProtocol {
		return nil, nil, fmt.Errorf("TLS passthrough with the client address from a header")
	}
	v := &passthroughView{AcceptProxy: rip.UseProxyProtocol, Pass: p.Flavour.StreamPass()}
	var err error
	if v.Listen, err = listen(p.ListenAddress, p.HTTPSPort); err != nil {
		return nil, nil, err
	}
	if v.HTTPSSocket, err = quotedPathBody(p.StateDir.HTTPSSocket()); err != nil {
		return nil, nil, err
	}
	if v.AcceptProxy {
		for _, c := range rip.TrustedCIDRs {
			s, err := realIPCIDR(c)
			if err != nil {
				return nil, nil, err
			}
			v.Trusted = append(v.Trusted, s)
		}
	}
	var out bytes.Buffer
	var sources []model.ObjectRef
	for _, r := range pt.Routes {
		inner, name, err := passthroughRoute(r, p)
		if err != nil {
			return nil, nil, fmt.Errorf("passthrough host %s: %w", r.Host, err)
		}
		b, err := execute("stream.conf.tmpl", inner)
		if err != nil {
			return nil, nil, err
		}
		out.Write(b)
		out.WriteString("\n")
		v.Names = append(v.Names, name)
		sources = append(sources, r.Source)
	}
	b, err := execute("passthrough.stream.tmpl", v)
	if err != nil {
		return nil, nil, err
	}
	out.Write(b)
	return out.Bytes(), sources, nil
}

// passthroughRoute is a route's inner stream server, on its unix socket,
// and its map entry.
func passthroughRoute(r *model.PassthroughRoute, p Params) (*streamView, passthroughName, error) {
	var name passthroughName
	if r.Terminate {
		return nil, name, fmt.Errorf("host %s: the HTTPS port's passthrough does not terminate TLS", r.Host)
	}
	key, err := passthroughKey(r.Host)
	if err != nil {
		return nil, name, err
	}
	sock, err := quotedPathBody(p.StateDir.PassthroughSocket(r.Host))
	if err != nil {
		return nil, name, err
	}
	// newStreamView checks the settings and writes the endpoints; the
	// listener name only feeds the upstream name, replaced below.
	v, err := newStreamView(&model.StreamServer{Listener: "passthrough", Port: p.HTTPSPort, Protocol: model.StreamTCP,
		Endpoints: r.Endpoints, Upstream: r.Upstream, Proxy: r.Proxy, Source: r.Source}, p)
	if err != nil {
		return nil, name, err
	}
	v.Upstream = "causeway_pt_" + strings.TrimSuffix(strings.TrimPrefix(filepath.Base(sock), "pt-"), ".sock")
	v.Listen = []string{"unix:" + sock}
	if !p.Flavour.StreamPass() {
		// Proxied to, behind a PROXY header naming the client.
		v.AcceptProxy = true
		if p.StreamRealIP {
			v.RealIPFrom = []string{unixPeer}
		}
	}
	return v, passthroughName{Key: key, Socket: sock}, nil
}

// passthroughKey is a host's map key. The map compares server names in
// lower case; a wildcard, "*.suffix", matches one more label, as an
// Ingress's wildcard host does, in any case.
func passthroughKey(host string) (string, error) {
	if host == "" {
		return "", fmt.Errorf("a passthrough host is required")
	}
	return hostMatch(host, "~*")
}

// passthroughFiles adds the passthrough file to the stream files.
func passthroughFiles(m *model.Model, p Params, files Files, sources map[string][]model.ObjectRef) error {
	if m.Passthrough == nil {
		return nil
	}
	b, refs, err := passthroughFile(m, p)
	if err != nil {
		return err
	}
	files[layout.PassthroughFile] = b
	sources[layout.PassthroughFile] = refs
	return nil
}
