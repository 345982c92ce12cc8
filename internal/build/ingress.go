package build

import (
	"slices"
	"sort"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// ingressProcessor adds the Ingresses of our classes: their paths claim
// host and path (a canary's split those won, once every main Ingress has
// claimed), their rules hosts, their spec.tls a host's certificate.
type ingressProcessor struct {
	*builder
	// defaults holds each host's default backend location, first claim wins.
	defaults map[string]*model.Location
	// hostSettings are the server-level annotations won per host.
	hostSettings map[string]*hostSettings
	// written is each location's path as written in its Ingress, for
	// hosts that turn into regex mode.
	written map[*model.Location]string
	// claims are the Ingress paths claimed, each with its main location,
	// which canaries split; the claim's owner is the location's Source
	// (every location of an Ingress names it). One map for both: at
	// 10,000 Ingresses a map of owners beside one of locations was a
	// tenth of the build's peak.
	claims map[claimKey]*model.Location
	// canaries are the canary Ingresses, oldest first, applied once
	// every main Ingress has claimed its paths.
	canaries []*ingress.Translation
	// masters are the master Ingresses (nginx.org/mergeable-ingress-type)
	// served, by host: the oldest of each host.
	masters map[string]*networkingv1.Ingress
}

// ingressPaths counts the paths of ings, to size the maps they fill up
// front: grown one Ingress at a time, these maps were a tenth of a
// build's garbage at 10,000 Ingresses.
func ingressPaths(ings []*networkingv1.Ingress) int {
	paths := 0
	for _, ing := range ings {
		for _, r := range ing.Spec.Rules {
			if r.HTTP != nil {
				paths += len(r.HTTP.Paths)
			}
		}
	}
	return paths
}

func (b *ingressProcessor) objects(snap *source.Snapshot) []object {
	var ours []*networkingv1.Ingress
	for _, ing := range snap.Ingresses {
		if ingress.Class.IsOurs(b.classes, ing) {
			ours = append(ours, ing)
		}
	}
	sort.SliceStable(ours, func(i, j int) bool { return ranksFirst(ours[i], ours[j]) })
	paths := ingressPaths(ours)
	b.claims, b.written = make(map[claimKey]*model.Location, paths), make(map[*model.Location]string, paths)
	b.findMasters(ours)
	out := make([]object, 0, len(ours))
	for _, ing := range ours {
		out = append(out, object{meta: ing, add: func() { b.addIngress(ing) }})
	}
	return out
}

func (b *ingressProcessor) after(*source.Snapshot) {
	b.addCanaries()
	// No path is claimed or split from here: the claims go before the
	// model is finished, the build's peak.
	b.claims = nil
}

func (b *ingressProcessor) addIngress(ing *networkingv1.Ingress) {
	ref := ingress.Ref(ing)
	var mergeable string
	t, ok := intake(b.builder, ref, ing, func() (*ingress.Translation, []model.Problem, error) {
		if b.opts.DisableCatchAll && ing.Spec.DefaultBackend != nil {
			b.problem(ref, model.ReasonUnsupported, true, "spec.defaultBackend makes the Ingress a catch-all, which --disable-catch-all refuses: "+
				"the Ingress is not served; remove spec.defaultBackend to serve its rules")
			return nil, nil, errReported
		}
		var ok bool
		if ing, mergeable, ok = b.mergeable(ing, ref); !ok {
			return nil, nil, errReported
		}
		return ingress.Translate(ing, b.opts.AnnotationsPrefix, &b.model.Config.Defaults)
	})
	if !ok {
		return
	}
	if mergeable == annotations.MergeableMinion {
		b.minionServerSettings(t)
	}
	if t.Annotations.Canary != nil {
		b.canaries = append(b.canaries, t)
		return
	}
	b.snippets(t)
	b.unroutedServices(t)
	b.addTranslation(t)
	b.addTLS(ing, ref)
}

// addTranslation claims the paths of a translated Ingress.
func (b *ingressProcessor) addTranslation(t *ingress.Translation) {
	ref := t.Ref
	// A security annotation Causeway cannot enforce closes every path the
	// Ingress contributes: it keeps its claims, so no other Ingress serves
	// them unprotected, and answers 503.
	policy, fallback, refused := b.resolvePolicy(t)
	// So does a security key of the ConfigMap that cannot be used (the
	// Problem is on the ConfigMap).
	closed := len(t.Annotations.FailClosed) > 0 || refused || len(b.model.Config.FailClosed) > 0
	reported := false
	locate := func(ib *networkingv1.IngressBackend, m model.Match, host string) *model.Location {
		switch {
		case closed:
			return &model.Location{Match: m, Source: ref, Action: model.ReturnStatus(503)}
		case t.Annotations.Redirect != nil:
			return &model.Location{Match: m, Source: ref, Action: model.Action{Redirect: t.Annotations.Redirect}, Policy: policy}
		}
		pol := b.globalAuth(t, policy, m)
		if host == "" && b.catchAllSelfAuth(t, pol, &reported) {
			return &model.Location{Match: m, Source: ref, Action: model.ReturnStatus(503)}
		}
		loc := b.location(t, ib, m)
		if loc.Policy = servicePolicy(t, ib, pol); loc.Policy != policy {
			loc.Policy = b.internPolicy(loc.Policy) // a location's own copy
		}
		if loc.Action.Proxy != nil {
			loc.Action.Proxy.Fallback = fallback
		}
		return loc
	}
	hosts := map[string]bool{}
	for _, r := range t.Rules {
		if r.Host != "" && b.hostTaken(ref, r.Host, false) {
			continue
		}
		if b.passthroughIngress(t, r.Host) {
			b.addIngressPassthrough(t, r)
		}
		b.ingressHost.claim(r.Host, ref)
		hosts[r.Host] = true
		if !r.HTTP {
			b.server(r.Host)
			continue
		}
		for _, p := range r.Paths {
			ck := claimKey{host: r.Host, path: p.Match.Path, typ: p.Match.Type}
			if c, taken := b.claims[ck]; taken {
				if owner := c.Source; owner != ref {
					b.lost(ref, owner, false, "host %q path %q (%s) is already served by %s", displayHost(r.Host), p.Match.Path, p.Match.Type, owner)
				}
				continue
			}
			srv := b.server(r.Host)
			loc := locate(p.Backend, p.Match, r.Host)
			b.written[loc] = p.Written
			b.claims[ck] = loc
			srv.Locations = append(srv.Locations, loc)
		}
	}
	if d := t.Default; d != nil {
		hosts[""] = true // the default backend also answers unknown hosts
		m := model.Match{Type: model.Prefix, Path: "/"}
		loc := locate(d, m, "-")
		for h := range hosts {
			if h == "" && selfAuth(loc.Policy) {
				// The catch-all server cannot ask the request's host.
				b.setDefault(h, locate(d, m, h), ref)
				continue
			}
			b.setDefault(h, loc, ref)
		}
	}
	for h := range hosts {
		srv := b.server(h)
		srv.Sources = append(srv.Sources, ref)
		closeSnippetLocations(srv, t.Annotations.Server.Closed)
		if h == "" && t.Annotations.Server.ClientTLS != nil {
			// Rules without a host: of the server settings only client
			// certificates apply to the catch-all server.
			b.offerServerSettings(h, ref, &annotations.ServerSettings{ClientTLS: t.Annotations.Server.ClientTLS})
		}
		if h == "" {
			b.catchAllTLS(ref, &t.Annotations.Server)
		}
		if h != "" {
			b.offerServerSettings(h, ref, &t.Annotations.Server)
		}
	}
}

// setDefault records an Ingress's defaultBackend as a host's fallback; the
// oldest Ingress keeps it.
func (b *ingressProcessor) setDefault(host string, loc *model.Location, ref model.ObjectRef) {
	if b.defaults == nil {
		b.defaults = map[string]*model.Location{}
	}
	if prev, ok := b.defaults[host]; ok {
		if prev.Source != ref && host == "" {
			b.lost(ref, prev.Source, false, "defaultBackend for unmatched hosts is already provided by %s", prev.Source)
		}
		return
	}
	b.defaults[host] = loc
}

// location resolves a backend reference into a Location.
func (b *builder) location(t *ingress.Translation, ib *networkingv1.IngressBackend, m model.Match) *model.Location {
	loc := &model.Location{Match: m, Source: t.Ref}
	be, err := b.idx.resolve(t.Namespace, ib.Service)
	if err != nil {
		b.problem(t.Ref, model.ReasonMissingService, false, "%v; requests for %q answer 503", err, m.Path)
		loc.Action = model.ReturnStatus(503)
		return loc
	}
	if t.Annotations.ServiceUpstream {
		what := "annotation " + b.opts.AnnotationsPrefix + "/service-upstream"
		if slices.Contains(t.Annotations.Defaulted, "service-upstream") {
			what = "the ConfigMap's service-upstream"
		}
		be = b.clusterIPBackend(t.Ref, be, what)
	}
	be = b.addBackend(be)
	b.ingressBalance(t, be)
	if l := t.Annotations.PeerLimits; l != nil {
		b.claimLimits(t.Ref, "annotations nginx.org/max-fails and fail-timeout", be, *l)
	}
	loc.Action = model.ProxyTo(be.Key)
	return loc
}

// addTLS claims TLS for the Ingress's hosts; the oldest Ingress's secret
// wins for a host. A missing or invalid secret leaves the host on the
// default certificate.
func (b *builder) addTLS(ing *networkingv1.Ingress, ref model.ObjectRef) {
	for _, t := range ing.Spec.TLS {
		hosts := t.Hosts
		if len(hosts) == 0 {
			hosts = []string{""} // no hosts: the certificate for unmatched hosts
		}
		secretKey := ""
		if t.SecretName != "" {
			secretKey = b.tlsSecret(ref, ing.Namespace, t.SecretName)
		}
		for _, h := range hosts {
			if _, vs := b.hostOwner[h]; vs {
				continue // reported with the host's rules
			}
			srv := b.server(h)
			if srv.TLS != nil {
				if owner := b.tlsOwner[h]; srv.TLS.Secret != secretKey {
					by := "an earlier spec.tls entry of this Ingress"
					if owner != ref {
						by = owner.String() + ", " + b.whyFirst(owner, ref)
					}
					b.problem(ref, model.ReasonCollision, false,
						"TLS for host %q is already configured by %s; secret %q is not used for it", displayHost(h), by, t.SecretName)
				}
				continue
			}
			srv.TLS = &model.ServerTLS{Secret: secretKey}
			b.tlsOwner[h] = ref
		}
	}
}
