package annotations

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// hostileValues are values that try to break out of nginx.conf quoting,
// inject directives or variables, or smuggle bytes. Every supported
// annotation of the groups tested here must refuse each of them.
var hostileValues = []string{
	``,
	` `,
	"\t",
	`"`,
	`'`,
	`a"b`,
	`;`,
	`x; return 200`,
	`}`,
	`{`,
	"a\nb",
	"a\rb",
	"a\x00b",
	"on\n",
	"true;",
	`$host`,
	`${x}`,
	`$(id)`,
	"`id`",
	`http://a.com/x$request_uri/y`,
	`a\b`,
	`\`,
	`http://a$host/`,
	"a\u202eb",
	"HTTP\u017f", // "ſ" folds to "s" in Unicode, not in ASCII
	strings.Repeat("a", 100000),
	`127.0.0.1;return 200`,
	"a.com\nserver {",
	`#comment`,
	`a b`,
	`%0a`,
	`../../etc/passwd`,
	`content_by_lua_block { os.exit() }`,
}

// testRef is the Ingress the tests parse annotations of.
var testRef = model.ObjectRef{Kind: "Ingress", Namespace: "default", Name: "web", UID: "uid-1"}

// parseNames runs ParseIngress on annotations given by their names after
// the default prefix.
func parseNames(ann map[string]string) (Result, []model.Problem) {
	full := make(map[string]string, len(ann))
	for k, v := range ann {
		full[DefaultPrefix+"/"+k] = v
	}
	return ParseIngress(testRef, full, DefaultPrefix, nil)
}

// key is the full key of an annotation name.
func key(name string) string { return DefaultPrefix + "/" + name }

// problem is an expected Problem: its reason, the annotation it names, and
// whether it closes the Ingress's paths.
type problem struct {
	reason, name string
	closed       bool
}

func invalid(name string) problem { return problem{reason: model.ReasonInvalidAnnotation, name: name} }
func ignored(name string) problem {
	return problem{reason: model.ReasonUnsupportedAnnotation, name: name}
}
func closes(name string) problem {
	return problem{reason: model.ReasonInvalidAnnotation, name: name, closed: true}
}

// names reports whether a Problem message names the annotation (and not
// merely one whose name it is a prefix of).
func names(msg, name string) bool {
	k := "annotation " + key(name)
	return strings.Contains(msg, k+" ") || strings.Contains(msg, k+":")
}

// checkProblems compares problems with want, in order, and checks that
// every message is printable on one line.
func checkProblems(t *testing.T, got []model.Problem, want []problem) {
	t.Helper()
	var g, w []string
	for _, p := range got {
		g = append(g, p.Reason+" "+p.Message)
	}
	for _, p := range want {
		w = append(w, p.reason+" "+p.name)
	}
	if len(got) != len(want) {
		t.Fatalf("problems:\n  %s\nwant:\n  %s", strings.Join(g, "\n  "), strings.Join(w, "\n  "))
	}
	for i, p := range got {
		if p.Reason != want[i].reason || !names(p.Message, want[i].name) || p.Object != testRef {
			t.Fatalf("problem %d: %s %q on %v; want %s naming %s", i, p.Reason, p.Message, p.Object, want[i].reason, key(want[i].name))
		}
		if closed := strings.Contains(p.Message, "answers 503"); closed != want[i].closed {
			t.Fatalf("problem %d: %q: closes the paths = %v, want %v", i, p.Message, closed, want[i].closed)
		}
		if p.Rejected {
			t.Fatalf("problem %d: %v rejects the Ingress", i, p)
		}
		checkMessage(t, p.Message)
	}
}

// checkClosed compares the Result's FailClosed keys with the names of the
// closing Problems wanted.
func checkClosed(t *testing.T, res Result, want []problem) {
	t.Helper()
	var w []string
	for _, p := range want {
		if p.closed {
			w = append(w, key(p.name))
		}
	}
	slices.Sort(w)
	if !slices.Equal(res.FailClosed, w) {
		t.Fatalf("FailClosed = %v, want %v", res.FailClosed, w)
	}
}

// hostileTarget is an annotation the hostile values are tried on.
type hostileTarget struct {
	name string
	// context are further annotations that make name take effect.
	context map[string]string
	// field is the part of the Result the value would reach.
	field func(*Result) any
	// drops: a refused value turns the whole field off, rather than
	// leaving it as context alone makes it.
	drops bool
	// closed: a refused value is security-relevant and fails closed.
	closed bool
	// inert are hostile values the annotation accepts, with why that is
	// safe.
	inert map[string]string
}

var (
	corsField     = func(r *Result) any { return r.Location.CORS }
	protocolField = func(r *Result) any { return r.Location.Protocol }
	tlsField      = func(r *Result) any { return r.Location.UpstreamTLS }
	secretField   = func(r *Result) any { return r.UpstreamTLSSecret }
	balanceField  = func(r *Result) any { return r.Balance }
	errorsField   = func(r *Result) any { return r.Location.Errors }
	defaultField  = func(r *Result) any { return r.DefaultBackend }
	mirrorField   = func(r *Result) any { return r.Location.Mirrors }
	accessField   = func(r *Result) any { return r.Location.Access }
	authField     = func(r *Result) any { return r.BasicAuthSecret }
	satisfyField  = func(r *Result) any { return r.Location.Satisfy }
	extAuthField  = func(r *Result) any { return r.Location.ExternalAuth }
	noGlobalField = func(r *Result) any { return r.NoGlobalAuth }
	authHdrField  = func(r *Result) any { return r.AuthProxySetHeaders }
)

var (
	withCORS      = map[string]string{"enable-cors": "true"}
	withHTTPS     = map[string]string{"backend-protocol": "HTTPS", "proxy-ssl-secret": "default/backend-ca"}
	withVerify    = map[string]string{"backend-protocol": "HTTPS", "proxy-ssl-verify": "on"}
	withAffinity  = map[string]string{"affinity": "cookie"}
	withMirror    = map[string]string{"mirror-target": "https://mirror.example.com$request_uri"}
	withBasic     = map[string]string{"auth-type": "basic", "auth-secret": "users"}
	withExtAuth   = map[string]string{"auth-url": "https://auth.example.com/check"}
	withCacheKey  = map[string]string{"auth-url": "https://auth.example.com/check", "auth-cache-key": "$http_authorization"}
	withKeepalive = map[string]string{"auth-url": "https://auth.example.com/check", "auth-keepalive": "8"}
)

var hostileTargets = []hostileTarget{
	{name: "enable-cors", field: corsField},
	{name: "cors-allow-origin", context: withCORS, field: corsField, drops: true},
	{name: "cors-allow-methods", context: withCORS, field: corsField},
	{name: "cors-allow-headers", context: withCORS, field: corsField},
	{name: "cors-expose-headers", context: withCORS, field: corsField},
	{name: "cors-allow-credentials", context: withCORS, field: corsField},
	{name: "cors-max-age", context: withCORS, field: corsField},

	{name: "backend-protocol", field: protocolField},
	{name: "proxy-ssl-secret", context: map[string]string{"backend-protocol": "HTTPS"}, field: secretField},
	{name: "proxy-ssl-secret", context: withVerify, field: tlsField, drops: true, closed: true},
	{name: "proxy-ssl-verify", context: withHTTPS, field: tlsField, drops: true, closed: true},
	{name: "proxy-ssl-verify-depth", context: withHTTPS, field: tlsField},
	{name: "proxy-ssl-name", context: withHTTPS, field: tlsField},
	{name: "proxy-ssl-server-name", context: withHTTPS, field: tlsField},
	{name: "proxy-ssl-protocols", context: withHTTPS, field: tlsField},
	{name: "proxy-ssl-ciphers", context: withHTTPS, field: tlsField},

	{name: "load-balance", field: balanceField},
	{name: "upstream-hash-by", field: balanceField, inert: map[string]string{
		"$host": "a hash key variable from the allow-list; it is handed to the Lua balancer as data and never printed into nginx.conf",
	}},
	{name: "affinity", field: balanceField},
	{name: "affinity-mode", context: withAffinity, field: balanceField},
	{name: "session-cookie-name", context: withAffinity, field: balanceField},
	{name: "session-cookie-path", context: withAffinity, field: balanceField},
	{name: "session-cookie-max-age", context: withAffinity, field: balanceField},
	{name: "session-cookie-expires", context: withAffinity, field: balanceField},
	{name: "session-cookie-samesite", context: withAffinity, field: balanceField},
	{name: "session-cookie-secure", context: withAffinity, field: balanceField},
	{name: "session-cookie-change-on-failure", context: withAffinity, field: balanceField},

	{name: "custom-http-errors", field: errorsField},
	{name: "default-backend", field: defaultField},

	{name: "mirror-target", field: mirrorField},
	{name: "mirror-host", context: withMirror, field: mirrorField},
	{name: "mirror-request-body", context: withMirror, field: mirrorField},

	{name: "allowlist-source-range", field: accessField, drops: true, closed: true},
	{name: "whitelist-source-range", field: accessField, drops: true, closed: true},
	{name: "denylist-source-range", field: accessField, drops: true, closed: true},
	{name: "denylist-source-range", context: map[string]string{"allowlist-source-range": "10.0.0.0/8"}, field: accessField, drops: true, closed: true},

	{name: "auth-type", context: map[string]string{"auth-secret": "users"}, field: authField, drops: true, closed: true},
	{name: "auth-secret", context: map[string]string{"auth-type": "basic"}, field: authField, drops: true, closed: true},
	{name: "auth-secret-type", context: withBasic, field: authField, drops: true, closed: true},
	{name: "auth-realm", context: withBasic, field: authField, drops: true, closed: true, inert: realmInert},
	{name: "satisfy", field: satisfyField, drops: true, closed: true},

	{name: "auth-url", field: extAuthField, drops: true, closed: true},
	{name: "auth-method", context: withExtAuth, field: extAuthField, drops: true, closed: true},
	{name: "auth-response-headers", context: withExtAuth, field: extAuthField, drops: true, closed: true},
	{name: "auth-signin", context: withExtAuth, field: extAuthField},
	{name: "auth-signin-redirect-param", context: withExtAuth, field: extAuthField},
	{name: "auth-request-redirect", context: withExtAuth, field: extAuthField, inert: headerValueInert},
	{name: "auth-cache-key", context: withExtAuth, field: extAuthField, inert: cacheKeyInert},
	{name: "auth-cache-duration", context: withCacheKey, field: extAuthField},
	{name: "auth-always-set-cookie", context: withExtAuth, field: extAuthField},
	{name: "auth-keepalive", context: withExtAuth, field: extAuthField},
	{name: "auth-keepalive-requests", context: withKeepalive, field: extAuthField},
	{name: "auth-keepalive-timeout", context: withKeepalive, field: extAuthField},
	{name: "auth-keepalive-share-vars", context: withKeepalive, field: extAuthField},
	{name: "auth-proxy-set-headers", context: withExtAuth, field: authHdrField, drops: true, closed: true},
	{name: "enable-global-auth", field: noGlobalField},
}

// cacheKeyInert are the hostile values a cache key accepts: allowlisted
// variables ($host, $request_uri) and plain literals, which render prints
// braced inside one quoted token.
var cacheKeyInert = func() map[string]string {
	out := map[string]string{}
	for _, v := range hostileValues {
		if _, err := model.ParseAuthCacheKey(v); err == nil {
			out[v] = "allowlisted variables and literals of letters, digits and -_.:/|,=@+"
		}
	}
	return out
}()

// headerValueInert are the hostile values a header value accepts:
// visible ASCII and inner spaces without '$', quotes, '\' or braces,
// printed through render.Quote.
var headerValueInert = func() map[string]string {
	out := map[string]string{}
	for _, v := range hostileValues {
		if _, err := model.ParseHeaderValue(v); err == nil {
			out[v] = "a header value without variables, quotes or braces, quoted by render.Quote"
		}
	}
	return out
}()

// realmInert are the hostile values auth-realm accepts: printable ASCII
// without a quote, backslash or "$", which render.Quote prints as they are.
var realmInert = func() map[string]string {
	out := map[string]string{}
	for _, v := range hostileValues {
		if _, err := model.ParseRealm(v); err == nil {
			out[v] = "printable ASCII without '\"', '\\' or '$', quoted by render.Quote and sent as is in WWW-Authenticate"
		}
	}
	return out
}()

// TestHostileValuesRefused tries every hostile value on every supported
// annotation of these groups: each is refused with a Problem naming the
// annotation (failing closed where security-relevant), and the Result is
// what the context alone gives, or nothing where a refused value turns
// the feature off.
func TestHostileValuesRefused(t *testing.T) {
	for _, tg := range hostileTargets {
		base, _ := parseNames(tg.context)
		for i, v := range hostileValues {
			t.Run(fmt.Sprintf("%s/%d", tg.name, i), func(t *testing.T) {
				ann := map[string]string{tg.name: v}
				for k, cv := range tg.context {
					ann[k] = cv
				}
				res, problems := parseNames(ann)
				if why, ok := tg.inert[v]; ok {
					if len(problems) != 0 {
						t.Fatalf("inert value %q (%s): problems %v", v, why, problems)
					}
					return
				}
				var p *model.Problem
				for i := range problems {
					if names(problems[i].Message, tg.name) {
						p = &problems[i]
						break
					}
				}
				if p == nil || p.Reason != model.ReasonInvalidAnnotation {
					t.Fatalf("value %q: problems %v, want an InvalidAnnotation naming %s", model.Truncate(v), problems, key(tg.name))
				}
				if strings.ContainsFunc(p.Message, func(r rune) bool { return r < ' ' || r == 0x7f || r == 0x202e }) {
					t.Fatalf("message %q echoes a control character", p.Message)
				}
				if got := slices.Contains(res.FailClosed, key(tg.name)); got != tg.closed {
					t.Fatalf("value %q: FailClosed = %v, want %s closed: %v", model.Truncate(v), res.FailClosed, tg.name, tg.closed)
				}
				want := tg.field(&base)
				if tg.drops {
					want = reflect.Zero(reflect.TypeOf(tg.field(&res))).Interface()
				}
				if got := tg.field(&res); !reflect.DeepEqual(got, want) {
					t.Fatalf("value %q reached the Result: %#v, want %#v", model.Truncate(v), got, want)
				}
			})
		}
	}
}

// TestHostileTargetsCoverGroups keeps hostileTargets in step with the
// groups: every supported annotation is tried.
func TestHostileTargetsCoverGroups(t *testing.T) {
	for _, g := range []Group{corsGroup, backendGroup, balanceGroup, errorsGroup, mirrorGroup, authGroup, extAuthGroup} {
		for _, a := range g.Annotations {
			if !slices.ContainsFunc(hostileTargets, func(tg hostileTarget) bool { return tg.name == a.Name }) {
				t.Errorf("%s: no hostile values tried", a.Name)
			}
			if a.Default == "" || a.Grammar == "" || a.Scope == "" {
				t.Errorf("%s: Default, Grammar and Scope must be documented", a.Name)
			}
		}
	}
}
