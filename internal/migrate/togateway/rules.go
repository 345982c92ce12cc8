package togateway

import (
	"fmt"
	"strings"
)

// Outcome is what becomes of one input of an Ingress.
type Outcome string

const (
	// Converted: the Gateway API objects do what ingress-nginx did.
	Converted Outcome = "converted"
	// Approximated: converted, with a difference the rule's note states.
	Approximated Outcome = "approximated"
	// NotConverted: Gateway API cannot express it; the objects are
	// written without it and the report says what is lost.
	NotConverted Outcome = "not-converted"
	// Refused: a security setting Gateway API cannot express. The
	// Ingress's routes are not written (they would be open), unless
	// Options.AllowInsecure.
	Refused Outcome = "refused"
)

// Outcomes are the outcomes in the order reports count them.
var Outcomes = []Outcome{Converted, Approximated, NotConverted, Refused}

// SecuritySeverity is the severity of a Refused finding.
const SecuritySeverity = "security: the route would be open"

// Rule is one row of the conversion table: what is read, what it becomes
// and how faithful that is. Every Finding names the Rule that made it,
// and docs/migrating-from-ingress-nginx.md's table is made from Rules.
type Rule struct {
	// ID names the rule in reports ("path-prefix").
	ID string
	// Input is what the rule reads: an annotation (without its prefix),
	// an Ingress field or a ConfigMap key.
	Input string
	// Outcome is what the rule makes of it.
	Outcome Outcome
	// Becomes is the Gateway API construct written ("" for none).
	Becomes string
	// Note says how the result differs, or why nothing is written.
	Note string
}

// table is every rule, in the order of the documentation.
var table []*Rule

func def(r Rule) *Rule {
	for _, o := range table {
		if o.ID == r.ID {
			panic("togateway: rule " + r.ID + " defined twice")
		}
	}
	p := &r
	table = append(table, p)
	return p
}

// Rules returns the conversion table.
func Rules() []Rule {
	out := make([]Rule, len(table))
	for i, r := range table {
		out[i] = *r
	}
	return out
}

// The rules. Inputs in backquotes are annotations of the ingress-nginx
// prefix unless they start with "spec." or name a ConfigMap key.
var (
	ruleClass = def(Rule{ID: "ingress-class", Input: "spec.ingressClassName, kubernetes.io/ingress.class", Outcome: Converted,
		Becomes: "which Ingresses are converted",
		Note:    "with --ingress-class, an Ingress naming another class is skipped (and listed as skipped); one naming none is converted only with --watch-ingress-without-class, as ingress-nginx's flag of that name serves it"})
	ruleRejected = def(Rule{ID: "ingress-rejected", Input: "an Ingress Causeway rejects", Outcome: NotConverted,
		Note: "an Ingress Causeway would refuse as a whole (an invalid path or name, a resource backend) is not converted; `causeway migrate check` says why"})

	rulePathExact = def(Rule{ID: "path-exact", Input: "pathType: Exact", Outcome: Converted,
		Becomes: "path match Exact"})
	rulePathPrefix = def(Rule{ID: "path-prefix", Input: "pathType: Prefix", Outcome: Converted,
		Becomes: "path match PathPrefix", Note: "both match whole path elements; a trailing \"/\" is dropped"})
	rulePathImplementationSpecific = def(Rule{ID: "path-implementation-specific", Input: "pathType: ImplementationSpecific", Outcome: Approximated,
		Becomes: "path match PathPrefix",
		Note:    "Causeway reads ImplementationSpecific as Prefix; ingress-nginx matched a string prefix (/app also matched /application), PathPrefix matches whole path elements"})
	ruleUseRegex = def(Rule{ID: "use-regex", Input: "use-regex", Outcome: Approximated,
		Becomes: "path match RegularExpression",
		Note: "ingress-nginx matches from the start of the path, case-insensitively, first match in configuration order; " +
			"Gateway API matches the whole path, so the value gets a trailing \".*\" (unless it ends with \"$\"), and precedence follows the spec; " +
			"Causeway keeps the match case-insensitive, other implementations may not. Every path of the Ingress becomes a regular expression, whatever its pathType"})
	ruleRegexHost = def(Rule{ID: "regex-host", Input: "a path of a host another Ingress sets use-regex (or rewrite-target) on", Outcome: Approximated,
		Becomes: "path match RegularExpression of the path as written",
		Note:    "ingress-nginx, and Causeway after it, turn every path of such a host into the case-insensitive regular expression ^path, whichever Ingress it comes from (Exact and Prefix paths then match as string prefixes); the conversion does the same, with use-regex's differences"})
	ruleRewriteFull = def(Rule{ID: "rewrite-target-full", Input: "rewrite-target without capture groups", Outcome: Converted,
		Becomes: "URLRewrite ReplaceFullPath on a RegularExpression match",
		Note:    "rewrite-target turns on use-regex, so the paths become regular expressions as there"})
	ruleRewriteStrip = def(Rule{ID: "rewrite-target-strip", Input: "rewrite-target `/$2` on a path `/p(/|$)(.*)`", Outcome: Converted,
		Becomes: "path match PathPrefix /p with URLRewrite ReplacePrefixMatch /",
		Note:    "the one capture shape Gateway API expresses exactly; the match becomes case-sensitive"})
	ruleRewritePrefix = def(Rule{ID: "rewrite-target-prefix", Input: "rewrite-target `/t/$2` on `/p(/|$)(.*)`, or `/t/$1` on `/p/(.*)`", Outcome: Approximated,
		Becomes: "path match PathPrefix /p with URLRewrite ReplacePrefixMatch /t",
		Note:    "/p alone becomes /t, not /t/; with `/p/(.*)`, /p itself now matches too (ingress-nginx answered it from another location); the match becomes case-sensitive"})
	ruleRewriteCaptures = def(Rule{ID: "rewrite-target-captures", Input: "rewrite-target with other capture groups", Outcome: NotConverted,
		Becomes: "path match RegularExpression, no rewrite",
		Note:    "Gateway API rewrites a whole path or a matched prefix only: capture groups cannot be expressed, so the backend receives the path unrewritten; only the two prefix shapes above convert"})
	ruleXForwardedPrefix = def(Rule{ID: "x-forwarded-prefix", Input: "x-forwarded-prefix", Outcome: Converted,
		Becomes: "RequestHeaderModifier set X-Forwarded-Prefix"})
	ruleAppRoot = def(Rule{ID: "app-root", Input: "app-root", Outcome: Converted,
		Becomes: "a rule matching Exact / with RequestRedirect ReplaceFullPath, status 302"})

	rulePermanentRedirect = def(Rule{ID: "permanent-redirect", Input: "permanent-redirect, permanent-redirect-code", Outcome: Approximated,
		Becomes: "RequestRedirect (scheme, hostname, port, ReplaceFullPath; status 301 or the code), no backendRefs",
		Note:    "ingress-nginx's redirect drops the request's query string, Gateway API's keeps it; a query in the URL cannot be expressed and is dropped (the finding says so)"})
	ruleTemporalRedirect = def(Rule{ID: "temporal-redirect", Input: "temporal-redirect", Outcome: Approximated,
		Becomes: "RequestRedirect as permanent-redirect, status 302",
		Note:    "as permanent-redirect"})
	ruleRedirectTemplate = def(Rule{ID: "redirect-variables", Input: "permanent-redirect or temporal-redirect with nginx variables", Outcome: NotConverted,
		Note: "a URL built from request variables cannot be expressed: the paths are routed to their backends instead"})
	ruleSSLRedirect = def(Rule{ID: "ssl-redirect", Input: "ssl-redirect (ConfigMap ssl-redirect, default true) on a host in spec.tls", Outcome: Converted,
		Becomes: "a second HTTPRoute `<route>-redirect` on the Gateway's HTTP listener with RequestRedirect scheme https (the ConfigMap's http-redirect-code, default 308); the route itself attaches to the host's HTTPS listener only",
		Note:    "ssl-redirect false attaches the route to both listeners"})
	ruleRedirectSlash = def(Rule{ID: "ssl-redirect-trailing-slash", Input: "ssl-redirect or force-ssl-redirect with preserve-trailing-slash false (the default)", Outcome: Approximated,
		Becomes: "the `<route>-redirect` HTTPRoute keeps the path as it is",
		Note:    "ingress-nginx drops one trailing slash from the path it redirects to (http://host/app/ goes to https://host/app), Gateway API's RequestRedirect keeps it; with preserve-trailing-slash: true the two agree"})
	ruleRedirectHostWide = def(Rule{ID: "ssl-redirect-per-path", Input: "ssl-redirect, force-ssl-redirect or preserve-trailing-slash on a host other Ingresses share", Outcome: Approximated,
		Becomes: "the redirect of this Ingress's paths only",
		Note:    "ingress-nginx applies them per path, and so do the routes; Causeway serving the Ingresses applies each to the whole host, as the oldest Ingress setting it says"})
	ruleForceSSLRedirect = def(Rule{ID: "force-ssl-redirect", Input: "force-ssl-redirect", Outcome: Converted,
		Becomes: "the ssl-redirect HTTPRoute"})
	ruleForceSSLNoTLS = def(Rule{ID: "force-ssl-redirect-without-tls", Input: "force-ssl-redirect on a host not in spec.tls", Outcome: NotConverted,
		Note: "ingress-nginx answered HTTPS with its default certificate, which the Gateway cannot name: the route stays on the HTTP listener, without the redirect"})

	ruleCanaryWeight = def(Rule{ID: "canary-weight", Input: "canary, canary-weight, canary-weight-total", Outcome: Approximated,
		Becomes: "the canary's Service added to the main route's rules of the same host and path, weights total-weight and weight",
		Note:    "while the canary's Service has no ready endpoint, ingress-nginx sends its share to the main Service; a Gateway API backendRef without endpoints answers its share with an error (503)"})
	ruleCanaryHeader = def(Rule{ID: "canary-by-header", Input: "canary-by-header, canary-by-header-value, canary-by-header-pattern", Outcome: Converted,
		Becomes: "rules of the same path with a header match (Exact always / never, Exact value, RegularExpression pattern) and only the canary (or only the main) backends",
		Note:    "Gateway API ranks a rule with a header match above one without, as ingress-nginx's header check comes before the weight"})
	ruleCanaryCookie = def(Rule{ID: "canary-by-cookie", Input: "canary-by-cookie", Outcome: NotConverted,
		Note: "Gateway API has no cookie match: requests with the cookie follow the weights"})
	ruleCanaryNoMain = def(Rule{ID: "canary-without-main", Input: "a canary path without a main Ingress path", Outcome: NotConverted,
		Note: "a canary only splits the traffic of a main Ingress of the same host and path (an HTTP one: gRPC canaries are not converted); with none, it is not converted"})

	ruleTimeouts = def(Rule{ID: "proxy-timeouts", Input: "proxy-connect-timeout, proxy-send-timeout, proxy-read-timeout", Outcome: Approximated,
		Becomes: "timeouts.backendRequest = connect + send + read (the ConfigMap's value, else 5s, 60s, 60s, for the ones not set)",
		Note: "nginx's timeouts bound each wait (to connect, between two writes, between two reads), Gateway API's bounds the whole backend request: " +
			"the sum is the longest an answer can take to start, so a response that keeps streaming past it is cut where ingress-nginx let it run"})
	ruleCORS = def(Rule{ID: "cors", Input: "enable-cors, cors-allow-origin, cors-allow-methods, cors-allow-headers, cors-expose-headers, cors-allow-credentials, cors-max-age", Outcome: Converted,
		Becomes: "CORS filter, ingress-nginx's defaults written out"})
	ruleCORSAnyCredentials = def(Rule{ID: "cors-any-origin-credentials", Input: "cors-allow-credentials: true with every origin allowed (cors-allow-origin * or unset)", Outcome: Approximated,
		Becomes: "CORS filter with allowOrigins * and without allowCredentials",
		Note: "ingress-nginx answers Access-Control-Allow-Origin: * with Access-Control-Allow-Credentials: true, which browsers refuse for a credentialed request; " +
			"in a CORS filter that pair echoes the request's origin as Gateway API asks, which would let credentialed requests from every origin through, " +
			"so the credentials are left out: browsers behave the same, the header differs"})
	ruleCORSListed = def(Rule{ID: "cors-listed-origins", Input: "cors-allow-origin listing origins (not *)", Outcome: Approximated,
		Becomes: "CORS filter allowOrigins",
		Note: "a preflight from an origin not listed is answered by the Gateway (204, no CORS headers) where ingress-nginx passed it to the backend: browsers refuse the request either way; " +
			"a wildcard origin (https://*.example.com) matches any number of labels in Gateway API, one in ingress-nginx"})
	ruleUpstreamVhost = def(Rule{ID: "upstream-vhost", Input: "upstream-vhost", Outcome: Converted,
		Becomes: "URLRewrite hostname",
		Note:    "a port in the value cannot be expressed (upstream-vhost-port)"})
	ruleUpstreamVhostPort = def(Rule{ID: "upstream-vhost-port", Input: "upstream-vhost with a port", Outcome: Approximated,
		Becomes: "URLRewrite hostname without the port",
		Note:    "a hostname filter has no port: the backend sees the Host header without it"})
	ruleCustomHeaders = def(Rule{ID: "custom-headers", Input: "custom-headers", Outcome: Converted,
		Becomes: "ResponseHeaderModifier set, from the named ConfigMap's entries",
		Note:    "the ConfigMap must be among the objects read; a value with an nginx variable is not converted"})
	ruleCustomHeadersNotAllowed = def(Rule{ID: "custom-headers-not-allowed", Input: "a custom-headers entry the ConfigMap's global-allowed-response-headers does not name", Outcome: Converted,
		Becomes: "nothing",
		Note:    "ingress-nginx sets only the headers global-allowed-response-headers names (none by default), and so does the conversion"})
	ruleProxySetHeaders = def(Rule{ID: "proxy-set-headers", Input: "ConfigMap proxy-set-headers", Outcome: Converted,
		Becomes: "RequestHeaderModifier set on every HTTPRoute rule, from the named ConfigMap's entries",
		Note:    "the ConfigMap must be among the objects read; a value with an nginx variable is not converted"})
	ruleConfigMapMissing = def(Rule{ID: "configmap-not-read", Input: "custom-headers or ConfigMap proxy-set-headers naming a ConfigMap not read", Outcome: NotConverted,
		Note: "give the ConfigMap's manifest with the Ingresses (or read the cluster) to convert its headers"})
	ruleHeaderVariable = def(Rule{ID: "header-variable", Input: "a header value with an nginx variable ($host ...)", Outcome: NotConverted,
		Note: "Gateway API header values are literal"})

	ruleAuth = def(Rule{ID: "auth", Input: "auth-*", Outcome: Refused,
		Note: "basic, digest, external and client-certificate authentication have no Gateway API core equivalent: without --allow-insecure the Ingress's routes are not written"})
	ruleSourceRange = def(Rule{ID: "source-range", Input: "whitelist-source-range, allowlist-source-range, denylist-source-range", Outcome: Refused,
		Note: "Gateway API has no client address match: without --allow-insecure the Ingress's routes are not written"})
	ruleOtherSecurity = def(Rule{ID: "other-security", Input: "satisfy, enable-modsecurity and the other settings Causeway closes the Ingress for", Outcome: Refused,
		Note: "as auth: a protection Gateway API cannot express"})
	ruleConfigMapSecurity = def(Rule{ID: "configmap-security", Input: "ConfigMap whitelist-source-range, denylist-source-range, global-auth-url", Outcome: NotConverted,
		Note: "they protect every Ingress path; nothing in a route carries them, and whether Causeway's Gateway API front-end applies them to routes is not decided yet: until it is, treat the routes as unprotected"})
	ruleLimits = def(Rule{ID: "limits", Input: "limit-rps, limit-rpm, limit-connections, limit-burst-multiplier, limit-rate, limit-rate-after, limit-allowlist", Outcome: NotConverted,
		Note: "Gateway API has no rate or connection limits: the routes are written without them"})
	ruleSnippet = def(Rule{ID: "snippet", Input: "configuration-snippet, server-snippet", Outcome: NotConverted,
		Note: "raw nginx configuration is not converted (response headers added by a snippet included)"})

	ruleBackendGRPC = def(Rule{ID: "backend-protocol-grpc", Input: "backend-protocol: GRPC", Outcome: Converted,
		Becomes: "a GRPCRoute instead of the HTTPRoute; path / matches every method, /pkg.Service or /pkg.Service/ a service, /pkg.Service/Method (Exact) a method",
		Note:    "other paths cannot be expressed as gRPC matches (grpc-path), nor the HTTP-only settings (grpc-filter)"})
	ruleGRPCPath = def(Rule{ID: "grpc-path", Input: "a path of a GRPC Ingress that names no service or method", Outcome: NotConverted,
		Note: "GRPCRoute matches a service and a method, not a path: the path is not converted"})
	ruleGRPCFilter = def(Rule{ID: "grpc-filter", Input: "rewrite-target, redirects, app-root, CORS, upstream-vhost or timeouts on a GRPC Ingress", Outcome: NotConverted,
		Note: "a GRPCRoute has header filters and session persistence only"})
	ruleBackendTLS = def(Rule{ID: "backend-protocol-tls", Input: "backend-protocol: HTTPS or GRPCS, proxy-ssl-*", Outcome: NotConverted,
		Becomes: "none: needs a BackendTLSPolicy",
		Note: "a BackendTLSPolicy verifies the backend against a CA (a ConfigMap with ca.crt, or the system CAs) and a hostname; ingress-nginx by default does not verify. " +
			"Write one per Service with the CA and the name its certificate holds: until then the route speaks plain HTTP to the backend"})
	ruleBackendHTTP = def(Rule{ID: "backend-protocol-http", Input: "backend-protocol: HTTP", Outcome: Converted,
		Becomes: "nothing (the default)"})
	ruleAffinity = def(Rule{ID: "affinity-cookie", Input: "affinity: cookie, session-cookie-name, session-cookie-max-age, session-cookie-expires", Outcome: NotConverted,
		Note: "ingress-nginx's affinity is the Service's, one cookie for every path routed to it, where a rule's sessionPersistence (which Causeway serves) is a cookie of the rule's own, " +
			"with the rule's path: none is written, and the finding names the Service annotations (causeway.io/load-balance: sticky, causeway.io/sticky-cookie, causeway.io/sticky-max-age) " +
			"that keep the same stickiness for every route of the Service; write sessionPersistence on the rules instead for a session per rule"})
	ruleAffinityDetail = def(Rule{ID: "affinity-detail", Input: "affinity-mode, session-cookie-path, session-cookie-samesite, session-cookie-secure, session-cookie-change-on-failure", Outcome: NotConverted,
		Note: "session persistence does not name the cookie's attributes or the behaviour when the backend fails: the implementation's defaults apply"})

	ruleDefaultBackend = def(Rule{ID: "default-backend", Input: "spec.defaultBackend", Outcome: Approximated,
		Becomes: "an HTTPRoute `<ingress>-default-backend` without hostnames, one rule without matches, on the HTTP listener",
		Note:    "it answers requests no other route matches on HTTP; HTTPS would need a catch-all listener with a certificate"})
	ruleHostless = def(Rule{ID: "rule-without-host", Input: "spec.rules[].host empty", Outcome: Approximated,
		Becomes: "an HTTPRoute `<ingress>-any-host` without hostnames, on the HTTP listener",
		Note:    "ingress-nginx served these paths on HTTPS too, with its default certificate, which a listener cannot name"})
	ruleNoHTTP = def(Rule{ID: "rule-without-http", Input: "spec.rules[] with a host and no http", Outcome: Converted,
		Becomes: "nothing",
		Note:    "ingress-nginx answered the host from its default backend (404), as a Gateway answers a request no route matches"})
	rulePathShadowed = def(Rule{ID: "path-shadowed", Input: "a path of a host an older Ingress has the same path of", Outcome: NotConverted,
		Note: "ingress-nginx serves it from the oldest Ingress; Gateway API would rank two routes with the same match by their creation time, then their names, which a conversion cannot set: the younger Ingress's path is not written"})
	ruleNamedPort = def(Rule{ID: "named-port", Input: "service.port.name", Outcome: NotConverted,
		Note: "a backendRef needs the port number, which only the Service knows: the path is not converted (write the number)"})
	ruleTLS = def(Rule{ID: "tls", Input: "spec.tls", Outcome: Converted,
		Becomes: "a Gateway listener `https-<host>` (port 443, HTTPS, hostname) per host with certificateRefs to the Secret; a ReferenceGrant in the Ingress's namespace when the Gateway lives in another",
		Note:    "the oldest Ingress naming a host's certificate wins"})
	ruleTLSNoSecret = def(Rule{ID: "tls-without-secret", Input: "spec.tls without secretName, or without hosts", Outcome: NotConverted,
		Note: "ingress-nginx used its default certificate, which a listener cannot name; a tls entry without hosts names no listener hostname"})
	ruleTLSWildcardHost = def(Rule{ID: "tls-wildcard-host", Input: "a rule host that spec.tls names only through a wildcard (*.example.com)", Outcome: Approximated,
		Becomes: "the host's routes on the wildcard's HTTPS listener, with the ssl-redirect HTTPRoute",
		Note: "ingress-nginx serves such a host with the wildcard's certificate when it covers the host, and so redirects it to HTTPS, as the Gateway does; " +
			"Causeway serving the Ingress itself gives TLS only to the hosts spec.tls lists, so there the host has the default certificate and no redirect"})
	ruleTLSShadowed = def(Rule{ID: "tls-shadowed", Input: "spec.tls naming a host an older Ingress gave another Secret", Outcome: NotConverted,
		Note: "one listener per host: the older Ingress's Secret is used"})

	ruleSSLPassthrough = def(Rule{ID: "ssl-passthrough", Input: "ssl-passthrough", Outcome: Converted,
		Becomes: "a TLSRoute `<ingress>-<host>-passthrough` per host, to the Service of the rule's / path (else spec.defaultBackend), on a Gateway listener `tls-<host>` (port 443, TLS, Passthrough) in place of the host's HTTPS listener",
		Note:    "the host's spec.tls certificate is not used (the backend's is); its plain HTTP paths stay on the HTTP listener"})
	ruleSSLPassthroughNot = def(Rule{ID: "ssl-passthrough-not-converted", Input: "ssl-passthrough on a rule without host, without a / path or spec.defaultBackend, or on a host an older Ingress passes through", Outcome: NotConverted,
		Note: "TLS passthrough routes by server name to one Service: such a host is not passed through"})
	ruleNoEffect = def(Rule{ID: "no-effect", Input: "an annotation whose value asks for nothing (use-regex: false ...)", Outcome: Converted,
		Becomes: "nothing"})
	ruleInvalid = def(Rule{ID: "invalid", Input: "an annotation with a value Causeway refuses", Outcome: NotConverted,
		Note: "Causeway drops the setting too; `causeway migrate check` gives the grammar"})
	ruleOther = def(Rule{ID: "other", Input: "any other annotation (nginx.org/ and causeway.io/ included)", Outcome: NotConverted,
		Note: "no Gateway API equivalent is written; `causeway migrate check` says what Causeway does with it on an Ingress"})
)

// RulesMarkdown is the conversion table of docs/migrating-from-ingress-nginx.md.
func RulesMarkdown() string {
	var b strings.Builder
	b.WriteString("| rule | Ingress / ingress-nginx | becomes | outcome | notes |\n|---|---|---|---|---|\n")
	for _, r := range table {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", r.ID, mdCell(r.Input), mdCell(r.Becomes), r.Outcome, mdCell(r.Note))
	}
	return b.String()
}

// mdCell escapes a table cell's pipes (inside code spans too, as GitHub's
// tables ask) and its stars outside code spans.
func mdCell(s string) string {
	var b strings.Builder
	code := false
	for _, c := range s {
		switch {
		case c == '`':
			code = !code
		case c == '|':
			b.WriteString(`\`)
		case c == '*' && !code:
			b.WriteString(`\`)
		}
		b.WriteRune(c)
	}
	return b.String()
}
