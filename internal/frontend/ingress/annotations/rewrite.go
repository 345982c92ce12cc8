package annotations

import (
	"github.com/causeway/causeway/internal/model"
)

// rewriteGroup is ingress-nginx's rewrite parser: regex paths, the path
// rewrite, the prefix header that goes with it, and the app root.
var rewriteGroup = Group{
	Name: "rewrite",
	Annotations: supported("rewrite",
		Annotation{Name: "use-regex", Scope: ScopeLocation, Default: "false",
			Grammar: "a boolean: true, false, 1, 0, t, f (any case)",
			Difference: "as in ingress-nginx, every path of every Ingress on the host becomes a case-insensitive regular expression; " +
				"Causeway accepts only the regular expressions whose meaning RE2 and PCRE agree on (see docs/annotations.md, Regex paths)"},
		Annotation{Name: "rewrite-target", Scope: ScopeLocation, Default: "none",
			Grammar: "a path of at most 1024 bytes starting with / (not //), of letters, digits, . _ ~ ! * ( ) + , = : @ & / - " +
				"and capture references $1 to $9, optionally followed by ? and a query of the same; no . or .. segments; " +
				"an empty value rewrites nothing",
			Difference: "turns the host's regex mode on whenever it is set, even when the target equals the path " +
				"(ingress-nginx: only when it differs); the target must start with /; a ?query is allowed (ingress-nginx refuses ?)"},
		Annotation{Name: "x-forwarded-prefix", Scope: ScopeLocation, Default: "none",
			Grammar: "a path as an Ingress path is written: 1 to 1024 bytes starting with /, of letters, digits and " +
				"- . _ ~ ! * ( ) + , = : @ & /, no // and no . or .. segments",
			Difference: "must start with / and may not hold $ (ingress-nginx accepts a value without a leading / and $ in it); " +
				"set without a rewrite-target it is reported as ignored"},
		Annotation{Name: "app-root", Scope: ScopeServer, Default: "none",
			Grammar: "a path as an Ingress path is written: 1 to 1024 bytes starting with /, of letters, digits and " +
				"- . _ ~ ! * ( ) + , = : @ & /, no // and no . or .. segments; \"/\" is answered with a 302 to it",
			Difference: "applies to the whole host and the oldest Ingress that sets it wins a disagreement " +
				"(ingress-nginx renders one check per location, so the first in configuration order wins); $ is refused"},
	),
	Parse: parseRewrite,
}

// maxRewriteGroups is the capture groups a rewrite-target may name. The
// paths it applies to are not known here; ParseRegex bounds every path
// regex to 9 groups, and the builder may check a target against its path.
const maxRewriteGroups = 9

func parseRewrite(r *Reader, res *Result) {
	if v, ok := Parse(r, "use-regex", model.ParseBool); ok && v {
		res.UseRegex = true
	}

	rewrites := false
	if v, ok := r.Get("rewrite-target"); ok {
		if v == "" {
			r.Ignored("rewrite-target", "is empty and rewrites nothing")
		} else if t, ok := Parse(r, "rewrite-target", func(s string) (string, error) {
			return model.ParseRewriteTarget(s, maxRewriteGroups)
		}); ok {
			res.Location.Rewrite = &model.Rewrite{Target: t}
			// ingress-nginx switches regex mode on only for a target that
			// differs from the path; the paths are not known here.
			res.UseRegex = true
			rewrites = true
		}
	}

	if r.Has("x-forwarded-prefix") {
		if v, ok := Parse(r, "x-forwarded-prefix", parsePathHeader); ok {
			if rewrites {
				res.Location.XForwardedPrefix = &v
			} else {
				r.Ignored("x-forwarded-prefix", "only applies together with a valid, non-empty rewrite-target")
			}
		}
	}

	if SetPtr(r, "app-root", &res.Server.AppRoot, parsePath) {
		r.setKeys(&res.Server.Keys, "app-root")
	}
}

// parsePath accepts what model.ValidatePath accepts.
func parsePath(s string) (string, error) {
	if err := model.ValidatePath(s); err != nil {
		return "", err
	}
	return s, nil
}

// parsePathHeader is a path sent as a header value.
func parsePathHeader(s string) (model.HeaderValue, error) {
	if err := model.ValidatePath(s); err != nil {
		return "", err
	}
	return model.ParseHeaderValue(s)
}
