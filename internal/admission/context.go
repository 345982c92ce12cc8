package admission

// The snapshots reviews build: the candidate and the objects it can
// interact with, found in the index, with what they all name.

import (
	"maps"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/source"
)

// context is the snapshot a review builds: cand, the Ingresses it can
// interact with (minus its own stored version), and the objects they all
// name.
func (x *index) context(cand *networkingv1.Ingress) *source.Snapshot {
	snap := &source.Snapshot{IngressClasses: x.snap.IngressClasses}
	seen := map[*networkingv1.Ingress]bool{}
	add := func(ing *networkingv1.Ingress) {
		if seen[ing] || (ing.Namespace == cand.Namespace && ing.Name == cand.Name) {
			return
		}
		seen[ing] = true
		snap.Ingresses = append(snap.Ingresses, ing)
	}
	// The first ring: what the candidate meets directly. Ingresses with
	// rules without a host (or a defaultBackend) meet every other: their
	// paths serve every host. Then the candidate's hosts (claims,
	// server-level annotations, regex mode, canaries), the names it adds
	// (a host of that name, an Ingress adding the same name), the Services
	// it sends to (their balancing is set once).
	var ring []*networkingv1.Ingress
	meet := func(l []*networkingv1.Ingress) {
		for _, ing := range l {
			if !seen[ing] {
				ring = append(ring, ing)
			}
			add(ing)
		}
	}
	meet(x.byHost[""])
	for h := range ownHosts(cand) {
		meet(x.byHost[h])
	}
	for n := range x.names(cand) {
		meet(x.byHost[n])
		meet(x.byName[n])
	}
	for _, s := range x.servicesOf(cand) {
		meet(x.byService[s])
	}
	// The paths of a rule without a host are copied into every host,
	// where they can collide with the host's own paths once the host is
	// in regex mode. When the host-less paths may themselves be regexes,
	// every host is in regex mode: such a candidate meets everyone (a full
	// build; real clusters have few such Ingresses).
	if hostless(cand) {
		everyone := x.mayBeRegex(cand)
		for _, ing := range x.byHost[""] {
			if hostless(ing) && x.mayBeRegex(ing) && (ing.Namespace != cand.Namespace || ing.Name != cand.Name) {
				everyone = true
			}
		}
		if everyone {
			meet(x.all)
		} else {
			for h := range x.regexHosts {
				meet(x.byHost[h])
			}
		}
	}
	// A canary inherits the cookie affinity of the main it splits, which
	// is the balancing of the main's Service, set by whichever Ingress
	// sending to it won a claim first: those Ingresses meet a canary too.
	if x.linksOf(cand).canary {
		for h := range ownHosts(cand) {
			for _, main := range x.byHost[h] {
				for _, s := range x.servicesOf(main) {
					meet(x.byService[s])
				}
			}
		}
	}
	// The second ring: whether an Ingress of the first ring wins its
	// claims and its server-level annotations (and so sets a balancing, or
	// adds a name) depends on the Ingresses of its own hosts; their
	// claims, in turn, depend on nothing further.
	for _, ing := range ring {
		for h := range ownHosts(ing) {
			for _, other := range x.byHost[h] {
				add(other)
			}
		}
	}
	snap.Ingresses = append(snap.Ingresses, cand)
	// The VirtualServers of every host an Ingress of the context names,
	// or adds as a www twin or an alias: a VirtualServer owns its host
	// against Ingresses, and its host is a host of its own. Their
	// Services are not needed: their Problems are not the candidate's.
	vsSeen := map[*nicv1.VirtualServer]bool{}
	for _, ing := range snap.Ingresses {
		hosts := ownHosts(ing)
		maps.Copy(hosts, x.names(ing))
		for h := range hosts {
			for _, v := range x.vsByHost[h] {
				if !vsSeen[v] {
					vsSeen[v] = true
					snap.VirtualServers = append(snap.VirtualServers, v)
				}
			}
			snap.TransportServers = addMissing(snap.TransportServers, x.ptByHost[h])
		}
	}

	n := newNamed()
	for _, ing := range snap.Ingresses {
		x.add(snap, n, x.linksOf(ing).refs)
	}
	x.addReferenced(snap, n)
	return snap
}

// virtualServerContext is the snapshot a VirtualServer's review builds.
// What decides a VirtualServer's Problems is itself, whether its host is
// already owned (the older VirtualServers and Ingresses of that host: an
// Ingress claims a host by its rules, on nothing but its own translation
// and the VirtualServers of the host), the Services its upstreams name,
// its TLS Secret and the ConfigMap (its http-redirect-code). A www twin or
// server alias of an Ingress that names the VirtualServer's host raises
// its Problem on the Ingress, so such Ingresses are not needed.
func (x *index) virtualServerContext(cand *nicv1.VirtualServer) *source.Snapshot {
	snap := &source.Snapshot{IngressClasses: x.snap.IngressClasses}
	host := cand.Spec.Host
	for _, v := range x.vsByHost[host] {
		if v.Namespace != cand.Namespace || v.Name != cand.Name {
			snap.VirtualServers = append(snap.VirtualServers, v)
		}
	}
	snap.VirtualServers = append(snap.VirtualServers, cand)
	if host != "" {
		// "" would be the Ingresses without a host, which a
		// VirtualServer never meets (and a VirtualServer without a host
		// is invalid).
		snap.Ingresses = slices.Clone(x.byHost[strings.ToLower(host)])
	}
	snap.TransportServers = slices.Clone(x.ptByHost[host])
	// What it names (Services, its TLS Secret, Policies with what they
	// name), and the VirtualServerRoutes it delegates to with theirs.
	n := newNamed()
	x.add(snap, n, nic.VirtualServerReferences(cand))
	for _, key := range x.delegations(cand) {
		vsr := x.vsrs[key]
		if vsr == nil || slices.Contains(snap.VirtualServerRoutes, vsr) {
			continue
		}
		snap.VirtualServerRoutes = append(snap.VirtualServerRoutes, vsr)
		// A VirtualServerRoute serves one route: the other VirtualServers
		// that name it, with what decides whether they own their hosts,
		// decide whether it is still free.
		for _, other := range x.delegators[key] {
			if other.Namespace == cand.Namespace && other.Name == cand.Name {
				continue
			}
			// (The candidate is in snap already, under its new spec.)
			snap.VirtualServers = addMissing(snap.VirtualServers, append([]*nicv1.VirtualServer{other}, x.vsByHost[other.Spec.Host]...))
			if other.Spec.Host != "" {
				snap.Ingresses = addMissing(snap.Ingresses, x.byHost[strings.ToLower(other.Spec.Host)])
			}
		}
		x.add(snap, n, nic.VirtualServerRouteReferences(vsr))
	}
	x.addReferenced(snap, n)
	return snap
}

// transportServerContext is the snapshot a TransportServer's review
// builds. What decides a TransportServer's Problems is itself, the
// GlobalConfiguration whose listeners it claims, the other TransportServers
// claiming the same listener (the oldest wins it), and the Services (with
// their EndpointSlices) its upstreams name.
func (x *index) transportServerContext(cand *nicv1.TransportServer) *source.Snapshot {
	snap := &source.Snapshot{IngressClasses: x.snap.IngressClasses}
	if x.globalConfiguration != nil {
		snap.GlobalConfigurations = []*nicv1.GlobalConfiguration{x.globalConfiguration}
	}
	for _, t := range x.tsByListener[cand.Spec.Listener.Name] {
		if t.Namespace != cand.Namespace || t.Name != cand.Name {
			snap.TransportServers = append(snap.TransportServers, t)
		}
	}
	snap.TransportServers = append(snap.TransportServers, cand)
	if nic.IsPassthroughListener(cand.Spec.Listener) && cand.Spec.Host != "" {
		// A passthrough host belongs to the oldest Ingress, VirtualServer
		// or passthrough TransportServer naming it.
		snap.Ingresses = slices.Clone(x.byHost[strings.ToLower(cand.Spec.Host)])
		snap.VirtualServers = slices.Clone(x.vsByHost[cand.Spec.Host])
	}
	n := newNamed()
	x.add(snap, n, nic.TransportServerReferences(cand))
	x.addReferenced(snap, n)
	return snap
}
