// Package ingress is the Ingress front-end: it checks an Ingress and its
// ingress-nginx annotations and translates them into the model's terms.
// What crosses objects (claims on hosts and paths, Services, Secrets) is
// left to the builder.
package ingress

import (
	"fmt"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
)

// Translation is one Ingress in the model's terms.
type Translation struct {
	Ref       model.ObjectRef
	Namespace string
	Rules     []Rule
	// Default is spec.defaultBackend.
	Default *networkingv1.IngressBackend
	TLS     []networkingv1.IngressTLS
	// Annotations are the typed annotations.
	Annotations annotations.Result
}

// Rule is one spec.rules entry.
type Rule struct {
	// Host is "" for a rule that applies to every host.
	Host string
	// HTTP is false for a rule without an http section (it still names
	// the host).
	HTTP  bool
	Paths []Path
}

// Path is one path of a rule. Match.Type is Exact or Prefix, or Regex when
// the Ingress sets use-regex (or a rewrite-target that rewrites).
type Path struct {
	Match model.Match
	// Written is the path as written ("/" when empty), which a host in
	// regex mode uses as the regular expression.
	Written string
	Backend *networkingv1.IngressBackend
}

// Ref names an Ingress.
func Ref(ing *networkingv1.Ingress) model.ObjectRef {
	return model.ObjectRef{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name, UID: string(ing.UID)}
}

// Translate checks an Ingress and its annotations, which start from the
// ConfigMap's defaults (nil for none). An error rejects the whole Ingress:
// a half-applied spec would be harder to reason about than a rejected one.
// Annotation problems never reject it; they drop the setting.
func Translate(ing *networkingv1.Ingress, prefix string, defaults *model.Defaults) (*Translation, []model.Problem, error) {
	ref := Ref(ing)
	ann, problems := annotations.ParseIngress(ref, ing.Annotations, prefix, defaults)
	if err := check(ing, ann.UseRegex, ann.Canary != nil); err != nil {
		return nil, problems, err
	}
	t := &Translation{Ref: ref, Namespace: ing.Namespace, Default: ing.Spec.DefaultBackend, TLS: ing.Spec.TLS, Annotations: ann}
	for _, r := range ing.Spec.Rules {
		rule := Rule{Host: r.Host, HTTP: r.HTTP != nil}
		if r.HTTP != nil {
			for i := range r.HTTP.Paths {
				p := &r.HTTP.Paths[i]
				written := p.Path
				if written == "" {
					written = "/"
				}
				rule.Paths = append(rule.Paths, Path{Match: effectiveMatch(*p, ann.UseRegex), Written: written, Backend: &p.Backend})
			}
		}
		t.Rules = append(t.Rules, rule)
	}
	return t, problems, nil
}

// effectiveMatch applies the path type rules: ImplementationSpecific (and
// an absent type) behave as Prefix, and a Prefix path's trailing slash is
// ignored, as the Kubernetes documentation specifies. With use-regex every
// path is a regular expression matched from the start of the URL path,
// whatever its type, as in ingress-nginx.
func effectiveMatch(p networkingv1.HTTPIngressPath, regex bool) model.Match {
	path := p.Path
	if path == "" {
		path = "/"
	}
	if regex {
		return model.Match{Type: model.Regex, Path: path}
	}
	if p.PathType != nil && *p.PathType == networkingv1.PathTypeExact {
		return model.Match{Type: model.Exact, Path: path}
	}
	if len(path) > 1 {
		path = strings.TrimRight(path, "/")
	}
	return model.Match{Type: model.Prefix, Path: path}
}

// check validates everything in an Ingress that could reach the
// configuration. With regex set, paths are checked as regular expressions.
// A canary's paths only name a main Ingress's paths, which may be regular
// expressions: either grammar will do.
func check(ing *networkingv1.Ingress, regex, canary bool) error {
	if errs := validation.IsDNS1123Label(ing.Namespace); len(errs) > 0 {
		return fmt.Errorf("namespace %q is invalid: %s", model.Truncate(ing.Namespace), strings.Join(errs, "; "))
	}
	if err := model.ValidateObjectName("ingress", ing.Name); err != nil {
		return err
	}
	if ing.Spec.DefaultBackend == nil && len(ing.Spec.Rules) == 0 {
		return fmt.Errorf("spec has neither rules nor a defaultBackend")
	}
	if d := ing.Spec.DefaultBackend; d != nil {
		if err := CheckServiceBackend(d); err != nil {
			return fmt.Errorf("defaultBackend: %w", err)
		}
	}
	for i, r := range ing.Spec.Rules {
		if r.Host != "" {
			if err := model.ValidateHost(r.Host); err != nil {
				return fmt.Errorf("rules[%d]: %w", i, err)
			}
		}
		if r.HTTP == nil {
			continue
		}
		for j, p := range r.HTTP.Paths {
			if p.PathType != nil {
				switch *p.PathType {
				case networkingv1.PathTypeExact, networkingv1.PathTypePrefix, networkingv1.PathTypeImplementationSpecific:
				default:
					return fmt.Errorf("rules[%d].paths[%d]: unknown pathType %q", i, j, model.Truncate(string(*p.PathType)))
				}
			}
			if p.Path != "" {
				var err error
				if regex {
					_, err = model.ParseRegex(p.Path)
				} else {
					err = model.ValidatePath(p.Path)
				}
				if err != nil && canary {
					if _, rerr := model.ParseRegex(p.Path); rerr == nil {
						err = nil
					}
				}
				if err != nil {
					return fmt.Errorf("rules[%d].paths[%d]: %w", i, j, err)
				}
			}
			if err := CheckServiceBackend(&p.Backend); err != nil {
				return fmt.Errorf("rules[%d].paths[%d]: %w", i, j, err)
			}
		}
	}
	for i, t := range ing.Spec.TLS {
		for _, h := range t.Hosts {
			if err := model.ValidateHost(h); err != nil {
				return fmt.Errorf("tls[%d]: %w", i, err)
			}
		}
		if t.SecretName != "" {
			if err := model.ValidateObjectName("secret", t.SecretName); err != nil {
				return fmt.Errorf("tls[%d]: %w", i, err)
			}
		}
	}
	return nil
}

// CheckServiceBackend validates the names in a backend reference; it is
// part of deciding whether an Ingress is well-formed.
func CheckServiceBackend(b *networkingv1.IngressBackend) error {
	if b.Resource != nil {
		return fmt.Errorf("resource backends are not supported; use a Service")
	}
	if b.Service == nil {
		return fmt.Errorf("backend names no Service")
	}
	if err := model.ValidateServiceName(b.Service.Name); err != nil {
		return err
	}
	if p := b.Service.Port; p.Name != "" {
		if p.Number != 0 {
			return fmt.Errorf("service %s: port has both a name and a number", b.Service.Name)
		}
		return model.ValidatePortName(p.Name)
	} else if p.Number < 1 || p.Number > 65535 {
		return fmt.Errorf("service %s: port number %d is out of range", b.Service.Name, p.Number)
	}
	return nil
}
