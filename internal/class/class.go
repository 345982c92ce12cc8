// Package class decides which objects this controller serves, from the
// class each names. The classes of ours are the IngressClasses whose
// spec.controller is ours, plus a name given by flag (Filter); how an
// object names its class, and what one naming none is, belongs to the
// front-end of its kind, which declares a Kind for it (ingress.Class,
// nic.VirtualServerClass, ...). A new kind plugs in with a Kind of its own.
package class

import (
	networkingv1 "k8s.io/api/networking/v1"
)

// DefaultAnnotation marks the IngressClass used by Ingresses that name
// none.
const DefaultAnnotation = "ingressclass.kubernetes.io/is-default-class"

// Options says which classes are ours.
type Options struct {
	// ControllerName is matched against IngressClass spec.controller.
	ControllerName string
	// IngressClass is a class name that is ours even without an
	// IngressClass object.
	IngressClass string
	// WatchWithoutClass makes class-less Ingresses ours even when no default
	// IngressClass of ours exists.
	WatchWithoutClass bool
}

// Filter knows, from the IngressClasses of a snapshot, which class names
// are ours.
type Filter struct {
	opts Options
	// ours holds the names of classes we serve.
	ours map[string]bool
	// defaultOurs is true when one of our classes is marked default.
	defaultOurs bool
}

// NewFilter returns the Filter of opts over the IngressClasses of a
// snapshot.
func NewFilter(opts Options, classes []*networkingv1.IngressClass) *Filter {
	f := &Filter{opts: opts, ours: map[string]bool{}}
	if opts.IngressClass != "" {
		f.ours[opts.IngressClass] = true
	}
	for _, c := range classes {
		if c.Spec.Controller != opts.ControllerName {
			continue
		}
		f.ours[c.Name] = true
		if c.Annotations[DefaultAnnotation] == "true" {
			f.defaultOurs = true
		}
	}
	return f
}

// IsOursName reports whether a class name is one of ours.
func (f *Filter) IsOursName(class string) bool { return f.ours[class] }

// Unnamed says whose an object that names no class is.
type Unnamed int

const (
	// Everyone's: every controller serves it (NGINX Ingress Controller's
	// resources).
	Everyone Unnamed = iota
	// ByDefault: it is ours only through a default IngressClass of ours,
	// or Options.WatchWithoutClass (Ingresses).
	ByDefault
)

// Kind is how objects of one kind name their class. Each front-end
// declares one per kind it translates.
type Kind[T any] struct {
	// Of returns the class an object names, "" for none.
	Of func(T) string
	// Unnamed decides an object naming none.
	Unnamed Unnamed
}

// IsOurs reports whether this controller serves obj: the class it names
// is one of ours, or it names none and Unnamed makes it ours.
func (k Kind[T]) IsOurs(f *Filter, obj T) bool {
	if c := k.Of(obj); c != "" {
		return f.ours[c]
	}
	return k.Unnamed == Everyone || f.defaultOurs || f.opts.WatchWithoutClass
}
