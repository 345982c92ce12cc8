package annotations

import (
	"fmt"
	"slices"
	"strings"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/snippet"
)

// snippetsGroup is ingress-nginx's configuration-snippet and
// server-snippet. They are never pasted: package snippet reads them into
// typed directives of an allowlist, and the builder applies them only when
// the ConfigMap's allow-snippet-annotations is true.
var snippetsGroup = Group{
	Name: "snippets",
	Annotations: supported("snippets",
		Annotation{Name: "configuration-snippet", Scope: ScopeLocation,
			Default: "none; refused with a Problem unless the ConfigMap's allow-snippet-annotations is true",
			Grammar: "nginx directives, each ending with \";\", from an allowlist: add_header, more_set_headers, more_clear_headers, " +
				"proxy_set_header, proxy_hide_header, return, rewrite, expires, set of a new variable, allow and deny (deny lines, then allow lines, then deny all), " +
				"and if (one condition on a variable) around return, set and rewrite; values may read the variables of the ConfigMap's http-snippet maps " +
				"(docs/security.md, \"Snippets\")",
			Difference: "anything else (other directives, blocks such as location or an if in an if, file paths, variables outside the allowlist) refuses the whole snippet with a Problem " +
				"naming it, and the Ingress is served without it, or, when the refused snippet denies (deny, auth, limits, if, a return of 400 or more), every path answers 503; " +
				"with auth, allowlists or limits on the path, or block-cidrs, a snippet that answers (return, a redirecting rewrite) is refused"},
		Annotation{Name: "auth-snippet", Scope: ScopeLocation,
			Default: "none; refused with a Problem unless the ConfigMap's allow-snippet-annotations is true",
			Grammar: "with auth-url, nginx directives of the allowlist proxy_set_header, proxy_hide_header and set of a new variable, applied in the location that asks the authentication service",
			Difference: "as configuration-snippet; a header the subrequest sets itself (X-Original-URL, X-Real-IP ...) may not be replaced; without auth-url it is reported and has no effect " +
				"(ingress-nginx ignores it silently); deprecated in ingress-nginx too"},
		Annotation{Name: "server-snippet", Scope: ScopeServer,
			Default: "none; refused with a Problem unless the ConfigMap's allow-snippet-annotations is true",
			Grammar: "as configuration-snippet; set, rewrite and return run at the server level, the header directives apply to every path of the host",
			Difference: "as configuration-snippet; a return or redirecting rewrite is refused when any path of the host has auth, allowlists or limits, " +
				"or the ConfigMap sets block-cidrs; allow and deny apply to every path of the host; location blocks are refused, and when every refusal " +
				"of the snippet sits in location blocks that only refuse (location ~ /\\.git { deny all; }), only the requests they match answer 503, " +
				"not every path of the Ingress"},
	),
	Parse: parseSnippets,
}

func parseSnippets(r *Reader, res *Result) {
	for _, s := range []struct {
		name string
		ctx  snippet.Context
		dst  **model.Snippet
	}{{"configuration-snippet", snippet.Location, &res.Location.Snippet}, {"server-snippet", snippet.Server, &res.Server.Snippet},
		{"auth-snippet", snippet.Auth, &res.authSnippet}} {
		v, ok := r.Get(s.name)
		if !ok {
			continue
		}
		key := r.Key(s.name)
		res.Snippets.Keys = append(res.Snippets.Keys, key)
		denies := snippet.Denies(v)
		if denies {
			res.Snippets.Denying = append(res.Snippets.Denying, key)
			if s.ctx == snippet.Server {
				if locs, ok := snippet.DenyingLocations(v); ok {
					for i := range locs {
						locs[i].Source = r.ref
					}
					res.Snippets.closed = locs
				}
			}
		}
		var known []string
		if r.defaults != nil {
			known = r.defaults.SnippetVariables
		}
		parsed, err := snippet.ParseReading(v, s.ctx, known)
		if err != nil {
			narrowed := s.ctx == snippet.Server && res.Snippets.closed != nil
			res.Snippets.Problems = append(res.Snippets.Problems, model.Problem{Object: r.ref, Reason: model.ReasonInvalidAnnotation,
				Message: fmt.Sprintf("annotation %s: %v; the whole snippet is refused and %s", key, err, refusedSnippet(denies, narrowed))})
			if denies && !narrowed {
				res.Snippets.failed = append(res.Snippets.failed, key)
			}
			continue
		}
		if s.ctx == snippet.Server {
			res.Snippets.closed = nil // parsed: it holds no location block
		}
		*s.dst = parsed
		if s.ctx == snippet.Server {
			r.setKeys(&res.Server.Keys, s.name)
		}
	}
	// auth-snippet belongs to auth-url's subrequest (the extauth group
	// parsed it before this one).
	switch a := res.Location.ExternalAuth; {
	case res.authSnippet == nil:
	case a == nil:
		res.Snippets.Problems = append(res.Snippets.Problems, model.Problem{Object: r.ref, Reason: model.ReasonInvalidAnnotation,
			Message: fmt.Sprintf("annotation %s has no effect without %s", r.Key("auth-snippet"), r.Key("auth-url"))})
	default:
		for _, h := range res.authSnippet.ProxySetHeaders {
			if slices.ContainsFunc(model.AuthSubrequestHeaders, func(n string) bool { return strings.EqualFold(n, h.Name) }) {
				res.Snippets.Problems = append(res.Snippets.Problems, model.Problem{Object: r.ref, Reason: model.ReasonInvalidAnnotation,
					Message: fmt.Sprintf("annotation %s: proxy_set_header %s would replace a header the subrequest sets itself; the whole snippet is refused and %s",
						r.Key("auth-snippet"), h.Name, RefusedSnippet(false))})
				return
			}
		}
		cp := *a
		cp.Snippet = res.authSnippet
		res.Location.ExternalAuth = &cp
	}
}

// GateSnippets applies the ConfigMap's allow-snippet-annotations to the
// snippets of an Ingress: without it they are cleared and each key is
// refused with a Problem; with it the Problems are those of parsing.
// A refused snippet that looks meant to refuse requests (snippet.Denies)
// closes the Ingress's paths: serving them without it would let in the
// clients it keeps out. Any other refused snippet is left out.
func (res *Result) GateSnippets(ref model.ObjectRef, allow bool) []model.Problem {
	res.Server.Closed = res.Snippets.closed
	var out []model.Problem
	if ms := res.ModSecurity; ms != nil {
		if !allow {
			ms.gate(ref)
		}
		// Reported here, with the other snippets' Problems, once.
		out, ms.Problems = ms.Problems, nil
	}
	if allow {
		res.FailClosed = append(res.FailClosed, res.Snippets.failed...)
		return append(out, res.Snippets.Problems...)
	}
	res.Location.Snippet, res.Server.Snippet = nil, nil
	if a := res.Location.ExternalAuth; a != nil && a.Snippet != nil {
		cp := *a
		cp.Snippet = nil
		res.Location.ExternalAuth = &cp
	}
	for _, k := range res.Snippets.Keys {
		denies := slices.Contains(res.Snippets.Denying, k)
		narrowed := strings.HasSuffix(k, "/server-snippet") && res.Snippets.closed != nil
		if denies && !narrowed {
			res.FailClosed = append(res.FailClosed, k)
		}
		out = append(out, model.Problem{Object: ref, Reason: model.ReasonUnsupportedAnnotation, Message: fmt.Sprintf(
			"annotation %s is refused: the ConfigMap's allow-snippet-annotations is false (the default); %s", k, refusedSnippet(denies, narrowed))})
	}
	slices.Sort(res.FailClosed)
	return out
}

// refusedSnippet is RefusedSnippet, or, narrowed, what becomes of a
// refused server-snippet whose refusals are all deny-only location blocks.
func refusedSnippet(denies, narrowed bool) string {
	if narrowed {
		return "its location blocks only refuse requests, so the requests they match answer 503 on the Ingress's hosts, and the rest are served without it"
	}
	return RefusedSnippet(denies)
}

// RefusedSnippet says what becomes of an Ingress whose snippet is refused.
func RefusedSnippet(denies bool) string {
	if denies {
		return "it refuses requests (deny, auth, limits, if or a return of 400 or more), so every path of this Ingress answers 503 rather than being served without it"
	}
	return "the Ingress is served without it"
}
