package annotations

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// redirectGroup is ingress-nginx's redirect parser (a location that
// answers with a redirect instead of proxying) and the host-level
// redirects: HTTPS, www and aliases.
var redirectGroup = Group{
	Name: "redirect",
	Annotations: supported("redirect",
		Annotation{Name: "permanent-redirect", Scope: ScopeLocation, Default: "none",
			Grammar: "an absolute http or https URL of at most 2048 bytes, without user information, fragment or $; " +
				"the path and query hold letters, digits, %XX escapes and - . _ ~ ! * ( ) + , = : @ & / ?",
			Difference: "the URL must be absolute (ingress-nginx also accepts a relative one such as /x); " +
				"an invalid value drops the redirect instead of rejecting the Ingress; on paths with an access list, " +
				"authentication or rate limits the redirect is answered only once the checks pass (ingress-nginx redirects every client)"},
		Annotation{Name: "permanent-redirect-code", Scope: ScopeLocation, Default: "301",
			Grammar: "301, 302, 303, 307 or 308",
			Difference: "300, 304, 305 and 306 are refused (ingress-nginx accepts 300 to 308, and nginx then sends the URL " +
				"as the body of a non-redirect response); an invalid code is reported and 301 used"},
		Annotation{Name: "temporal-redirect", Scope: ScopeLocation, Default: "none",
			Grammar: "as permanent-redirect; it wins when both are set",
			Difference: "when it is invalid, a valid permanent-redirect still applies (ingress-nginx rejects the Ingress " +
				"or ignores every redirect annotation); checks first, as permanent-redirect"},
		Annotation{Name: "temporal-redirect-code", Scope: ScopeLocation, Default: "302",
			Grammar:    "301, 302, 303 or 307",
			Difference: "300, 304, 305 and 306 are refused (ingress-nginx accepts 300 to 307); an invalid code is reported and 302 used"},
		Annotation{Name: "ssl-redirect", Scope: ScopeServer, Default: "true (the ConfigMap's ssl-redirect)",
			Grammar: "a boolean: true, false, 1, 0, t, f (any case); redirects plain HTTP to HTTPS (308) for hosts with TLS",
			Difference: "applies to the whole host, and the oldest Ingress that sets it wins a disagreement (ingress-nginx decides per location); " +
				"the redirect is answered before permanent/temporal redirects and CORS preflights, which ingress-nginx serves over plain HTTP"},
		Annotation{Name: "force-ssl-redirect", Scope: ScopeServer, Default: "false (the ConfigMap's force-ssl-redirect)",
			Grammar:    "a boolean: true, false, 1, 0, t, f (any case); redirects plain HTTP to HTTPS even without TLS for the host",
			Difference: "applies to the whole host, and the oldest Ingress that sets it wins a disagreement (ingress-nginx decides per location)"},
		Annotation{Name: "preserve-trailing-slash", Scope: ScopeServer, Default: "false (the ConfigMap's preserve-trailing-slash)",
			Grammar:    "a boolean: true, false, 1, 0, t, f (any case); keeps a trailing / in the HTTPS redirect",
			Difference: "applies to the whole host, and the oldest Ingress that sets it wins a disagreement (ingress-nginx decides per location)"},
		Annotation{Name: "from-to-www-redirect", Scope: ScopeServer, Default: "false",
			Grammar: "a boolean: true, false, 1, 0, t, f (any case); the www. (or non-www.) twin of each host redirects to it with 308",
			Difference: "the oldest Ingress of the host that sets it wins a disagreement (ingress-nginx: any Ingress setting it true); " +
				"an invalid value drops the setting instead of rejecting the Ingress"},
		Annotation{Name: "server-alias", Scope: ScopeServer, Default: "none",
			Grammar: fmt.Sprintf("a comma-separated list of at most %d items (empty ones count), each a lower-case DNS name or a *. wildcard "+
				"followed by one; spaces around items and empty items are dropped", maxAliases),
			Difference: "regular expressions and names with upper-case letters are refused (ingress-nginx accepts regex server names); " +
				"an invalid entry drops the whole list instead of rejecting the Ingress"},
	),
	Parse: parseRedirect,
}

// maxAliases bounds server-alias.
const maxAliases = 32

// Redirect codes each annotation accepts: those that make nginx send a
// Location header.
var (
	permanentCodes = []int{301, 302, 303, 307, 308}
	temporalCodes  = []int{301, 302, 303, 307}
)

func parseRedirect(r *Reader, res *Result) {
	permCode := redirectCode(r, "permanent-redirect-code", permanentCodes, 301)
	tempCode := redirectCode(r, "temporal-redirect-code", temporalCodes, 302)
	perm, permOK := Parse(r, "permanent-redirect", model.ParseRedirectURL)
	temp, tempOK := Parse(r, "temporal-redirect", model.ParseRedirectURL)
	switch {
	case tempOK:
		res.Redirect = &model.Redirect{Code: tempCode, URL: temp}
		if permOK {
			r.Ignored("permanent-redirect", "is overridden by temporal-redirect")
		}
	case permOK:
		res.Redirect = &model.Redirect{Code: permCode, URL: perm}
	}
	if r.Has("permanent-redirect-code") && !r.Has("permanent-redirect") {
		r.Ignored("permanent-redirect-code", "only applies together with permanent-redirect")
	}
	if r.Has("temporal-redirect-code") && !r.Has("temporal-redirect") {
		r.Ignored("temporal-redirect-code", "only applies together with temporal-redirect")
	}

	s := &res.Server
	for _, f := range []struct {
		name string
		dst  **bool
	}{
		{"ssl-redirect", &s.SSLRedirect},
		{"force-ssl-redirect", &s.ForceSSLRedirect},
		{"preserve-trailing-slash", &s.PreserveTrailingSlash},
		{"from-to-www-redirect", &s.WWWRedirect},
	} {
		if SetPtr(r, f.name, f.dst, model.ParseBool) {
			r.setKeys(&s.Keys, f.name)
		}
	}
	if Set(r, "server-alias", &s.Aliases, parseAliases) {
		r.setKeys(&s.Keys, "server-alias")
	}
}

// redirectCode reads a redirect code annotation; an absent or invalid one
// is def.
func redirectCode(r *Reader, name string, allowed []int, def int) int {
	code, ok := Parse(r, name, func(s string) (int, error) {
		n, err := parseInt(s, 300, 399)
		if err != nil || !slices.Contains(allowed, n) {
			return 0, fmt.Errorf("want one of %s", joinInts(allowed))
		}
		return n, nil
	})
	if !ok {
		return def
	}
	return code
}

// parseAliases parses server-alias: host names separated by commas.
func parseAliases(s string) ([]string, error) {
	var out []string
	items := strings.Split(s, ",")
	if len(items) > maxAliases {
		return nil, fmt.Errorf("want at most %d aliases, not %d", maxAliases, len(items))
	}
	for _, it := range items {
		it = strings.Trim(it, " \t")
		if it == "" {
			continue
		}
		if err := model.ValidateHost(it); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	if len(out) == 0 {
		return nil, errors.New("want a comma-separated list of host names")
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// parseInt parses a decimal integer between lo and hi (both at least 0):
// ASCII digits only, no sign or spaces, at most 9 of them.
func parseInt(s string, lo, hi int) (int, error) {
	want := fmt.Errorf("want a whole number from %d to %d", lo, hi)
	if s == "" || len(s) > 9 || strings.Trim(s, "0123456789") != "" {
		return 0, want
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, want
	}
	return n, nil
}

// joinInts prints 1, 2 or 3.
func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
