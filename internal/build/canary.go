package build

import (
	"reflect"

	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/model"
)

// A canary Ingress claims nothing: once every main Ingress has claimed its
// paths, each canary path finds the location of the same host, path and
// path type and splits it (ingress-nginx's mergeAlternativeBackends). The
// oldest canary of a location wins it, like any claim.

// ReasonCanary is the reason of the Problems of a canary Ingress whose
// path cannot be split: no main Ingress serves it, or the main answers
// without a backend.
const ReasonCanary = "CanaryNotApplied"

// addCanaries splits the main locations by the canary Ingresses, oldest
// first.
func (b *ingressProcessor) addCanaries() {
	for _, t := range b.canaries {
		b.addCanary(t)
	}
}

func (b *ingressProcessor) addCanary(t *ingress.Translation) {
	ref := t.Ref
	if t.Default != nil {
		b.problem(ref, ReasonCanary, false, "spec.defaultBackend of a canary Ingress is not supported; ignored")
	}
	if len(t.TLS) > 0 {
		b.problem(ref, model.ReasonUnsupported, false, "spec.tls of a canary Ingress is ignored: the main Ingress's TLS applies")
	}
	rule := *t.Annotations.Canary
	for _, r := range t.Rules {
		for _, p := range r.Paths {
			if b.splitLocation(t, r.Host, p, rule) {
				srv := b.server(r.Host)
				if !containsRef(srv.Sources, ref) {
					srv.Sources = append(srv.Sources, ref)
				}
			}
		}
	}
}

// splitLocation attaches the canary of path p to the main location of
// host and path, and reports whether it did.
func (b *ingressProcessor) splitLocation(t *ingress.Translation, host string, p ingress.Path, rule model.CanaryRule) bool {
	ref := t.Ref
	where := func() string {
		return "host " + quoteHost(host) + " path " + quotePath(p.Match.Path) + " (" + string(p.Match.Type) + ")"
	}
	loc := b.claims[claimKey{host: host, path: p.Match.Path, typ: p.Match.Type}]
	if loc == nil {
		// A main Ingress with use-regex claims its paths as written.
		loc = b.claims[claimKey{host: host, path: p.Written, typ: model.Regex}]
	}
	switch {
	case loc == nil:
		b.problem(ref, ReasonCanary, false, "%s: no main (non-canary) Ingress serves it, so this canary path does nothing", where())
		return false
	case loc.Action.Proxy == nil:
		b.problem(ref, ReasonCanary, false, "%s: the main Ingress %s answers it without proxying (a redirect or a fixed status), so this canary path does nothing",
			where(), loc.Source)
		return false
	case loc.Action.Proxy.Split != nil:
		if c := loc.Action.Proxy.Split; c.Source != ref {
			b.problem(ref, model.ReasonCollision, false, "%s already has the canary %s, %s; only one canary applies per path",
				where(), c.Source, b.whyFirst(c.Source, ref))
		}
		return false
	}
	be, err := b.idx.resolve(t.Namespace, p.Backend.Service)
	if err != nil {
		b.problem(ref, model.ReasonMissingService, false, "%v; the canary of %s does nothing", err, where())
		return false
	}
	be = b.addBackend(be)
	b.ingressBalance(t, be)
	if be.Key == loc.Action.Proxy.Backend {
		b.problem(ref, ReasonCanary, false, "%s: the canary routes to the main Ingress's own Service port %s, so there is nothing to split", where(), be.Key)
		return false
	}
	b.inheritAffinity(ref, loc.Action.Proxy.Backend, be)
	if pri := b.backends[loc.Action.Proxy.Backend]; pri != nil && pri.Keepalive != be.Keepalive {
		b.problem(ref, model.ReasonUnsupported, false,
			"%s: the Service ports %s and %s keep idle connections differently (a VirtualServer upstream's keepalive); "+
				"the split's connections are kept in the ConfigMap's pool (upstream-keepalive-connections)",
			where(), pri.Key, be.Key)
	}
	loc.Action.Proxy.Split = rule.Split(ref, loc.Action.Proxy.Backend, be.Key)
	return true
}

// inheritAffinity gives the canary's backend the main's cookie affinity,
// as ingress-nginx does by default (affinity-canary-behavior "sticky"):
// the balancer then keeps a client on the side its cookie names, before
// any rule. It replaces the canary Ingress's own balancing annotations,
// as in ingress-nginx, but not the Service's causeway.io/ ones nor those
// another Ingress set, which keep theirs with a Problem.
func (b *builder) inheritAffinity(ref model.ObjectRef, primary string, canary *model.Backend) {
	pri := b.backends[primary]
	if pri == nil || pri.Balance.Method != model.Sticky || canary.Balance.Method == model.Sticky && reflect.DeepEqual(canary.Balance.Sticky, pri.Balance.Sticky) {
		return
	}
	owner, owned := b.balanceOwner[canary.Key]
	svc := b.idx.service(canary.Namespace, canary.Service)
	if owned && owner != ref || svc != nil && hasOwnBalance(svc.Annotations) {
		by := "its Service's causeway.io/load-balance"
		if owned && owner != ref {
			by = "the balancing annotations of " + owner.String()
		}
		b.problem(ref, model.ReasonCollision, false, "the canary's Service port %s keeps %s: the main's cookie affinity is not inherited, so affinitized clients may change sides", canary.Key, by)
		return
	}
	b.balanceOwner[canary.Key] = ref
	canary.Balance = model.Balance{Method: model.Sticky, Sticky: pri.Balance.Sticky, Retries: canary.Balance.Retries}
}

func containsRef(refs []model.ObjectRef, ref model.ObjectRef) bool {
	for _, r := range refs {
		if r == ref {
			return true
		}
	}
	return false
}

func quoteHost(h string) string { return `"` + displayHost(h) + `"` }
func quotePath(p string) string { return `"` + p + `"` }
