package build

import (
	"reflect"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
)

// NGINX Ingress Controller's mergeable Ingresses
// (nginx.org/mergeable-ingress-type): a master holds a host, its TLS and
// its host-level settings; minions add paths to it. Causeway already
// merges every Ingress of a host, so the master and its minions become
// one host through the usual claims (oldest first, a path to the oldest
// that asks for it); what is added here are NIC's rules: one master per
// host, no paths on it, no host of their own on the minions, and what a
// minion inherits from its master.

// mergeableHost is the host of a master or minion: NIC takes exactly one
// rule with a host.
func mergeableHost(ing *networkingv1.Ingress) (string, bool) {
	if len(ing.Spec.Rules) != 1 || ing.Spec.Rules[0].Host == "" {
		return "", false
	}
	return ing.Spec.Rules[0].Host, true
}

// findMasters records the oldest valid master of each host, from
// Ingresses ranked oldest first.
func (b *ingressProcessor) findMasters(ranked []*networkingv1.Ingress) {
	for _, ing := range ranked {
		if _, excluded := b.opts.Excluded[ingress.Ref(ing).Key()]; excluded {
			continue
		}
		kind, err := annotations.MergeableType(ing.Annotations)
		host, ok := mergeableHost(ing)
		if err != nil || kind != annotations.MergeableMaster || !ok {
			continue
		}
		if b.masters == nil {
			b.masters = map[string]*networkingv1.Ingress{}
		}
		if _, taken := b.masters[host]; !taken {
			b.masters[host] = ing
		}
	}
}

// mergeable applies NIC's rules to a master or a minion: it returns the
// Ingress to translate (a master without its paths; a minion without its
// TLS, with the annotations it inherits), its type, and false when it is
// not served (with a Problem).
func (b *ingressProcessor) mergeable(ing *networkingv1.Ingress, ref model.ObjectRef) (*networkingv1.Ingress, string, bool) {
	kind, err := annotations.MergeableType(ing.Annotations)
	if err != nil {
		b.problem(ref, model.ReasonInvalidAnnotation, true, "%v; the Ingress is not served, as in NGINX Ingress Controller", err)
		return nil, "", false
	}
	if kind == "" {
		return ing, "", true
	}
	host, ok := mergeableHost(ing)
	if !ok {
		b.problem(ref, model.ReasonInvalid, true,
			"a %s Ingress (nginx.org/mergeable-ingress-type) must have exactly one rule, with a host, as in NGINX Ingress Controller", kind)
		return nil, "", false
	}
	master := b.masters[host]
	cp := *ing
	switch {
	case kind == annotations.MergeableMaster && master != ing:
		b.problem(ref, model.ReasonCollision, true, "host %q already has the master Ingress %s/%s, %s; this master is not served",
			host, master.Namespace, master.Name, b.whyFirst(ingress.Ref(master), ref))
		return nil, "", false
	case kind == annotations.MergeableMaster:
		if r := ing.Spec.Rules[0]; r.HTTP != nil && len(r.HTTP.Paths) > 0 {
			b.problem(ref, model.ReasonUnsupported, false,
				"a master Ingress (nginx.org/mergeable-ingress-type) holds no paths, as in NGINX Ingress Controller: its %d paths are not served; "+
					"put them on a minion", len(r.HTTP.Paths))
		}
		cp.Spec.Rules = []networkingv1.IngressRule{{Host: host}}
	case master == nil:
		b.problem(ref, model.ReasonInvalid, true,
			"a minion Ingress (nginx.org/mergeable-ingress-type) needs a master Ingress for host %q, and there is none; it is not served", host)
		return nil, "", false
	default:
		if len(ing.Spec.TLS) > 0 {
			b.problem(ref, model.ReasonUnsupported, false,
				"spec.tls of a minion Ingress is ignored, as in NGINX Ingress Controller: the master %s/%s holds the host's TLS",
				master.Namespace, master.Name)
			cp.Spec.TLS = nil
		}
		cp.Annotations = annotations.Inherit(ing.Annotations, master.Annotations)
	}
	return &cp, kind, true
}

// minionServerSettings drops the host-level annotations of a minion: its
// master sets them for the host.
func (b *builder) minionServerSettings(t *ingress.Translation) {
	s := &t.Annotations.Server
	if reflect.DeepEqual(*s, annotations.ServerSettings{}) {
		return
	}
	if s.ClientTLS != nil {
		// Client certificates protect the minion's paths: not asked for
		// by the host, they would be served without them.
		t.Annotations.FailClosed = append(t.Annotations.FailClosed, b.opts.AnnotationsPrefix+"/auth-tls-secret")
		b.problem(t.Ref, model.ReasonInvalidAnnotation, false,
			"annotations %s/auth-tls-* are host-level and this Ingress is a minion: every path of it answers 503 rather than being served "+
				"without client certificates; set them on the master", b.opts.AnnotationsPrefix)
	}
	b.problem(t.Ref, model.ReasonUnsupportedAnnotation, false,
		"annotations %v are host-level and this Ingress is a minion (nginx.org/mergeable-ingress-type): its master sets them for the host; ignored",
		s.Keys)
	*s = annotations.ServerSettings{}
}
