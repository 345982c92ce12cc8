package build

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/gatewayservice"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// gatewayProcessor turns the Gateway API's objects of Causeway's classes
// into servers: the front-end (internal/frontend/gateway) checks the
// classes, Gateways and routes and translates each route's rules; here
// they meet the data plane's ports.
//
// Each Gateway listener port is an nginx port of its own: the internal
// port its Gateway's Service records (Options.GatewayServices), else the
// listener port itself (the files source, where Gateways that share a
// port share its servers). On one port, a request goes to the server of
// its host, and there to the routes of the most specific listener whose
// hostname matches it (listener isolation), most specific route
// hostname first (gateway.RouteRules.Rank). Gateway servers are scoped
// (model.Server.Scope) by their port: an Ingress and an HTTPRoute may
// name one host without meeting, as they are served on other ports.
type gatewayProcessor struct {
	*builder
	// ports are the Gateway ports served, by internal port.
	ports map[int]*gatewayPort
	// sets are the listener sets of the served listeners (a Gateway's
	// own and its ListenerSets').
	sets map[*gateway.Listener]*listenerSet
	// servers and listeners are what the ports make, in the order made.
	servers   []*model.Server
	listeners []*model.HTTPListener
	// streams and streamSets are the TLS, TCP and UDP listeners' ports
	// (gateway_l4.go).
	streams    map[streamKey]*gatewayStreamPort
	streamSets map[*gateway.Listener]*streamSet
	// backendTLS and proxyCAs are the BackendTLSPolicies and the CA
	// bundles of the ConfigMaps they name (gateway_backendtls.go).
	backendTLS *gateway.BackendTLS
	proxyCAs   map[string]*model.ProxyCA
}

// gatewayPort is one nginx port of Gateway listeners.
type gatewayPort struct {
	port  int
	https bool
	// owner is the Gateway of the port's first listener (by Gateway
	// age): the port's problems and splits are named after it.
	owner model.ObjectRef
	// sets are the port's listeners by hostname ("" for none).
	sets     map[string]*listenerSet
	listener *model.HTTPListener
}

// listenerSet is the listeners of one port and hostname (of several
// Gateways only in the files source) with the routes attached to them.
type listenerSet struct {
	hostname string
	// name and port are the first listener's: its sectionName and the
	// port clients use, for redirects.
	name  string
	port  int
	owner model.ObjectRef
	// cert is the key of the first listener's first certificate (HTTPS).
	cert string
	// clientCert is the proxy secret key of the owner Gateway's client
	// certificate for backends, "" for none (backendClientCert).
	clientCert string
	// exact and wild are the routes by hostname served; all the routes
	// that name none (of a listener without one).
	exact, wild map[string][]*gateway.RouteRules
	all         []*gateway.RouteRules
	gateways    []model.ObjectRef
}

// GatewayFeatures are the features Causeway's GatewayClasses list in
// status.supportedFeatures: those the data plane serves.
var GatewayFeatures = []gwv1.FeatureName{
	"Gateway", "HTTPRoute", "ReferenceGrant", "GRPCRoute",
	"GatewayPort8080", "GatewayHTTPListenerIsolation",
	"HTTPRouteHostRewrite", "HTTPRoutePathRewrite", "HTTPRoutePortRedirect",
	"HTTPRouteSchemeRedirect", "HTTPRoutePathRedirect", "HTTPRouteCORS", "HTTPRoute303RedirectStatusCode", "HTTPRoute307RedirectStatusCode",
	"HTTPRoute308RedirectStatusCode", "HTTPRouteQueryParamMatching", "HTTPRouteMethodMatching",
	"HTTPRouteResponseHeaderModification", "HTTPRouteBackendRequestHeaderModification", "HTTPRouteRequestTimeout", "HTTPRouteBackendTimeout",
	"HTTPRouteParentRefPort", "HTTPRouteDestinationPortMatching", "HTTPRouteNamedRouteRule", "GRPCRouteNamedRouteRule", "HTTPRouteBackendProtocolWebSocket",
	"GatewayHTTPSListenerDetectMisdirectedRequests", "GatewayBackendClientCertificate",
	"GatewayFrontendClientCertificateValidation", "GatewayFrontendClientCertificateValidationInsecureFallback",
	"HTTPRouteRequestMirror", "HTTPRouteRequestMultipleMirrors", "HTTPRouteRequestPercentageMirror",
	"HTTPRouteRetry", "HTTPRouteRetryBackendTimeout", "HTTPRouteRetryConnectionError",
	"TLSRoute", "TLSRouteModeTerminate", "TLSRouteModeMixed", "TCPRoute", "UDPRoute", "BackendTLSPolicy", "ListenerSet", "GatewayAddressEmpty",
}

func (b *gatewayProcessor) objects(*source.Snapshot) []object { return nil }

func (b *gatewayProcessor) after(snap *source.Snapshot) {
	if len(snap.GatewayClasses) == 0 {
		return
	}
	owners := map[string]gatewayservice.Owner{}
	for _, svc := range snap.GatewayServices {
		if o, ok := gatewayservice.Parse(svc); ok {
			owners[o.Key()] = o
		}
	}
	b.proxyCAs = map[string]*model.ProxyCA{}
	in := gateway.Inputs{Grants: snap.ReferenceGrants, Secret: b.gatewaySecret, CA: b.configMapCA, Namespaces: namespaceLabels(snap.Namespaces)}
	if !b.opts.GatewayServices {
		// The files source: listeners are served on nginx's own ports,
		// at the one address nginx listens on, if it is one.
		in.NoAddress = "nginx listens on every address (no --listen-address), so there is no one address to report; the listeners are served on their ports all the same"
	}
	addresses := func(ns, name string) []string {
		if !b.opts.GatewayServices {
			return b.opts.GatewayAddresses
		}
		return owners[ns+"/"+name].Addresses
	}
	var routes []gateway.Route
	https := map[gateway.Route]*gwv1.HTTPRoute{}
	grpcs := map[gateway.Route]*gwv1.GRPCRoute{}
	for _, r := range snap.HTTPRoutes {
		rt := gateway.HTTPRouteOf(r)
		https[rt] = r
		routes = append(routes, rt)
	}
	for _, r := range snap.GRPCRoutes {
		rt := gateway.GRPCRouteOf(r)
		grpcs[rt] = r
		routes = append(routes, rt)
	}
	// The stream kinds' translations, by route (a lookup per route, not
	// a scan).
	streams := map[gateway.Route]streamTranslation{}
	for _, r := range snap.TLSRoutes {
		rt := gateway.TLSRouteOf(r)
		streams[rt] = func(env gateway.RouteEnv) (*gateway.StreamRoute, []model.Problem) {
			return gateway.TranslateTLSRoute(r, env)
		}
		routes = append(routes, rt)
	}
	for _, r := range snap.TCPRoutes {
		rt := gateway.TCPRouteOf(r)
		streams[rt] = func(env gateway.RouteEnv) (*gateway.StreamRoute, []model.Problem) {
			return gateway.TranslateTCPRoute(r, env)
		}
		routes = append(routes, rt)
	}
	for _, r := range snap.UDPRoutes {
		rt := gateway.UDPRouteOf(r)
		streams[rt] = func(env gateway.RouteEnv) (*gateway.StreamRoute, []model.Problem) {
			return gateway.TranslateUDPRoute(r, env)
		}
		routes = append(routes, rt)
	}
	res, problems := gateway.Resolve(snap.GatewayClasses, snap.Gateways, snap.ListenerSets, routes, GatewayFeatures, addresses, in)
	b.problems = append(b.problems, problems...)
	b.gatewayResolution = res
	env := gateway.RouteEnv{
		Permitted: func(from, to gateway.RefEnd) bool {
			return gateway.Granted(snap.ReferenceGrants, gateway.GrantFrom{Group: from.Group, Kind: from.Kind, Namespace: from.Namespace},
				gateway.GrantTo{Group: to.Group, Kind: to.Kind, Namespace: to.Namespace, Name: to.Name})
		},
		ServicePort: b.gatewayServicePort,
		AppProtocol: b.gatewayAppProtocol,
		BackendTLS:  b.checkBackendTLS(snap),
	}
	b.ports = map[int]*gatewayPort{}
	b.sets = map[*gateway.Listener]*listenerSet{}
	b.streams = map[streamKey]*gatewayStreamPort{}
	b.streamSets = map[*gateway.Listener]*streamSet{}
	gws := sortedGateways(res)
	for _, g := range gws {
		// nginx refused what one of its servers rendered (the
		// controller's bisection names the objects of a file): the
		// Gateway is left out, the others go on.
		if b.excluded(g.Ref) {
			continue
		}
		b.gatewayPorts(g, owners)
	}
	for _, at := range res.Routes {
		if b.excluded(gatewayObject(at.Route.RouteKind(), at.Route)) {
			continue
		}
		if translate, ok := streams[at.Route]; ok {
			b.streamRoute(at, env, translate)
			continue
		}
		rules := b.translateRoute(at, env, https[at.Route], grpcs[at.Route])
		if rules == nil {
			continue
		}
		b.backendTLSUsed(at, rules)
		for _, a := range at.Attachments {
			for _, al := range a.Listeners {
				b.attach(a.Gateway, al, rules)
			}
		}
	}
	for _, port := range slices.Sorted(maps.Keys(b.ports)) {
		b.servePort(b.ports[port])
	}
	for _, k := range slices.SortedFunc(maps.Keys(b.streams), func(x, y streamKey) int {
		return cmp.Or(cmp.Compare(x.port, y.port), cmp.Compare(boolInt(x.udp), boolInt(y.udp)))
	}) {
		b.serveStream(b.streams[k])
	}
	b.finishBackendTLS()
}

// sortedGateways are the resolution's Gateways, oldest first: the first
// listener of a port (in the files source) is the oldest Gateway's.
func sortedGateways(res *gateway.Resolution) []*gateway.Gateway {
	out := make([]*gateway.Gateway, 0, len(res.Gateways))
	for _, g := range res.Gateways {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b *gateway.Gateway) int {
		return cmp.Compare(a.Ref.Key(), b.Ref.Key())
	})
	return out
}

// gatewaySecret checks a listener's certificate Secret as Ingress TLS
// Secrets are checked (gateway.Inputs.Secret).
func (b *gatewayProcessor) gatewaySecret(ns, name string) error {
	if reason, why := b.loadTLSSecret(ns, name); reason != "" {
		return errors.New("Secret " + ns + "/" + name + why)
	}
	return nil
}

// backendClientCert is the proxy secret key of Gateway g's client
// certificate for backends, "" for none (gateway.RouteListener), read
// once per listener set.
func (b *gatewayProcessor) backendClientCert(g *gateway.Gateway) string {
	if g.BackendClientCert == nil {
		return ""
	}
	ps, err := b.tlsFiles(annotations.ObjectName{Namespace: g.BackendClientCert.Namespace, Name: g.BackendClientCert.Name})
	if err == nil && len(ps.Cert) == 0 {
		err = errors.New("holds no tls.crt")
	}
	if err != nil {
		// The Gateway's check read the same Secret as a key pair.
		b.problems = append(b.problems, model.Problem{Object: g.Ref, Reason: model.ReasonInvalid,
			Message: fmt.Sprintf("spec.tls.backend.clientCertificateRef: Secret %s: %v; backends are spoken to without a client certificate", g.BackendClientCert, err)})
		return ""
	}
	return ps.Key()
}

// gatewayServicePort reports whether a Service exists and has port
// (gateway.RouteEnv.ServicePort).
func (b *gatewayProcessor) gatewayServicePort(ns, name string, port int32) (exists, hasPort bool) {
	svc := b.idx.service(ns, name)
	if svc == nil {
		return false, false
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return true, true
	}
	for _, p := range svc.Spec.Ports {
		if p.Port == port {
			return true, true
		}
	}
	return true, false
}

// gatewayAppProtocol is the appProtocol of a Service's port
// (gateway.RouteEnv.AppProtocol).
func (b *gatewayProcessor) gatewayAppProtocol(ns, name string, port int32) string {
	if svc := b.idx.service(ns, name); svc != nil {
		for _, p := range svc.Spec.Ports {
			if p.Port == port && p.AppProtocol != nil {
				return *p.AppProtocol
			}
		}
	}
	return ""
}

// namespaceLabels are the namespaces' labels by name (gateway.Inputs).
func namespaceLabels(nss []*corev1.Namespace) map[string]map[string]string {
	out := make(map[string]map[string]string, len(nss))
	for _, ns := range nss {
		out[ns.Name] = ns.Labels
	}
	return out
}

// gatewayPorts makes the nginx ports of the ready HTTP and HTTPS
// listeners of g and of its ListenerSets.
func (b *gatewayProcessor) gatewayPorts(g *gateway.Gateway, owners map[string]gatewayservice.Owner) {
	if !g.Accepted {
		return
	}
	for _, l := range g.AllListeners() {
		if !l.Ready() {
			continue
		}
		port := int(l.Port)
		if b.opts.GatewayServices {
			o, ok := owners[g.Ref.Namespace+"/"+g.Ref.Name]
			internal := o.Ports[int32(l.Port)]
			if !ok || internal == 0 {
				b.listenerNotServed(g, l, gwv1.ListenerReasonPending, "%q: its Service has no port %d yet; it is served once the leader has written it", l.Name, l.Port)
				continue
			}
			port = int(internal)
		} else if why := b.directPortTaken(port, l.Protocol == gwv1.UDPProtocolType); why != "" {
			b.listenerNotServed(g, l, gwv1.ListenerReasonInvalid, "%q: port %d is %s; it is not served", l.Name, port, why)
			continue
		}
		https := false
		switch l.Protocol {
		case gwv1.HTTPProtocolType:
		case gwv1.HTTPSProtocolType:
			https = true
		default:
			b.streamListener(g, l, port)
			continue
		}
		if sp := b.streams[streamKey{port, false}]; sp != nil {
			b.listenerNotServed(g, l, gwv1.ListenerReasonInvalid, "%q: port %d is a %s listener's of %s; it is not served", l.Name, port, sp.protocol, sp.owner)
			continue
		}
		var ca string
		var optional bool
		if v := l.ClientValidation; v != nil {
			ca, optional = v.CA, v.InsecureFallback
		}
		p := b.ports[port]
		if p == nil {
			p = &gatewayPort{port: port, https: https, owner: g.Ref, sets: map[string]*listenerSet{},
				listener: &model.HTTPListener{Name: "gateway-" + strconv.Itoa(port), Port: port, SSL: https, ClientCA: ca, ClientCAOptional: optional}}
			b.ports[port] = p
		} else if p.https != https {
			b.listenerNotServed(g, l, gwv1.ListenerReasonInvalid, "%q: port %d serves %s for %s; it is not served", l.Name, port,
				map[bool]string{true: "HTTPS", false: "HTTP"}[p.https], p.owner)
			continue
		} else if p.listener.ClientCA != ca || p.listener.ClientCAOptional != optional {
			// Gateways sharing a port (the files source) share its
			// handshake: one way of checking client certificates.
			b.listenerNotServed(g, l, gwv1.ListenerReasonInvalid, "%q: port %d checks client certificates as %s's spec.tls.frontend says, not as this Gateway's; it is not served",
				l.Name, port, p.owner)
			continue
		}
		set := p.sets[l.Hostname]
		if set == nil {
			set = &listenerSet{hostname: l.Hostname, name: string(l.Name), port: int(l.Port), owner: g.Ref,
				clientCert: b.backendClientCert(g), exact: map[string][]*gateway.RouteRules{}, wild: map[string][]*gateway.RouteRules{}}
			if https && len(l.Certificates) > 0 {
				c := l.Certificates[0]
				set.cert = c.Namespace + "/" + c.Name
			}
			p.sets[l.Hostname] = set
		}
		if !slices.Contains(set.gateways, g.Ref) {
			set.gateways = append(set.gateways, g.Ref)
		}
		b.sets[l] = set
	}
}

// translateRoute translates an attached HTTPRoute or GRPCRoute; other
// kinds are not served yet, with a Problem.
func (b *gatewayProcessor) translateRoute(at gateway.Attached, env gateway.RouteEnv, h *gwv1.HTTPRoute, g *gwv1.GRPCRoute) *gateway.RouteRules {
	accepted := slices.ContainsFunc(at.Attachments, func(a gateway.Attachment) bool { return a.Accepted() })
	var rules *gateway.RouteRules
	var problems []model.Problem
	switch {
	case h != nil:
		rules, problems = gateway.TranslateHTTPRoute(h, env)
	case g != nil:
		rules, problems = gateway.TranslateGRPCRoute(g, env)
	default:
		if accepted {
			b.problem(gatewayObject(at.Route.RouteKind(), at.Route), model.ReasonUnsupported, true,
				"%ss are not served yet by this version of Causeway", at.Route.RouteKind())
		}
		return nil
	}
	b.problems = append(b.problems, problems...)
	if rules == nil || !accepted {
		return nil
	}
	for _, rule := range rules.Rules {
		for _, m := range rule.Mirrors {
			b.gatewayBackend(rules.Ref, m.Backend)
		}
		for _, t := range rule.Targets {
			if t.Backend != nil {
				b.gatewayBackend(rules.Ref, *t.Backend)
			}
		}
	}
	return rules
}

// gatewayBackend registers a route's backend as Ingress backends are.
func (b *gatewayProcessor) gatewayBackend(ref model.ObjectRef, be gateway.Backend) {
	if _, ok := b.backends[be.Key()]; ok {
		return
	}
	m, err := b.idx.resolve(be.Namespace, &networkingv1.IngressServiceBackend{Name: be.Service,
		Port: networkingv1.ServiceBackendPort{Number: be.Port}})
	if err != nil {
		// The translation found the Service and its port: what is left
		// is what the Service itself cannot serve (an ExternalName refused).
		b.problem(ref, model.ReasonInvalid, false, "backend %s: %v", be.Key(), err)
		return
	}
	if be.Session != nil {
		b.sessionBackend(ref, m, be)
		return
	}
	b.addBackend(m)
}

// attach adds a route to the set of the listener it attached to.
func (b *gatewayProcessor) attach(g *gateway.Gateway, al gateway.AttachedListener, rules *gateway.RouteRules) {
	set := b.sets[al.Listener]
	if set == nil {
		return
	}
	add := func(list []*gateway.RouteRules) []*gateway.RouteRules {
		if slices.Contains(list, rules) {
			return list
		}
		return append(list, rules)
	}
	if al.All {
		set.all = add(set.all)
		return
	}
	for _, h := range al.Hostnames {
		if strings.HasPrefix(h, "*.") {
			set.wild[h] = add(set.wild[h])
		} else {
			set.exact[h] = add(set.exact[h])
		}
	}
}

// servePort makes the servers of one port: one per hostname a listener or
// a route names, and the port's default server when a listener without a
// hostname has routes for every host.
func (b *gatewayProcessor) servePort(p *gatewayPort) {
	hosts := map[string]bool{}
	for h, s := range p.sets {
		if h != "" {
			hosts[h] = true
		}
		for rh := range s.exact {
			hosts[rh] = true
		}
		for rh := range s.wild {
			hosts[rh] = true
		}
	}
	b.cleartextGRPC(p)
	for _, h := range slices.Sorted(maps.Keys(hosts)) {
		set := p.mostSpecific(h)
		if set == nil {
			continue
		}
		b.serve(p, set, h)
	}
	if s := p.sets[""]; s != nil && len(s.all) > 0 {
		b.serve(p, s, "")
	}
	// Server names no server of the port has get the certificate of its
	// listener without a hostname, or of its only listener.
	if s := p.sets[""]; s != nil && p.https {
		p.listener.Certificate = s.cert
	} else if len(p.sets) == 1 && p.https {
		for _, s := range p.sets {
			p.listener.Certificate = s.cert
		}
	}
	if p.https {
		// Misdirected requests are told apart by listener hostnames:
		// one listener without a hostname takes every request alike.
		if len(p.sets) > 1 || p.sets[""] == nil {
			p.listener.Hostnames = slices.Sorted(maps.Keys(p.sets))
		}
	}
	b.listeners = append(b.listeners, p.listener)
}

// cleartextGRPC lets a cleartext port with GRPCRoutes speak HTTP/2 by
// prior knowledge (h2c), as gRPC clients do without TLS; where the data
// plane cannot also speak HTTP/1 on that port, only while no HTTPRoute
// shares it, else each GRPCRoute on it is told.
func (b *gatewayProcessor) cleartextGRPC(p *gatewayPort) {
	if p.https {
		return
	}
	var grpc []model.ObjectRef
	http := false
	for _, s := range p.sets {
		for _, list := range append(append(slices.Collect(maps.Values(s.exact)), slices.Collect(maps.Values(s.wild))...), s.all) {
			for _, r := range list {
				if r.Ref.Kind == "GRPCRoute" {
					if !slices.Contains(grpc, r.Ref) {
						grpc = append(grpc, r.Ref)
					}
				} else {
					http = true
				}
			}
		}
	}
	if len(grpc) == 0 {
		return
	}
	if !http || b.opts.CleartextHTTP2Detect {
		p.listener.H2C = true
		return
	}
	model.SortRefs(grpc)
	for _, ref := range grpc {
		b.problems = append(b.problems, model.Problem{Object: ref, Reason: model.ReasonUnsupported,
			Condition: &model.StatusCondition{Type: string(gwv1.RouteConditionPartiallyInvalid), Status: "True", Reason: string(gwv1.RouteReasonUnsupportedValue)},
			Message: fmt.Sprintf("Gateway %s port %d also serves HTTPRoutes without TLS, and this data plane (nginx before 1.25.1) cannot speak "+
				"HTTP/1 and cleartext HTTP/2 on one port: gRPC clients are not served there (use an HTTPS listener, another port, or Angie)", p.owner, p.sets[firstSet(p)].port)})
	}
}

// firstSet is the hostname of a set of p, the smallest.
func firstSet(p *gatewayPort) string {
	return slices.Sorted(maps.Keys(p.sets))[0]
}

// mostSpecific is the set of the listener a request for host h goes to:
// the listener of that hostname, else of the longest wildcard covering
// it, else the one without a hostname.
func (p *gatewayPort) mostSpecific(h string) *listenerSet {
	if s := p.sets[h]; s != nil {
		return s
	}
	var best *listenerSet
	for name, s := range p.sets {
		if name == "" || !strings.HasPrefix(name, "*.") {
			continue
		}
		if in, ok := gateway.IntersectHostnames(name, h); ok && in == h && (best == nil || len(name) > len(best.hostname)) {
			best = s
		}
	}
	if best != nil {
		return best
	}
	return p.sets[""]
}

// routesFor are the routes set serves host h with, ranked: those naming h,
// then those of wildcards covering it, longest first, then those naming
// no hostname.
func (s *listenerSet) routesFor(h string) []*gateway.RouteRules {
	var out []*gateway.RouteRules
	rank := func(list []*gateway.RouteRules, r int) {
		for _, rr := range list {
			c := *rr
			c.Rank = r
			out = append(out, &c)
		}
	}
	if h != "" && !strings.HasPrefix(h, "*.") {
		rank(s.exact[h], 0)
	}
	wilds := slices.SortedFunc(maps.Keys(s.wild), func(a, b string) int { return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b)) })
	for _, w := range wilds {
		if h == "" {
			break
		}
		if in, ok := gateway.IntersectHostnames(w, h); ok && in == h {
			rank(s.wild[w], 1+256-len(w))
		}
	}
	rank(s.all, 1000)
	return out
}

// serve makes the server of host h on port p from set's routes.
func (b *gatewayProcessor) serve(p *gatewayPort, set *listenerSet, h string) {
	srv := &model.Server{Host: h, Scope: "gateway port " + strconv.Itoa(p.port), AnyDepth: true}
	if p.https {
		srv.Listeners = &model.ServerListeners{HTTPS: p.listener}
		if set.cert != "" {
			srv.TLS = &model.ServerTLS{Secret: set.cert}
		}
	} else {
		srv.Listeners = &model.ServerListeners{HTTP: p.listener}
	}
	srv.Sources = append(srv.Sources, set.gateways...)
	routes := set.routesFor(h)
	seen := map[model.ObjectRef]bool{}
	for _, r := range routes {
		if !seen[r.Ref] {
			seen[r.Ref] = true
			srv.Sources = append(srv.Sources, r.Ref)
		}
	}
	rl := gateway.RouteListener{Owner: set.owner, Name: set.name, Host: h, Port: set.port, HTTPS: p.https,
		BackendClientCert: set.clientCert}
	for _, pe := range gateway.Compose(routes) {
		loc, problems := pe.Location(rl)
		b.problems = append(b.problems, problems...)
		if loc != nil {
			srv.Locations = append(srv.Locations, loc)
		}
	}
	sortLocations(srv.Locations)
	srv.Default = &model.Location{Match: model.Match{Type: model.Prefix, Path: "/"}, Action: model.ReturnStatus(404)}
	model.SortRefs(srv.Sources)
	b.servers = append(b.servers, srv)
}

// sortLocations orders locations by path, Exact before Prefix, as the
// model keeps them.
func sortLocations(locs []*model.Location) {
	slices.SortStableFunc(locs, func(a, b *model.Location) int {
		if c := strings.Compare(a.Match.Path, b.Match.Path); c != 0 {
			return c
		}
		ae, be := a.Match.Type == model.Exact, b.Match.Type == model.Exact
		switch {
		case ae && !be:
			return -1
		case be && !ae:
			return 1
		}
		return strings.Compare(string(a.Match.Type), string(b.Match.Type))
	})
}

// finishModel adds the Gateway servers once the other kinds' servers have
// their server-level policies, which are not theirs.
func (b *gatewayProcessor) finishModel() {
	b.addProxyCAs()
	if len(b.servers) == 0 && len(b.ports) == 0 {
		return
	}
	b.model.Servers = append(b.model.Servers, b.servers...)
	b.model.HTTPListeners = append(b.model.HTTPListeners, b.listeners...)
	slices.SortStableFunc(b.model.Servers, func(x, y *model.Server) int {
		return cmp.Or(strings.Compare(x.Host, y.Host), strings.Compare(x.Scope, y.Scope))
	})
	slices.SortFunc(b.model.HTTPListeners, func(x, y *model.HTTPListener) int { return strings.Compare(x.Name, y.Name) })
}

func gatewayObject(kind string, o metav1.Object) model.ObjectRef {
	return model.ObjectRef{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName(), UID: string(o.GetUID())}
}

// directPortTaken says what else listens on port, where a Gateway
// listener's port is nginx's own (the files source): the controller's
// HTTP and HTTPS ports, a GlobalConfiguration listener's, a stream
// server's (a TransportServer, tcp- or udp-services). "" when nothing.
func (b *gatewayProcessor) directPortTaken(port int, udp bool) string {
	if !udp && (port == b.opts.HTTPPort || port == b.opts.HTTPSPort) {
		return "the controller's own HTTP or HTTPS port, which Ingresses use"
	}
	for _, l := range b.gc.http {
		if !udp && l.Port == port {
			return "GlobalConfiguration listener " + l.Name + "'s"
		}
	}
	for _, l := range b.gc.stream {
		if l.port == port && (l.proto == model.StreamUDP) == udp {
			return "GlobalConfiguration listener " + l.name + "'s"
		}
	}
	proto := model.StreamTCP
	if udp {
		proto = model.StreamUDP
	}
	if o, ok := b.streamPorts[streamPort{port, proto}]; ok {
		return "a stream listener's of " + o.String()
	}
	return ""
}

// listenerNotServed reports that listener l of g (or of one of its
// ListenerSets) is not served: a Problem naming the Gateway or the
// ListenerSet, and the listener's Programmed condition False with reason
// (the Resolution's status is what the status writer writes).
func (b *gatewayProcessor) listenerNotServed(g *gateway.Gateway, l *gateway.Listener, reason gwv1.ListenerConditionReason, format string, args ...any) {
	msg := "listener " + fmt.Sprintf(format, args...)
	owner, gen, listeners, statuses := g.Ref, g.Generation, g.Listeners, g.Status.Listeners
	var entries []gwv1.ListenerEntryStatus
	if s := l.Set; s != nil {
		owner, gen, listeners, statuses, entries = s.Ref, s.Generation, s.Listeners, nil, s.Status.Listeners
	}
	b.problems = append(b.problems, model.Problem{Object: owner, Reason: string(reason), Message: msg,
		Condition: &model.StatusCondition{Type: string(gwv1.ListenerConditionProgrammed), Status: "False", Reason: string(reason), Listener: string(l.Name)}})
	cond := metav1.Condition{Type: string(gwv1.ListenerConditionProgrammed),
		Status: metav1.ConditionFalse, Reason: string(reason), Message: model.Truncate(msg), ObservedGeneration: gen}
	for i, gl := range listeners {
		switch {
		case gl != l:
		case i < len(statuses):
			meta.SetStatusCondition(&statuses[i].Conditions, cond)
		case i < len(entries):
			meta.SetStatusCondition(&entries[i].Conditions, cond)
		}
	}
}
