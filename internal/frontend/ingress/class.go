package ingress

import (
	networkingv1 "k8s.io/api/networking/v1"
)

// Annotations read from Kubernetes objects.
const (
	// LegacyClassAnnotation is the pre-IngressClass way to pick a controller.
	LegacyClassAnnotation = "kubernetes.io/ingress.class"
	// DefaultClassAnnotation marks the IngressClass used by Ingresses that
	// name none.
	DefaultClassAnnotation = "ingressclass.kubernetes.io/is-default-class"
)

// ClassOptions says which Ingresses are ours.
type ClassOptions struct {
	// ControllerName is matched against IngressClass spec.controller.
	ControllerName string
	// IngressClass is a class name that is ours even without an
	// IngressClass object.
	IngressClass string
	// WatchWithoutClass makes class-less Ingresses ours even when no default
	// IngressClass of ours exists.
	WatchWithoutClass bool
}

// ClassFilter decides ownership from the IngressClasses in a snapshot.
type ClassFilter struct {
	opts ClassOptions
	// ours holds the names of classes we serve.
	ours map[string]bool
	// defaultOurs is true when one of our classes is marked default.
	defaultOurs bool
}

func NewClassFilter(opts ClassOptions, classes []*networkingv1.IngressClass) *ClassFilter {
	f := &ClassFilter{opts: opts, ours: map[string]bool{}}
	if opts.IngressClass != "" {
		f.ours[opts.IngressClass] = true
	}
	for _, c := range classes {
		if c.Spec.Controller != opts.ControllerName {
			continue
		}
		f.ours[c.Name] = true
		if c.Annotations[DefaultClassAnnotation] == "true" {
			f.defaultOurs = true
		}
	}
	return f
}

// IsOurs reports whether an Ingress belongs to this controller. The class is
// spec.ingressClassName, else the legacy annotation; an Ingress naming
// neither is ours only through a default class of ours or
// WatchWithoutClass.
func (f *ClassFilter) IsOurs(ing *networkingv1.Ingress) bool {
	class := ""
	if ing.Spec.IngressClassName != nil {
		class = *ing.Spec.IngressClassName
	} else if a, ok := ing.Annotations[LegacyClassAnnotation]; ok {
		class = a
	}
	if class == "" {
		return f.defaultOurs || f.opts.WatchWithoutClass
	}
	return f.ours[class]
}

// IsOursName reports whether an IngressClass name is one of ours.
func (f *ClassFilter) IsOursName(class string) bool { return f.ours[class] }

// IsOurs is the stand-alone form used by sources and status writers.
func IsOurs(opts ClassOptions, classes []*networkingv1.IngressClass, ing *networkingv1.Ingress) bool {
	return NewClassFilter(opts, classes).IsOurs(ing)
}
