package gateway

import (
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// GrantFrom is the side of a cross-namespace reference that names:
// the referring object's group, kind and namespace.
type GrantFrom struct {
	Group     string // "" is the core group
	Kind      string
	Namespace string
}

// GrantTo is the referenced object: group, kind, namespace and name.
type GrantTo struct {
	Group     string // "" is the core group
	Kind      string
	Namespace string
	Name      string
}

// Granted reports whether a reference from one namespace to an object in
// another is allowed (referencegrant_types.go): some ReferenceGrant in the
// referenced object's namespace lists the referrer's group, kind and
// namespace in spec.from, and the referent's group, kind and (unless the
// entry names none) name in spec.to. Entries combine with OR. A reference
// within one namespace needs no grant.
func Granted(grants []*gwv1.ReferenceGrant, from GrantFrom, to GrantTo) bool {
	if from.Namespace == to.Namespace {
		return true
	}
	for _, g := range grants {
		if g == nil || g.Namespace != to.Namespace {
			continue
		}
		if grantsFrom(g, from) && grantsTo(g, to) {
			return true
		}
	}
	return false
}

func grantsFrom(g *gwv1.ReferenceGrant, from GrantFrom) bool {
	for _, f := range g.Spec.From {
		if string(f.Group) == from.Group && string(f.Kind) == from.Kind && string(f.Namespace) == from.Namespace {
			return true
		}
	}
	return false
}

func grantsTo(g *gwv1.ReferenceGrant, to GrantTo) bool {
	for _, t := range g.Spec.To {
		if string(t.Group) == to.Group && string(t.Kind) == to.Kind && (t.Name == nil || *t.Name == "" || string(*t.Name) == to.Name) {
			return true
		}
	}
	return false
}
