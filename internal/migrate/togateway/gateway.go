package togateway

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// tlsHost is the certificate of a host: the Secret of the oldest Ingress
// naming it in spec.tls.
type tlsHost struct {
	namespace, secret string
}

// tls reads an Ingress's spec.tls.
func (c *converter) tls(w *ingressWork) {
	for i, t := range w.ing.Spec.TLS {
		field := fmt.Sprintf("spec.tls[%d]", i)
		if t.SecretName == "" || len(t.Hosts) == 0 {
			w.find(ruleTLSNoSecret, field, t.SecretName, "")
			continue
		}
		for _, h := range t.Hosts {
			if p := c.passthrough[h]; p != nil {
				w.find(ruleSSLPassthrough, field, t.SecretName, "host "+h+" is passed through (TLSRoute "+p.Namespace+"/"+p.Name+"): the certificate is the backend's")
				continue
			}
			want := tlsHost{w.ing.Namespace, t.SecretName}
			if got, ok := c.secrets[h]; ok && got != want {
				w.find(ruleTLSShadowed, field, t.SecretName, fmt.Sprintf("host %s uses %s/%s", h, got.namespace, got.secret))
				continue
			}
			c.secrets[h] = want
			w.find(ruleTLS, field, t.SecretName, "listener "+httpsListener(h))
		}
	}
}

// tlsListener is the HTTPS listener serving host: its own, else that of
// the wildcard covering it; "" for none.
func (c *converter) tlsListener(host string) string {
	if host == "" {
		return ""
	}
	if _, ok := c.secrets[host]; ok {
		return httpsListener(host)
	}
	if _, parent, ok := strings.Cut(host, "."); ok && !strings.HasPrefix(host, "*.") {
		if _, ok := c.secrets["*."+parent]; ok {
			return httpsListener("*." + parent)
		}
	}
	return ""
}

// finish writes the Gateway, the routes (with their ssl-redirect
// twins) and the ReferenceGrants, sorted, and reports what no rule did.
func (c *converter) finish() {
	keys := make([]routeKey, 0, len(c.routes))
	for k := range c.routes {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b routeKey) int {
		return cmp.Or(cmp.Compare(a.namespace, b.namespace), cmp.Compare(c.routes[a].name(), c.routes[b].name()))
	})
	for _, k := range keys {
		rt := c.routes[k]
		switch {
		case rt.grpc != nil && len(rt.grpc.Spec.Rules) > 0:
			c.out.GRPCRoutes = append(c.out.GRPCRoutes, rt.grpc)
			rt.w.rep.Routes = append(rt.w.rep.Routes, "GRPCRoute/"+rt.grpc.Name)
		case rt.http != nil && len(rt.http.Spec.Rules) > 0:
			c.out.HTTPRoutes = append(c.out.HTTPRoutes, rt.http)
			rt.w.rep.Routes = append(rt.w.rep.Routes, "HTTPRoute/"+rt.http.Name)
			if rt.redirect {
				twin := c.redirectTwin(rt)
				c.out.HTTPRoutes = append(c.out.HTTPRoutes, twin)
				rt.w.rep.Routes = append(rt.w.rep.Routes, "HTTPRoute/"+twin.Name)
			}
		}
	}
	for _, w := range c.works {
		w.rest()
	}
	c.gateway()
}

func (rt *route) name() string {
	if rt.grpc != nil {
		return rt.grpc.Name
	}
	return rt.http.Name
}

// redirectTwin is the route answering a route's matches on the HTTP
// listener with a redirect to HTTPS.
func (c *converter) redirectTwin(rt *route) *gwv1.HTTPRoute {
	twin := &gwv1.HTTPRoute{TypeMeta: rt.http.TypeMeta, ObjectMeta: metav1.ObjectMeta{Namespace: rt.http.Namespace, Name: rt.http.Name + "-redirect"},
		Spec: gwv1.HTTPRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{c.parentRef(rt.http.Namespace, httpListener)}},
			Hostnames:       slices.Clone(rt.http.Spec.Hostnames),
		}}
	redirect := gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestRedirect,
		RequestRedirect: &gwv1.HTTPRequestRedirectFilter{Scheme: ptr("https"), StatusCode: ptr(c.cfg.HTTPRedirectCode)}}
	for _, r := range rt.http.Spec.Rules {
		var matches []gwv1.HTTPRouteMatch
		for _, m := range r.Matches {
			matches = append(matches, *m.DeepCopy())
		}
		twin.Spec.Rules = append(twin.Spec.Rules, gwv1.HTTPRouteRule{Matches: matches, Filters: []gwv1.HTTPRouteFilter{*redirect.DeepCopy()}})
	}
	return twin
}

// maxListeners is how many listeners a Gateway may have.
const maxListeners = 64

// gateway writes the Gateways and the ReferenceGrants their certificates
// need: one Gateway, or more when the hosts' listeners are more than one
// may hold (each then holds the http listener and up to 63 hosts'), or
// when there are both HTTPS and TLS passthrough listeners (a Gateway of
// their own for the latter), and points the routes' parentRefs at the
// Gateway of their host.
func (c *converter) gateway() {
	ns := c.opts.GatewayNamespace
	all := &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: ptr(gwv1.NamespacesFromAll)}}
	var hostListeners, passListeners []gwv1.Listener
	grants := map[string][]string{} // namespace -> Secrets
	for _, h := range sortedKeys(c.secrets) {
		s := c.secrets[h]
		ref := gwv1.SecretObjectReference{Name: gwv1.ObjectName(s.secret)}
		if s.namespace != ns {
			ref.Namespace = ptr(gwv1.Namespace(s.namespace))
			grants[s.namespace] = append(grants[s.namespace], s.secret)
		}
		hostListeners = append(hostListeners, gwv1.Listener{
			Name: gwv1.SectionName(httpsListener(h)), Hostname: ptr(gwv1.Hostname(h)), Port: 443, Protocol: gwv1.HTTPSProtocolType,
			TLS:           &gwv1.ListenerTLSConfig{Mode: ptr(gwv1.TLSModeTerminate), CertificateRefs: []gwv1.SecretObjectReference{ref}},
			AllowedRoutes: all.DeepCopy(),
		})
	}
	for _, h := range sortedKeys(c.passthrough) {
		passListeners = append(passListeners, gwv1.Listener{
			Name: gwv1.SectionName(tlsListenerName(h)), Hostname: ptr(gwv1.Hostname(h)), Port: 443, Protocol: gwv1.TLSProtocolType,
			TLS:           &gwv1.ListenerTLSConfig{Mode: ptr(gwv1.TLSModePassthrough)},
			AllowedRoutes: all.DeepCopy(),
		})
		c.out.TLSRoutes = append(c.out.TLSRoutes, c.passthrough[h])
	}
	slices.SortFunc(c.out.TLSRoutes, func(a, b *gwv1.TLSRoute) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})

	newGateway := func() *gwv1.Gateway {
		name := c.opts.GatewayName
		if n := len(c.out.Gateways); n > 0 {
			name = boundedName(fmt.Sprintf("%s-%d", name, n+1), "")
		}
		gw := &gwv1.Gateway{
			TypeMeta:   metav1.TypeMeta{APIVersion: gwv1.GroupVersion.String(), Kind: "Gateway"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: gwv1.GatewaySpec{
				GatewayClassName: gwv1.ObjectName(c.opts.GatewayClass),
				Listeners:        []gwv1.Listener{{Name: httpListener, Port: 80, Protocol: gwv1.HTTPProtocolType, AllowedRoutes: all.DeepCopy()}},
			},
		}
		c.out.Gateways = append(c.out.Gateways, gw)
		return gw
	}
	gw := newGateway()
	gatewayOf := map[string]string{} // host listener -> Gateway name
	add := func(ls []gwv1.Listener) {
		for _, l := range ls {
			if len(gw.Spec.Listeners) == maxListeners {
				gw = newGateway()
			}
			gw.Spec.Listeners = append(gw.Spec.Listeners, l)
			gatewayOf[string(l.Name)] = gw.Name
		}
	}
	add(hostListeners)
	if len(hostListeners) > 0 && len(passListeners) > 0 {
		// Causeway serves one protocol per port of a Gateway: HTTPS
		// and TLS passthrough on 443 need a Gateway each.
		gw = newGateway()
	}
	add(passListeners)
	if n := len(c.out.Gateways); n > 1 {
		var why []string
		if len(hostListeners) >= maxListeners || len(passListeners) >= maxListeners {
			why = append(why, fmt.Sprintf("a Gateway holds at most %d listeners", maxListeners))
		}
		if len(hostListeners) > 0 && len(passListeners) > 0 {
			why = append(why, "Causeway serves HTTPS and TLS passthrough on the port 443 of different Gateways")
		}
		c.notes = append(c.notes, fmt.Sprintf("%d Gateways are written (%s): each host's routes attach to the Gateway of its HTTPS or TLS listener, "+
			"whose address (its own, in Causeway) the host's DNS must name", n, strings.Join(why, "; ")))
	}
	c.pointParents(gatewayOf)

	for _, gns := range sortedKeys(grants) {
		secrets := grants[gns]
		slices.Sort(secrets)
		g := &gwv1.ReferenceGrant{
			TypeMeta:   metav1.TypeMeta{APIVersion: gwv1.GroupVersion.String(), Kind: "ReferenceGrant"},
			ObjectMeta: metav1.ObjectMeta{Namespace: gns, Name: boundedName("gateway-"+ns+"-"+c.opts.GatewayName, "")},
			Spec: gwv1.ReferenceGrantSpec{
				From: []gwv1.ReferenceGrantFrom{{Group: gwv1.GroupName, Kind: "Gateway", Namespace: gwv1.Namespace(ns)}},
			},
		}
		for _, s := range slices.Compact(secrets) {
			g.Spec.To = append(g.Spec.To, gwv1.ReferenceGrantTo{Group: "", Kind: "Secret", Name: ptr(gwv1.ObjectName(s))})
		}
		c.out.ReferenceGrants = append(c.out.ReferenceGrants, g)
	}
}

// pointParents names, in each route's parentRefs, the Gateway holding the
// listener: a host listener's own, and for the http listener that of the
// route's host's HTTPS (or TLS) listener, else the first.
func (c *converter) pointParents(gatewayOf map[string]string) {
	if len(c.out.Gateways) == 1 {
		return
	}
	point := func(refs []gwv1.ParentReference, hostnames []gwv1.Hostname) {
		for i := range refs {
			l := string(*refs[i].SectionName)
			if l == httpListener && len(hostnames) > 0 {
				h := string(hostnames[0])
				l = c.tlsListener(h)
				if c.passthrough[h] != nil {
					l = tlsListenerName(h)
				}
			}
			if name, ok := gatewayOf[l]; ok {
				refs[i].Name = gwv1.ObjectName(name)
			}
		}
	}
	for _, r := range c.out.HTTPRoutes {
		point(r.Spec.ParentRefs, r.Spec.Hostnames)
	}
	for _, r := range c.out.GRPCRoutes {
		point(r.Spec.ParentRefs, r.Spec.Hostnames)
	}
	for _, r := range c.out.TLSRoutes {
		point(r.Spec.ParentRefs, r.Spec.Hostnames)
	}
}

// maxName is the longest object name (a DNS subdomain).
const maxName = 253

// routeName is "<ingress>-<suffix>", unique in the namespace: a name two
// Ingresses would share ("a" with host "b-c.example" and "a-b" with
// "c.example") gets a hash of the pair. The name and its "-redirect"
// twin's are taken.
func (c *converter) routeName(namespace, ingress, suffix string) string {
	seed := ingress + "\x00" + suffix
	name := boundedName(ingress+"-"+suffix, seed)
	if c.names[namespace+"/"+name] || c.names[namespace+"/"+name+"-redirect"] || strings.HasSuffix(name, "-redirect") && c.names[namespace+"/"+strings.TrimSuffix(name, "-redirect")] {
		name = boundedName(ingress+"-"+suffix+"-"+hash(seed), seed)
	}
	c.names[namespace+"/"+name], c.names[namespace+"/"+name+"-redirect"] = true, true
	return name
}

// boundedName is name, cut with a hash of seed when longer than an
// object name may be (leaving room for "-redirect").
func boundedName(name, seed string) string {
	limit := maxName - len("-redirect")
	if len(name) <= limit {
		return name
	}
	return strings.TrimRight(name[:limit-9], "-.") + "-" + hash(cmp.Or(seed, name))
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}
