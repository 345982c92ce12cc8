package annotations

import (
	"errors"
	"fmt"
	"slices"

	"github.com/causeway/causeway/internal/model"
)

// balanceGroup is ingress-nginx's balancing annotations, mapped onto the
// methods of Causeway's Lua balancer (docs/load-balancing.md). As in
// ingress-nginx, affinity: cookie wins over upstream-hash-by, which wins
// over load-balance. The result applies to the Services the Ingress routes
// to; the builder settles disagreements between Ingresses.
var balanceGroup = Group{
	Name: "balance",
	Annotations: supported("balance",
		Annotation{Name: "load-balance", Scope: ScopeBackend, Default: "the ConfigMap's load-balance (round_robin)",
			Grammar: "round_robin, ewma, least_conn or p2c",
			Difference: "least_conn and p2c are Causeway's; chash, chashsubset, sticky_balanced and sticky_persistent are refused " +
				"(use upstream-hash-by or affinity: cookie); an invalid value drops the setting instead of rejecting the Ingress"},
		Annotation{Name: "upstream-hash-by", Scope: ScopeBackend, Default: "none",
			Grammar: "nginx variables written back to back, from $request_uri, $uri, $args, $host, $scheme, $remote_addr, " +
				"$binary_remote_addr, $realip_remote_addr, $request_method, $server_name, $http_*, $cookie_* and $arg_*; at most 256 bytes",
			Difference: "literal text and ${var} are refused (ingress-nginx accepts ${request_uri}-text); subsets are not supported"},
		Annotation{Name: "affinity", Scope: ScopeBackend, Default: "none",
			Grammar: "cookie"},
		Annotation{Name: "affinity-mode", Scope: ScopeBackend, Default: "persistent",
			Grammar: "persistent; balanced is recognized but not supported",
			Difference: "Causeway's cookie names the endpoint and keeps the client there while it is ready, as persistent does; " +
				"the default is persistent, and balanced raises an UnsupportedAnnotation Problem"},
		Annotation{Name: "session-cookie-name", Scope: ScopeBackend, Default: "INGRESSCOOKIE",
			Grammar:    "1 to 64 of A-Z a-z 0-9 _ . -",
			Difference: "/, ~ and : are refused"},
		Annotation{Name: "session-cookie-path", Scope: ScopeBackend, Default: "/",
			Grammar: "an absolute URL path of up to 256 bytes of letters, digits and ._~!$&'()*+,=:@%/-",
			Difference: "the default is / for every path of the backend, not the Ingress path; the cookie is set on every path " +
				"routed to the backend, not only the paths of the Ingress that asks for affinity"},
		Annotation{Name: "session-cookie-max-age", Scope: ScopeBackend, Default: "none: a session cookie",
			Grammar:    "whole seconds, 1 to 315360000 (ten years)",
			Difference: "0 and negative values are refused"},
		Annotation{Name: "session-cookie-expires", Scope: ScopeBackend, Default: "none",
			Grammar: "whole seconds, 1 to 315360000 (ten years)",
			Difference: "sent as Max-Age when session-cookie-max-age is absent; no Expires attribute is sent " +
				"(browsers give Max-Age precedence over Expires)"},
		Annotation{Name: "session-cookie-samesite", Scope: ScopeBackend, Default: "none: no SameSite attribute",
			Grammar: "None, Lax or Strict (any case)",
			Difference: "sent capitalized as shown; None implies session-cookie-secure: true when that is absent, " +
				"and is refused with session-cookie-secure: false"},
		Annotation{Name: "session-cookie-secure", Scope: ScopeBackend, Default: "false",
			Grammar:    "a boolean",
			Difference: "false or absent never sends Secure; ingress-nginx sends it on requests that came over HTTPS"},
		Annotation{Name: "session-cookie-change-on-failure", Scope: ScopeBackend, Default: "true",
			Grammar: "a boolean",
			Difference: "Causeway always moves a request whose endpoint failed to another endpoint and re-pins the client there, " +
				"as true does; false raises an UnsupportedAnnotation Problem"},
	),
	Parse: parseBalanceNginx,
}

// stickyOptions apply only with affinity: cookie.
var stickyOptions = []string{"affinity-mode", "session-cookie-name", "session-cookie-path", "session-cookie-max-age",
	"session-cookie-expires", "session-cookie-samesite", "session-cookie-secure", "session-cookie-change-on-failure"}

// nginxStickyCookie is ingress-nginx's default affinity cookie name;
// Causeway's own (causeway_affinity) applies to causeway.io/ annotations.
const nginxStickyCookie = "INGRESSCOOKIE"

// loadBalanceMethods maps load-balance values onto methods.
var loadBalanceMethods = map[string]model.BalanceMethod{
	"round_robin": model.RoundRobin, "ewma": model.EWMA, "least_conn": model.LeastConn, "p2c": model.P2C,
}

// sameSites are the SameSite values, spelled as sent.
var sameSites = map[string]bool{"None": true, "Lax": true, "Strict": true}

func parseBalanceNginx(r *Reader, res *Result) {
	b := &BalanceSettings{}
	// applied are the annotations that take effect, for b.Keys.
	var applied []string
	sticky := false
	if v, ok := r.Get("affinity"); ok {
		if v == "cookie" {
			sticky = true
			applied = append(applied, "affinity")
		} else {
			r.Invalid("affinity", v, errors.New(`want "cookie"`))
		}
	}
	hashKey, hashed := "", false
	if v, ok := r.Get("upstream-hash-by"); ok {
		switch {
		case sticky:
			r.Ignored("upstream-hash-by", `has no effect with affinity: "cookie"`)
		default:
			if err := model.ValidateHashKey(v); err != nil {
				r.Invalid("upstream-hash-by", v, err)
			} else {
				hashKey, hashed = v, true
				applied = append(applied, "upstream-hash-by")
			}
		}
	}
	var method model.BalanceMethod
	if v, ok := r.Get("load-balance"); ok {
		switch {
		case sticky && (v == "sticky_balanced" || v == "sticky_persistent"),
			hashed && (v == "chash" || v == "chashsubset"):
			// Says what the other annotation does.
			applied = append(applied, "load-balance")
		case sticky:
			r.Ignored("load-balance", `has no effect with affinity: "cookie"`)
		case hashed:
			r.Ignored("load-balance", "has no effect with upstream-hash-by")
		default:
			m, err := parseLoadBalance(v)
			if err != nil {
				r.Invalid("load-balance", v, err)
			} else {
				method = m
				applied = append(applied, "load-balance")
			}
		}
	}
	switch {
	case sticky:
		var set []string
		b.Sticky, set = parseStickyCookie(r)
		b.Method, applied = model.Sticky, append(applied, set...)
	case hashed:
		b.Method, b.HashKey = model.CHash, hashKey
	case method != "":
		b.Method = method
	}
	if !sticky {
		for _, n := range stickyOptions {
			if r.Has(n) {
				r.Ignored(n, `only applies with affinity: "cookie"`)
			}
		}
	}
	if b.Method == "" {
		return
	}
	r.setKeys(&b.Keys, applied...)
	res.Balance = b
}

// parseLoadBalance reads a load-balance value.
func parseLoadBalance(v string) (model.BalanceMethod, error) {
	if m, ok := loadBalanceMethods[v]; ok {
		return m, nil
	}
	switch v {
	case "chash", "chashsubset":
		return "", errors.New("set upstream-hash-by to hash; want round_robin, ewma, least_conn or p2c")
	case "sticky_balanced", "sticky_persistent":
		return "", errors.New(`set affinity: "cookie" for cookie affinity; want round_robin, ewma, least_conn or p2c`)
	}
	return "", errors.New("want round_robin, ewma, least_conn or p2c")
}

// parseStickyCookie reads the affinity cookie's options, each checked
// with the model's own grammar, then the combination. It returns the
// names of the annotations that took effect.
func parseStickyCookie(r *Reader) (*model.StickyCookie, []string) {
	c := &model.StickyCookie{Name: nginxStickyCookie}
	var applied []string
	set := func(name string, ok bool) bool {
		if ok {
			applied = append(applied, name)
		}
		return ok
	}
	if v, ok := r.Get("affinity-mode"); ok {
		switch v {
		case "persistent":
			applied = append(applied, "affinity-mode")
		case "balanced":
			r.Ignored("affinity-mode", `value "balanced" is not supported: the cookie keeps a client on its endpoint while that is ready, as "persistent" does`)
		default:
			r.Invalid("affinity-mode", v, errors.New(`want "persistent" or "balanced"`))
		}
	}
	set("session-cookie-name", Set(r, "session-cookie-name", &c.Name, func(s string) (string, error) {
		if s == "" {
			return "", errors.New("want a cookie name")
		}
		return s, (&model.StickyCookie{Name: s}).Validate()
	}))
	set("session-cookie-path", Set(r, "session-cookie-path", &c.Path, func(s string) (string, error) {
		if s == "" {
			return "", errors.New("want a path that starts with /")
		}
		return s, (&model.StickyCookie{Path: s}).Validate()
	}))
	cookieAge := func(s string) (int, error) { return parseInt(s, 1, model.MaxCookieAge) }
	if !set("session-cookie-max-age", Set(r, "session-cookie-max-age", &c.MaxAge, cookieAge)) {
		set("session-cookie-expires", Set(r, "session-cookie-expires", &c.MaxAge, cookieAge))
	} else if r.Has("session-cookie-expires") {
		Parse(r, "session-cookie-expires", cookieAge) // checked; Max-Age wins
	}
	secureSet := set("session-cookie-secure", Set(r, "session-cookie-secure", &c.Secure, model.ParseBool))
	sameSiteSet := set("session-cookie-samesite", Set(r, "session-cookie-samesite", &c.SameSite, parseSameSite))
	if sameSiteSet && c.SameSite == "None" && !secureSet {
		// Browsers refuse SameSite=None without Secure; ingress-nginx adds
		// Secure on HTTPS requests, and over plain HTTP browsers keep
		// neither cookie.
		c.Secure = true
	}
	if err := c.Validate(); err != nil {
		v, _ := r.Get("session-cookie-samesite")
		r.Invalid("session-cookie-samesite", v, fmt.Errorf("%w, and session-cookie-secure is false", err))
		c.SameSite = ""
		applied = slices.DeleteFunc(applied, func(n string) bool { return n == "session-cookie-samesite" })
	}
	if v, ok := Parse(r, "session-cookie-change-on-failure", model.ParseBool); ok && !v {
		r.Ignored("session-cookie-change-on-failure", `value "false" is not supported: a request whose endpoint fails moves to another endpoint, which then keeps the client`)
	} else {
		set("session-cookie-change-on-failure", ok)
	}
	return c, applied
}

// parseSameSite reads None, Lax or Strict in any case.
func parseSameSite(s string) (string, error) {
	v, err := model.ParseTokenList(s, sameSites, 1)
	if err != nil {
		return "", errors.New("want None, Lax or Strict")
	}
	return v[0], nil
}
