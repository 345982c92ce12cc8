package render

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/spanlog"
)

// Hosts without a reload. nginx 1.22 picks a server block by server_name
// from tables built at reload, so a host added since then lands in the
// catch-all server, or in a wildcard server whose name covers it. Hosts
// that are alike already share one server block (group.go), which takes
// everything that differs between them (the backends, the access log's
// values) from maps on $host. A host of such a shape can therefore be
// served without a reload by the same locations, given its own values:
//
//   - each shared shape that can be served this way has a second server
//     block, its hop server: the same text, listening on a unix socket of
//     its own (layout.Dir.HopSocket) for any Host;
//   - the catch-all and wildcard servers look the request's host up in a
//     table the controller pushes (causeway.hosts, one shared-dict read)
//     and hand a listed host's request to the hop server of its shape,
//     unbuffered, with what they computed of the connection: the client's
//     address (the hop server's realip believes it from the socket only),
//     the X-Forwarded-* values and HSTS;
//   - the hop server sets its map variables from the host's entry in the
//     table, so its locations select that host's backends;
//   - a listed host's certificate is served by SNI from the table
//     (causeway.certs).
//
// The render knows which hosts to leave to the table: Params.Hop says
// which shapes the running configuration has hop servers for and which
// names it serves. A new exact host (none of its names served) whose shape
// is one of those is left out of the files and listed in Output.Hosts;
// when the files are then the running ones byte for byte, the host is
// served by a push alone. Anything the table cannot carry (a value a map
// cannot hold, a shape that lost its hop server) renders everything into
// the files instead, as without Params.Hop.
//
// Only shapes whose text depends on nothing the hop changes get a hop
// server: not the connection's own variables ($scheme, $https,
// $server_port, TLS and PROXY protocol variables, $request_id), gRPC
// (HTTP/2 end to end), client certificates, mirrors, ModSecurity,
// www. twins, auth loops, Gateway servers, or listeners other than the
// catch-all's (hopForbidden, hopEligible).

// HopState is what a render tells the next one about its configuration:
// the shapes with a hop server (12 hex digits) and every name a server
// block of it serves.
type HopState struct {
	Shapes map[string]bool
	Names  map[string]bool
	// shapes is what HopHosts needs of the render that made Shapes and
	// Names (hopadd.go); nil from other HopStates. It is derived from
	// the same inputs as they are, so the memo's digest leaves it out.
	shapes *hopShapes
}

// hopView is a server's part in serving hosts added since the last
// reload: the catch-all's or a wildcard's hand-over (Front), or the hop
// server of shape Shape on Socket.
type hopView struct {
	Front  *hopFrontView
	Socket string
	Shape  string
	// HSTS: the http level defines $causeway_hsts.
	HSTS bool
}

type hopFrontView struct {
	HSTS bool
	// Upstream: this file (the catch-all's) defines the causeway_hop
	// upstream the front servers proxy to.
	Upstream bool
}

// hopVars are the variables whose values change through the hop: the
// connection's own, which the hop server sees as the socket's; and
// hopVarPrefixes start more of them.
var (
	hopVars = map[string]bool{
		"scheme": true, "https": true, "server_port": true, "server_addr": true, "server_name": true,
		"http2": true, "server_protocol": true, "request_id": true, "connection": true,
		"connection_requests": true, "remote_port": true,
	}
	hopVarPrefixes = []string{"ssl_", "proxy_protocol_", "realip_remote_"}
)

// hopDirectives are directives a hop server must not have: gRPC needs
// HTTP/2 from the client, client certificates the client's handshake, and
// mirrors and ModSecurity plan files per location.
var hopDirectives = map[string]bool{
	"grpc_pass": true, "ssl_verify_client": true, "mirror": true, "modsecurity": true, "modsecurity_rules_file": true,
}

// hopForbidden says why the text of a hop server cannot serve a hopped
// request as its shared server would, or "". It reads every variable
// ($name or ${name}) and every line's first word, once.
func hopForbidden(text []byte) string {
	for line := range bytes.Lines(text) {
		if f := bytes.Fields(line); len(f) > 0 && hopDirectives[string(f[0])] {
			return "has " + string(f[0])
		}
		for i := bytes.IndexByte(line, '$'); i >= 0; {
			rest := line[i+1:]
			rest = bytes.TrimPrefix(rest, []byte("{"))
			n := 0
			for n < len(rest) && (rest[n] == '_' || rest[n] >= 'a' && rest[n] <= 'z' || rest[n] >= 'A' && rest[n] <= 'Z' || rest[n] >= '0' && rest[n] <= '9') {
				n++
			}
			name := string(rest[:n])
			if hopVars[name] {
				return "reads $" + name
			}
			for _, prefix := range hopVarPrefixes {
				if strings.HasPrefix(name, prefix) {
					return "reads $" + name
				}
			}
			next := bytes.IndexByte(rest[n:], '$')
			if next < 0 {
				break
			}
			line = rest[n:]
			i = next
		}
	}
	return ""
}

// hopEligible says whether the shared server v, beside the catch-all def,
// may have a hop server. A catch-all that refuses unknown server names
// (ssl-reject-handshake) would refuse a new host's handshake.
func hopEligible(v, def *serverView) bool {
	return def != nil && !def.RejectHandshake && len(v.Twins) == 0 && v.AuthLoop == nil && v.ClientTLS == nil &&
		v.Misdirected == "" && !v.RejectHandshake && v.StaplingFile == "" && v.HSTS == nil &&
		!strings.Contains(v.CertLua, `", "`) && // an OCSP response beside the certificate
		v.ListenHTTP == def.ListenHTTP && v.ListenHTTPS == def.ListenHTTPS &&
		slices.Equal(v.ListenHTTPMore, def.ListenHTTPMore) && slices.Equal(v.ListenHTTPSMore, def.ListenHTTPSMore) &&
		v.HTTP2 == def.HTTP2 && v.HTTP2On == def.HTTP2On
}

// hopServer is the hop server of the shared server v (shape id) and its
// text, or nil when it may have none.
func hopServer(v, def *serverView, id string, rc *renderCtx) (*serverView, []byte, error) {
	if !rc.m.Config.ReloadFreeHosts || !hopEligible(v, def) {
		return nil, nil, nil
	}
	if !HopSocketsFit(rc.p.StateDir) {
		return nil, nil, nil // the controller said so at start
	}
	socket, err := quotedPathBody(rc.p.StateDir.HopSocket(id))
	if err != nil {
		return nil, nil, err
	}
	h := *v
	h.Sources, h.ServerNames, h.names = nil, nil, nil
	h.ListenHTTP, h.ListenHTTPS, h.ListenHTTPMore, h.ListenHTTPSMore = "", "", nil, nil
	h.HTTP2, h.HTTP2On, h.DefaultServer = false, false, false
	h.Cert, h.CertLua, h.TLSCiphers, h.PreferServerCiphers = "", "", "", ""
	h.Maps, h.AuthUpstreams, h.Twins = nil, nil, nil
	h.Hop = &hopView{Socket: socket, Shape: id, HSTS: rc.hsts}
	text, err := execute("server", &h)
	if err != nil {
		return nil, nil, err
	}
	if hopForbidden(text) != "" {
		return nil, nil, nil
	}
	return &h, text, nil
}

// HopSocketsFit reports whether hop servers' sockets in dir fit a unix
// socket's address (their names are all one length). When they do not, no
// shape has a hop server, and every new host reloads nginx as with
// reload-free-hosts false: the controller warns at start.
func HopSocketsFit(dir layout.Dir) bool {
	return len(HopSocketExample(dir)) <= balancer.MaxHostHopLen
}

// HopSocketExample is a hop server's socket path in dir: every shape's is
// as long.
func HopSocketExample(dir layout.Dir) string {
	return dir.HopSocket(strings.Repeat("0", 2*shapeIDBytes))
}

// hopFront makes v, the catch-all or a wildcard server, hand hosts of the
// table over, and serve their certificates.
func hopFront(v *serverView, rc *renderCtx) error {
	v.Hop = &hopView{Front: &hopFrontView{HSTS: rc.hsts, Upstream: v.DefaultServer}}
	if v.CertLua != "" {
		// Its own certificate, but a table host's by SNI.
		args, ok := strings.CutPrefix(v.CertLua, certsServe)
		if !ok {
			return fmt.Errorf("server %v: certificate block %q is not certDirectives'", v.ServerNames, v.CertLua)
		}
		v.CertLua = certsServeTable + args
		return nil
	}
	if v.ListenHTTPS == "" && len(v.ListenHTTPSMore) == 0 {
		return nil
	}
	// The http level's certificate, through Lua so that a host of the
	// table gets its own (causeway.certs).
	path, err := defaultCertPath(rc.m, rc.p.StateDir)
	if err != nil {
		return err
	}
	plain, err := quotedPathBody(path)
	if err != nil {
		return err
	}
	v.CertLua = certsServeTable + `("` + plain + `") }`
	return nil
}

// hopDeferred tells whether the exact host v, of shape key, is one the
// running configuration can serve from the table: a new host (none of its
// names served) of a shape with a hop server.
func hopDeferred(p Params, key string, v *serverView) bool {
	if p.Hop == nil || !p.Hop.Shapes[shapeID(key)] {
		return false
	}
	for _, n := range v.ServerNames {
		if p.Hop.Names[unquoteName(n)] {
			return false
		}
	}
	for _, n := range v.names {
		if p.Hop.Names[n] {
			return false
		}
	}
	return true
}

// shapeID is the 12 hex digits naming a shape's shared file and maps.
func shapeID(key string) string { return hex.EncodeToString([]byte(key[:shapeIDBytes])) }

// shapeIDBytes are the bytes of a shape's digest its ID spells in hex.
const shapeIDBytes = 6

// errHopConflict: a deferred host's values do not fit its shape's hop
// server; the render then starts again without deferring any host.
var errHopConflict = fmt.Errorf("a host cannot be served from the table")

// hopHosts are the table's entries for the members of shape id left out
// of its shared server v: per name of each, the value of each of v's
// maps. Their metrics and span entries join rc's as the members' do
// (shareLogVars).
func hopHosts(v *serverView, id string, deferred []*memberView, rc *renderCtx) ([]balancer.Host, error) {
	if v.HopServer == nil {
		return nil, errHopConflict
	}
	cert := ""
	if v.CertLua != "" {
		cert = v.Cert
	}
	var out []balancer.Host
	for _, m := range deferred {
		if len(m.Locations) != len(v.Locations) {
			return nil, errHopConflict
		}
		vars := map[string]string{}
		set := func(name, value string) bool {
			old, ok := vars[name]
			vars[name] = value
			return !ok || old == value
		}
		for i, l := range v.Locations {
			ml := m.Locations[i]
			if l.SelectMap != "" {
				if !set(l.SelectMap, ml.Backend) {
					return nil, errHopConflict
				}
			} else if l.SelectKey != ml.SelectKey {
				return nil, errHopConflict
			}
			if len(l.LogVars) != len(ml.LogVars) {
				return nil, errHopConflict
			}
			for j, lv := range l.LogVars {
				own := ml.LogVars[j].Value
				switch {
				case strings.HasPrefix(lv.Value, "$"):
					value, ok := plainQuoted(own)
					if !ok || !set(lv.Value[1:], value) {
						return nil, errHopConflict
					}
				case lv.Value == own:
				case lv.Name == balancer.MetricsVariable || lv.Name == balancer.CanaryMetricsVariable:
					key := balancer.SharedSeriesKey(id, i, lv.Name)
					src, ok := rc.planned[unquoteName(own)]
					if !ok || lv.Value != `"`+key+`"` {
						return nil, errHopConflict
					}
					for _, name := range m.ServerNames {
						rc.putSharedSeries(key, unquoteName(name), src)
					}
				case lv.Name == spanlog.Variable:
					own = unquoteName(own)
					key := spanlog.SharedKey(spanlog.Trusts(own), id, i)
					labels, ok := rc.tracePlanned[own]
					if !ok || lv.Value != `"`+key+`"` {
						return nil, errHopConflict
					}
					for _, name := range m.ServerNames {
						rc.spans[spanlog.SharedEntry(key, unquoteName(name))] = labels
					}
				default:
					return nil, errHopConflict
				}
			}
		}
		for _, name := range m.ServerNames {
			out = append(out, balancer.Host{Name: unquoteName(name), Shape: id, Hop: v.HopServer.Hop.Socket, Cert: cert, Vars: vars})
		}
	}
	return out, nil
}

// plainQuoted is the body of a quoted nginx string that holds no escape
// and no variable, as a map's value it is the same; false for any other.
func plainQuoted(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", false
	}
	body := s[1 : len(s)-1]
	if strings.ContainsAny(body, "\"\\$") {
		return "", false
	}
	return body, true
}

// hopHSTS says whether the http level defines $causeway_hsts.
func hopHSTS(m *model.Model) bool {
	v := mainView{Config: m.Config, hstsOverridden: hstsOverridden(m)}
	s, err := v.HSTSValue()
	return err == nil && s != ""
}
