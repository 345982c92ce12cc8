package admission

import (
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/causeway/causeway/internal/frontend/configmap"
	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// This file reads what a review needs of each object through the
// front-ends, never from raw annotations: an Ingress's translation (its
// regex mode, canary rule and server aliases, as the build translates
// them) and the references each front-end lists (ingress.References,
// nic.VirtualServerReferences ..., configmap.References).

// links are what one Ingress shares with others, read from its
// translation and its references.
type links struct {
	// regex: its paths are regular expressions (use-regex, or a
	// rewrite-target that rewrites), which turns its hosts to regex mode.
	regex bool
	// canary: it splits the paths of a main Ingress.
	canary bool
	// aliases are its server aliases, lower-cased.
	aliases []string
	// refs are the objects it names; services the "namespace/name" of
	// the Services among them.
	refs     []model.Reference
	services []string
}

// translate reads the links of an Ingress. One the build rejects shares
// nothing but the objects it names.
func translate(ing *networkingv1.Ingress, prefix string, defaults *model.Defaults) *links {
	l := &links{refs: ingress.References(ing, prefix)}
	for _, r := range l.refs {
		if r.Kind == model.KindService {
			l.services = append(l.services, r.ObjectName.String())
		}
	}
	t, _, err := ingress.Translate(ing, prefix, defaults)
	if err != nil {
		return l
	}
	l.regex = t.Annotations.UseRegex
	l.canary = t.Annotations.Canary != nil
	for _, a := range t.Annotations.Server.Aliases {
		l.aliases = append(l.aliases, strings.ToLower(a))
	}
	return l
}

// translateAll reads the links of the Ingresses of ours, reusing those of
// prev for the same objects under the same ConfigMap: the kube source
// hands out the same object until it changes.
func (x *index) translateAll(prev *index) {
	reuse := prev != nil && prev.configMap == x.configMap && prev.opts.AnnotationsPrefix == x.opts.AnnotationsPrefix
	x.links = make(map[*networkingv1.Ingress]*links, len(x.all))
	for _, ing := range x.all {
		var l *links
		if reuse {
			l = prev.links[ing]
		}
		if l == nil {
			l = translate(ing, x.opts.AnnotationsPrefix, x.defaults)
		}
		x.links[ing] = l
	}
}

// linksOf returns the links of an Ingress: indexed, or read now for the
// candidate of a review (never stored: reviews share the index).
func (x *index) linksOf(ing *networkingv1.Ingress) *links {
	if l := x.links[ing]; l != nil {
		return l
	}
	return translate(ing, x.opts.AnnotationsPrefix, x.defaults)
}

// readConfig reads the defaults the build translates Ingresses with: those
// of the controller's ConfigMap, or the built-in ones when the ConfigMap
// is excluded.
func (x *index) readConfig() {
	x.configMap = x.maps[x.opts.ConfigMap]
	cm := x.configMap
	if cm != nil {
		if _, excluded := x.opts.Excluded[model.ObjectRef{Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name}.Key()]; excluded {
			cm = nil
		}
	}
	cfg, _ := configmap.Parse(cm)
	x.defaults = &cfg.Defaults
}

// named collects the "namespace/name" of the objects that a review's
// objects name, by kind.
type named struct{ services, secrets, maps map[string]bool }

func newNamed() *named {
	return &named{services: map[string]bool{}, secrets: map[string]bool{}, maps: map[string]bool{}}
}

// add records refs. The Policies among them join snap, with what they
// name; the VirtualServerRoutes are the delegations' (see delegations).
func (x *index) add(snap *source.Snapshot, n *named, refs []model.Reference) {
	for _, r := range refs {
		key := r.ObjectName.String()
		switch r.Kind {
		case model.KindService:
			n.services[key] = true
		case model.KindSecret:
			n.secrets[key] = true
		case model.KindConfigMap:
			n.maps[key] = true
		case model.KindPolicy:
			if p := x.policies[key]; p != nil && !slices.Contains(snap.Policies, p) {
				snap.Policies = append(snap.Policies, p)
				x.add(snap, n, nic.PolicyReferences(p))
			}
		}
	}
}

// addReferenced adds to snap the Services (with their EndpointSlices),
// Secrets and ConfigMaps n names, and those the controller's ConfigMap
// and flags name.
func (x *index) addReferenced(snap *source.Snapshot, n *named) {
	n.maps[x.opts.ConfigMap] = true
	if cm := x.maps[x.opts.ConfigMap]; cm != nil {
		x.add(snap, n, configmap.References(cm.Data))
	}
	if d := x.opts.DefaultBackendService; d != "" {
		name, _, _ := strings.Cut(d, ":")
		n.services[name] = true
	}
	if d := x.opts.DefaultSSLCertificate; d != "" {
		n.secrets[d] = true
	}
	for k := range n.services {
		if s := x.services[k]; s != nil {
			snap.Services = append(snap.Services, s)
			snap.EndpointSlices = append(snap.EndpointSlices, x.slices[k]...)
		}
	}
	for k := range n.secrets {
		if s := x.secrets[k]; s != nil {
			snap.Secrets = append(snap.Secrets, s)
		}
	}
	for k := range n.maps {
		if c := x.maps[k]; c != nil {
			snap.ConfigMaps = append(snap.ConfigMaps, c)
		}
	}
}
