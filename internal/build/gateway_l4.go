package build

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/model"
)

// Gateway listeners of the stream kinds: a TLS listener in Passthrough
// mode passes connections by server name to its TLSRoutes' backends
// (model.SNIListener); a TCP or UDP listener proxies every connection to
// its TCPRoute's or UDPRoute's backend (model.StreamServer). nginx's
// stream module has no Lua balancer here: endpoints are written into the
// file, and a change reloads, as for TransportServers.

// gatewayStreamPort is one nginx port of stream listeners.
type gatewayStreamPort struct {
	port     int
	protocol gwv1.ProtocolType
	// cert is the certificate key a TLS port terminates TLS with (its
	// first terminating listener's), "" when none terminates.
	cert  string
	owner model.ObjectRef
	// sets are the port's listeners by hostname (TLS; TCP and UDP
	// listeners have none, so one set).
	sets map[string]*streamSet
}

// streamSet is the listeners of one port and hostname with their routes.
type streamSet struct {
	hostname string
	// terminate says the set's listener terminates TLS (with the
	// port's cert) before passing connections.
	terminate bool
	// byHost are a TLS set's routes by the server name they serve, the
	// oldest first; all those that name none. TCP and UDP sets have all.
	byHost map[string][]*gateway.StreamRoute
	all    []*gateway.StreamRoute
}

// streamKey is a stream port: its number and whether it is UDP's.
type streamKey struct {
	port int
	udp  bool
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// streamListener makes the port of a ready TLS, TCP or UDP listener.
func (b *gatewayProcessor) streamListener(g *gateway.Gateway, l *gateway.Listener, port int) {
	var cert string
	switch {
	case l.Protocol == gwv1.TLSProtocolType && l.TLSMode == gwv1.TLSModePassthrough:
	case l.Protocol == gwv1.TLSProtocolType && l.TLSMode == gwv1.TLSModeTerminate && len(l.Certificates) > 0:
		cert = l.Certificates[0].Namespace + "/" + l.Certificates[0].Name
	case l.Protocol == gwv1.TCPProtocolType, l.Protocol == gwv1.UDPProtocolType:
	default:
		b.listenerNotServed(g, l, gwv1.ListenerReasonInvalid, "%q: protocol %s (TLS mode %q) is not served by this version of Causeway", l.Name, l.Protocol, l.TLSMode)
		return
	}
	if !b.opts.StreamAvailable {
		b.listenerNotServed(g, l, gwv1.ListenerReasonInvalid, "%q: nginx has no stream module (ngx_stream_module.so, Debian's libnginx-mod-stream); it is not served", l.Name)
		return
	}
	// UDP has ports of its own: a UDP listener shares its port number
	// with the TCP protocols' (DNS on 53 over both, say).
	udp := l.Protocol == gwv1.UDPProtocolType
	if hp := b.ports[port]; hp != nil && !udp {
		b.listenerNotServed(g, l, gwv1.ListenerReasonInvalid, "%q: port %d is an HTTP listener's of %s; it is not served", l.Name, port, hp.owner)
		return
	}
	key := streamKey{port, udp}
	sp := b.streams[key]
	if sp == nil {
		sp = &gatewayStreamPort{port: port, protocol: l.Protocol, cert: cert, owner: g.Ref, sets: map[string]*streamSet{}}
		b.streams[key] = sp
	} else if sp.protocol != l.Protocol {
		b.listenerNotServed(g, l, gwv1.ListenerReasonInvalid, "%q: port %d is a %s listener's of %s; it is not served", l.Name, port, sp.protocol, sp.owner)
		return
	} else if cert != "" && sp.cert != "" && sp.cert != cert {
		// One port terminates TLS with one certificate (its listeners'
		// hostnames pick routes, not certificates).
		b.listenerNotServed(g, l, gwv1.ListenerReasonInvalid, "%q: port %d terminates TLS with %s's certificate, not this listener's; it is not served",
			l.Name, port, sp.owner)
		return
	} else if sp.cert == "" {
		sp.cert = cert
	}
	set := sp.sets[l.Hostname]
	if set == nil {
		set = &streamSet{hostname: l.Hostname, terminate: cert != "", byHost: map[string][]*gateway.StreamRoute{}}
		sp.sets[l.Hostname] = set
	} else if set.terminate != (cert != "") {
		// Gateways sharing a port (the files source) with one hostname.
		b.listenerNotServed(g, l, gwv1.ListenerReasonInvalid, "%q: hostname %q on port %d is served in the other TLS mode for %s; it is not served",
			l.Name, l.Hostname, port, sp.owner)
		return
	}
	b.streamSets[l] = set
}

// streamTranslation translates one route of a stream kind.
type streamTranslation func(gateway.RouteEnv) (*gateway.StreamRoute, []model.Problem)

// streamRoute translates and attaches a route of a stream kind.
func (b *gatewayProcessor) streamRoute(at gateway.Attached, env gateway.RouteEnv, translate streamTranslation) {
	r, problems := translate(env)
	b.problems = append(b.problems, problems...)
	for _, a := range at.Attachments {
		for _, al := range a.Listeners {
			set := b.streamSets[al.Listener]
			if set == nil {
				continue
			}
			add := func(list []*gateway.StreamRoute) []*gateway.StreamRoute {
				if slices.Contains(list, r) {
					return list
				}
				return append(list, r)
			}
			if al.All || al.Listener.Protocol != gwv1.TLSProtocolType {
				set.all = add(set.all)
				continue
			}
			for _, h := range al.Hostnames {
				set.byHost[h] = add(set.byHost[h])
			}
		}
	}
}

// oldestStream sorts routes oldest first, then by namespace/name.
func oldestStream(routes []*gateway.StreamRoute) {
	slices.SortStableFunc(routes, func(x, y *gateway.StreamRoute) int {
		return cmp.Or(x.Created.Compare(y.Created), strings.Compare(x.Ref.Key(), y.Ref.Key()))
	})
}

// serveStream makes the model of one stream port: an SNIListener of TLS
// listeners, a StreamServer of a TCP or UDP one. A server name (or a TCP
// or UDP listener) that several routes claim goes to the oldest; the
// others are told.
func (b *gatewayProcessor) serveStream(sp *gatewayStreamPort) {
	name := "gw-" + strconv.Itoa(sp.port)
	if sp.protocol == gwv1.UDPProtocolType {
		name += "-udp"
	}
	lost := func(r, winner *gateway.StreamRoute, what string) {
		b.problems = append(b.problems, model.Problem{Object: r.Ref, Reason: model.ReasonCollision,
			Condition: &model.StatusCondition{Type: string(gwv1.RouteConditionPartiallyInvalid), Status: "True", Reason: string(gwv1.RouteReasonUnsupportedValue)},
			Message:   fmt.Sprintf("%s on port %d is served by %s, an older route: this route gets none of its connections", what, sp.port, winner.Ref)})
	}
	if sp.protocol != gwv1.TLSProtocolType {
		set := sp.sets[""]
		if set == nil || len(set.all) == 0 {
			return
		}
		oldestStream(set.all)
		for _, r := range set.all[1:] {
			lost(r, set.all[0], "the listener")
		}
		r := set.all[0]
		proto, kproto := model.StreamTCP, corev1.ProtocolTCP
		if sp.protocol == gwv1.UDPProtocolType {
			proto, kproto = model.StreamUDP, corev1.ProtocolUDP
		}
		srv := &model.StreamServer{Listener: name, Port: sp.port, Protocol: proto, Source: r.Ref,
			Proxy: model.StreamProxy{ConnectTimeout: sniConnectTimeout, Timeout: sniTimeout}}
		b.weightedEndpoints(srv, r, kproto)
		b.addStream(srv)
		slices.SortFunc(b.model.Streams, func(x, y *model.StreamServer) int { return strings.Compare(x.Listener, y.Listener) })
		return
	}
	l := &model.SNIListener{Name: name, Port: sp.port}
	if sp.cert != "" {
		l.TLS = &model.StreamTLS{Secret: sp.cert}
	}
	seen := map[string]bool{}
	for _, set := range sp.sets {
		for h, routes := range set.byHost {
			oldestStream(routes)
			for _, r := range routes[1:] {
				lost(r, routes[0], "server name "+h)
			}
			if seen[h] {
				continue
			}
			seen[h] = true
			r := b.sniRoute(h, routes[0])
			r.Terminate = set.terminate
			l.Routes = append(l.Routes, r)
		}
		if len(set.all) > 0 {
			// A route without hostnames on a listener without one takes
			// every server name the others do not, and none.
			oldestStream(set.all)
			for _, r := range set.all[1:] {
				lost(r, set.all[0], "every other server name")
			}
			l.Default = b.sniRoute("", set.all[0])
			l.Default.Terminate = set.terminate
		}
	}
	slices.SortFunc(l.Routes, func(x, y *model.PassthroughRoute) int { return strings.Compare(x.Host, y.Host) })
	b.model.SNIListeners = append(b.model.SNIListeners, l)
	slices.SortFunc(b.model.SNIListeners, func(x, y *model.SNIListener) int { return strings.Compare(x.Name, y.Name) })
}

// sniRoute is the passthrough route of server name h to r's backend.
func (b *gatewayProcessor) sniRoute(h string, r *gateway.StreamRoute) *model.PassthroughRoute {
	out := &model.PassthroughRoute{Host: h, Source: r.Ref,
		Proxy: model.StreamProxy{ConnectTimeout: sniConnectTimeout, Timeout: sniTimeout}}
	if len(r.Backends) > 0 {
		if be := b.streamBackend(r, r.Backends[0].Backend, corev1.ProtocolTCP); be != nil {
			out.Backend, out.Endpoints = be.Key, be.Endpoints
		}
	}
	return out
}

// weightedEndpoints gives srv the endpoints of r's backends, each
// backend's weight spread over its endpoints: an endpoint of a backend of
// weight w with n endpoints weighs w*L/n, L the least common multiple of
// the backends' endpoint counts, so each backend's share is its weight's.
// One backend needs no weights.
func (b *gatewayProcessor) weightedEndpoints(srv *model.StreamServer, r *gateway.StreamRoute, proto corev1.Protocol) {
	type resolved struct {
		be *model.Backend
		w  int
	}
	var all []resolved
	l := 1
	for _, sb := range r.Backends {
		be := b.streamBackend(r, sb.Backend, proto)
		if be == nil || len(be.Endpoints) == 0 {
			continue
		}
		all = append(all, resolved{be, sb.Weight})
		if l = lcm(l, len(be.Endpoints)); l > model.MaxSplitWeight {
			l = model.MaxSplitWeight + 1 // weights beyond bounds: see below
		}
	}
	if len(all) == 0 {
		return
	}
	srv.Backend = all[0].be.Key
	for _, x := range all {
		srv.Endpoints = append(srv.Endpoints, x.be.Endpoints...)
	}
	if len(all) == 1 {
		return
	}
	g := 0
	for _, x := range all {
		g = gcd(g, x.w*l/len(x.be.Endpoints))
	}
	for _, x := range all {
		w := x.w * l / len(x.be.Endpoints) / g
		if w > model.MaxSplitWeight {
			b.problem(r.Ref, model.ReasonUnsupported, false, "the backends' weights over their endpoints exceed nginx's bounds; connections are shared equally among the endpoints")
			srv.Weights = nil
			return
		}
		for range x.be.Endpoints {
			srv.Weights = append(srv.Weights, w)
		}
	}
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func lcm(a, b int) int { return a / gcd(a, b) * b }

// streamBackend resolves one of a stream route's backends, or says why
// not.
func (b *gatewayProcessor) streamBackend(r *gateway.StreamRoute, sb gateway.Backend, proto corev1.Protocol) *model.Backend {
	be, err := b.idx.resolveProtocol(sb.Namespace, &networkingv1.IngressServiceBackend{Name: sb.Service,
		Port: networkingv1.ServiceBackendPort{Number: sb.Port}}, proto)
	if err != nil {
		b.problem(r.Ref, model.ReasonMissingService, false, "backend %s: %v; its connections are closed", sb.Key(), err)
		return nil
	}
	return be
}

// sniConnectTimeout and sniTimeout are a stream route's connect and idle
// timeouts (Gateway API has no field for them): a TransportServer's
// defaults.
const (
	sniConnectTimeout = time.Minute
	sniTimeout        = 10 * time.Minute
)
