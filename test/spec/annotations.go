package spec

import (
	"fmt"
	"strings"
)

// The ingress-nginx annotation behaviours, as data. Each row is a set of
// Ingresses (in the "default" namespace, every referenced Service backed by
// one echo endpoint unless listed in Empty), one request and what must come
// back. The build tests evaluate every row on the Model with Eval; the
// integration tests send every row's request to a real nginx. Both compare
// with Want, so the model, the renderer and this table must agree.

// Ingress is one Ingress of a row.
type Ingress struct {
	Name string
	// Host is the rule host ("" for a rule without host).
	Host  string
	Paths []Route
	// Annotations are keyed by name without the ingress-nginx prefix.
	Annotations map[string]string
	// TLS lists Host in spec.tls (with the controller's default
	// certificate).
	TLS bool
}

// Route is one path of an Ingress and the Service behind it.
type Route struct {
	Path, Type, Service string
}

// Request is what the client sends. Scheme defaults to http and Method to
// GET.
type Request struct {
	Method, Scheme, Host, Path string
	Header                     map[string]string
	// Body is a number of bytes of request body.
	Body int
	// From is the client's address, the TCP peer nginx sees; "" is
	// 127.0.0.1. The integration tier sends from it.
	From string
}

// Response is what comes back; in Want, empty fields are not checked.
type Response struct {
	Status int
	// Service is the echo Service that answered ("" when nginx did).
	Service string
	// URI is the path and query the backend received, Host its Host
	// header.
	URI, Host string
	// Location is the redirect target; {http} and {https} stand for the
	// listeners' ports.
	Location string
	// Header are response headers with their exact values; HeaderPrefix
	// response headers starting with a value; Absent headers that must
	// not be sent.
	Header       map[string]string
	HeaderPrefix map[string]string
	Absent       []string
	// Upstream are request headers the backend must have received.
	Upstream map[string]string
}

// AnnotationCase is one row.
type AnnotationCase struct {
	Name      string
	Ingresses []Ingress
	// Empty lists Services without ready endpoints.
	Empty []string
	// ConfigMaps are ConfigMaps in the namespace, by name.
	ConfigMaps map[string]map[string]string
	// Secrets are Opaque Secrets in the namespace, by name.
	Secrets map[string]map[string]string
	// Config are keys of the controller's ConfigMap the row needs. Rows
	// served by one controller get the union (list values joined).
	Config  map[string]string
	Request Request
	Want    Response
	// Problems are the reasons of the Problems the row's objects raise,
	// in order.
	Problems []string

	// namespace is set by In.
	namespace string
}

func ann(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func one(host, path, typ, svc string, annotations map[string]string) []Ingress {
	return []Ingress{{Name: "web", Host: host, Paths: []Route{{path, typ, svc}}, Annotations: annotations}}
}

// realIPRows trusts X-Forwarded-For from the proxy at 127.0.0.2 only.
var realIPRows = map[string]string{"use-forwarded-headers": "true", "proxy-real-ip-cidr": "127.0.0.2"}

func get(host, path string) Request { return Request{Host: host, Path: path} }

// AnnotationTable is one row per annotation behaviour.
var AnnotationTable = []AnnotationCase{
	// Regular expressions and rewrites.
	{Name: "use-regex matches a regex path",
		Ingresses: one("re.test", "/api/v[0-9]+/users", "Prefix", "users", ann("use-regex", "true")),
		Request:   get("re.test", "/api/v2/users/7"), Want: Response{Status: 200, Service: "users", URI: "/api/v2/users/7"}},
	{Name: "use-regex: a non-matching path falls to the default",
		Ingresses: one("re.test", "/api/v[0-9]+/users", "Prefix", "users", ann("use-regex", "true")),
		Request:   get("re.test", "/api/vx/users"), Want: Response{Status: 404}},
	{Name: "use-regex matches case-insensitively",
		Ingresses: one("re.test", "/api/v[0-9]+/users", "Prefix", "users", ann("use-regex", "true")),
		Request:   get("re.test", "/API/V3/Users"), Want: Response{Status: 200, Service: "users"}},
	{Name: "rewrite-target with capture groups keeps the query",
		Ingresses: one("rw.test", "/something(/|$)(.*)", "ImplementationSpecific", "app", ann("use-regex", "true", "rewrite-target", "/$2")),
		Request:   get("rw.test", "/something/new/thing?x=1"), Want: Response{Status: 200, Service: "app", URI: "/new/thing?x=1"}},
	{Name: "rewrite-target of the bare prefix",
		Ingresses: one("rw.test", "/something(/|$)(.*)", "ImplementationSpecific", "app", ann("rewrite-target", "/$2")),
		Request:   get("rw.test", "/something"), Want: Response{Status: 200, Service: "app", URI: "/"}},
	{Name: "x-forwarded-prefix is sent with a rewrite",
		Ingresses: one("rw.test", "/api(/|$)(.*)", "Prefix", "app", ann("rewrite-target", "/$2", "x-forwarded-prefix", "/api")),
		Request:   get("rw.test", "/api/items"), Want: Response{Status: 200, Service: "app", URI: "/items", Upstream: map[string]string{"X-Forwarded-Prefix": "/api"}}},
	{Name: "regex mode spreads to every Ingress of the host: the longer regex wins",
		Ingresses: []Ingress{
			{Name: "plain", Host: "mix.test", Paths: []Route{{"/foo", "Prefix", "plain"}}},
			{Name: "regex", Host: "mix.test", Paths: []Route{{"/foo/bar/[a-z]{3}", "Prefix", "regex"}}, Annotations: ann("use-regex", "true")},
		},
		Request: get("mix.test", "/foo/bar/baz"), Want: Response{Status: 200, Service: "regex"}},
	{Name: "regex mode spreads to every Ingress of the host: plain prefixes become case-insensitive",
		Ingresses: []Ingress{
			{Name: "plain", Host: "mix.test", Paths: []Route{{"/foo", "Prefix", "plain"}}},
			{Name: "regex", Host: "mix.test", Paths: []Route{{"/foo/bar/[a-z]{3}", "Prefix", "regex"}}, Annotations: ann("use-regex", "true")},
		},
		Request: get("mix.test", "/FOO/x"), Want: Response{Status: 200, Service: "plain"}},
	{Name: "app-root redirects the root",
		Ingresses: one("root.test", "/", "Prefix", "app", ann("app-root", "/app")),
		Request:   get("root.test", "/"), Want: Response{Status: 302, Location: "http://root.test/app"}},
	{Name: "app-root leaves other paths alone",
		Ingresses: one("root.test", "/", "Prefix", "app", ann("app-root", "/app")),
		Request:   get("root.test", "/app/page"), Want: Response{Status: 200, Service: "app"}},

	// Redirects.
	{Name: "permanent-redirect answers 301",
		Ingresses: one("moved.test", "/", "Prefix", "app", ann("permanent-redirect", "https://example.org/new")),
		Request:   get("moved.test", "/old"), Want: Response{Status: 301, Location: "https://example.org/new"}},
	{Name: "permanent-redirect-code changes the code",
		Ingresses: one("moved.test", "/", "Prefix", "app", ann("permanent-redirect", "https://example.org/new", "permanent-redirect-code", "308")),
		Request:   get("moved.test", "/old"), Want: Response{Status: 308, Location: "https://example.org/new"}},
	{Name: "temporal-redirect answers 302",
		Ingresses: one("moved.test", "/", "Prefix", "app", ann("temporal-redirect", "https://example.org/maintenance")),
		Request:   get("moved.test", "/"), Want: Response{Status: 302, Location: "https://example.org/maintenance"}},
	{Name: "a TLS host redirects HTTP to HTTPS, dropping a trailing slash",
		Ingresses: []Ingress{{Name: "web", Host: "tls.test", Paths: []Route{{"/", "Prefix", "app"}}, TLS: true}},
		Request:   get("tls.test", "/a/"), Want: Response{Status: 308, Location: "https://tls.test:{https}/a"}},
	{Name: "preserve-trailing-slash keeps it",
		Ingresses: []Ingress{{Name: "web", Host: "tls.test", Paths: []Route{{"/", "Prefix", "app"}}, TLS: true, Annotations: ann("preserve-trailing-slash", "true")}},
		Request:   get("tls.test", "/a/"), Want: Response{Status: 308, Location: "https://tls.test:{https}/a/"}},
	{Name: "ssl-redirect false serves HTTP on a TLS host",
		Ingresses: []Ingress{{Name: "web", Host: "tls.test", Paths: []Route{{"/", "Prefix", "app"}}, TLS: true, Annotations: ann("ssl-redirect", "false")}},
		Request:   get("tls.test", "/a"), Want: Response{Status: 200, Service: "app"}},
	{Name: "force-ssl-redirect redirects a host without TLS",
		Ingresses: one("plain.test", "/", "Prefix", "app", ann("force-ssl-redirect", "true")),
		Request:   get("plain.test", "/x"), Want: Response{Status: 308, Location: "https://plain.test:{https}/x"}},
	{Name: "from-to-www-redirect sends the www twin to the host",
		Ingresses: one("site.test", "/", "Prefix", "app", ann("from-to-www-redirect", "true")),
		Request:   get("www.site.test", "/page"), Want: Response{Status: 308, Location: "http://site.test:{http}/page"}},
	{Name: "server-alias serves another name",
		Ingresses: one("site.test", "/", "Prefix", "app", ann("server-alias", "alias.test, other.test")),
		Request:   get("other.test", "/x"), Want: Response{Status: 200, Service: "app"}},
	{Name: "server-level settings: the oldest Ingress of the host wins",
		Ingresses: []Ingress{
			{Name: "a-old", Host: "two.test", Paths: []Route{{"/", "Prefix", "old"}}, Annotations: ann("app-root", "/old")},
			{Name: "b-young", Host: "two.test", Paths: []Route{{"/y", "Prefix", "young"}}, Annotations: ann("app-root", "/young")},
		},
		Request: get("two.test", "/"), Want: Response{Status: 302, Location: "http://two.test/old"}, Problems: []string{"Collision"}},

	// Proxy settings.
	{Name: "proxy-body-size refuses a larger body",
		Ingresses: one("body.test", "/", "Prefix", "app", ann("proxy-body-size", "1k")),
		Request:   Request{Method: "POST", Host: "body.test", Path: "/", Body: 4096}, Want: Response{Status: 413}},
	{Name: "proxy-body-size lets a smaller body through",
		Ingresses: one("body.test", "/", "Prefix", "app", ann("proxy-body-size", "8k")),
		Request:   Request{Method: "POST", Host: "body.test", Path: "/", Body: 4096}, Want: Response{Status: 200, Service: "app"}},
	{Name: "an invalid value drops only that setting",
		Ingresses: one("body.test", "/", "Prefix", "app", ann("proxy-body-size", "1k;evil", "upstream-vhost", "inner.test")),
		Request:   Request{Method: "POST", Host: "body.test", Path: "/", Body: 4096}, Want: Response{Status: 200, Service: "app", Host: "inner.test"}, Problems: []string{"InvalidAnnotation"}},
	{Name: "upstream-vhost changes the Host the backend sees",
		Ingresses: one("vhost.test", "/", "Prefix", "app", ann("upstream-vhost", "inner.test")),
		Request:   get("vhost.test", "/"), Want: Response{Status: 200, Service: "app", Host: "inner.test"}},
	{Name: "custom-headers add the ConfigMap's headers",
		Ingresses:  one("hdr.test", "/", "Prefix", "app", ann("custom-headers", "default/extra-headers")),
		ConfigMaps: map[string]map[string]string{"extra-headers": {"X-Frame-Options": "DENY", "Strict-Transport-Security": "max-age=300; includeSubDomains"}},
		Config:     map[string]string{"global-allowed-response-headers": "X-Frame-Options, Strict-Transport-Security"},
		Request:    get("hdr.test", "/"), Want: Response{Status: 200, Service: "app", Header: map[string]string{"X-Frame-Options": "DENY", "Strict-Transport-Security": "max-age=300; includeSubDomains"}}},

	// CORS.
	{Name: "enable-cors answers a preflight",
		Ingresses: one("cors.test", "/", "Prefix", "app", ann("enable-cors", "true")),
		Request:   Request{Method: "OPTIONS", Host: "cors.test", Path: "/api", Header: map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "PUT"}},
		Want: Response{Status: 204, Header: map[string]string{"Access-Control-Allow-Origin": "*",
			"Access-Control-Allow-Methods": "GET, PUT, POST, DELETE, PATCH, OPTIONS", "Access-Control-Max-Age": "1728000"}}},
	{Name: "enable-cors adds the origin header to a request",
		Ingresses: one("cors.test", "/", "Prefix", "app", ann("enable-cors", "true")),
		Request:   Request{Host: "cors.test", Path: "/api", Header: map[string]string{"Origin": "https://app.example.com"}},
		Want:      Response{Status: 200, Service: "app", Header: map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Credentials": "true"}}},
	{Name: "cors-allow-origin echoes a matching wildcard origin",
		Ingresses: one("cors.test", "/", "Prefix", "app", ann("enable-cors", "true", "cors-allow-origin", "https://*.example.com, https://other.test")),
		Request:   Request{Host: "cors.test", Path: "/", Header: map[string]string{"Origin": "https://app.example.com"}},
		Want:      Response{Status: 200, Service: "app", Header: map[string]string{"Access-Control-Allow-Origin": "https://app.example.com"}}},
	// Not a .test origin: In moves .test names in annotations into the
	// row's namespace, not those in request headers.
	{Name: "cors-allow-origin echoes the second origin of a list",
		Ingresses: one("cors.test", "/", "Prefix", "app", ann("enable-cors", "true", "cors-allow-origin", "https://*.example.com, https://other.example.org")),
		Request:   Request{Host: "cors.test", Path: "/", Header: map[string]string{"Origin": "https://other.example.org"}},
		Want:      Response{Status: 200, Service: "app", Header: map[string]string{"Access-Control-Allow-Origin": "https://other.example.org"}}},
	// Origins are matched a line of alternatives at a time: forty of
	// these take several lines.
	{Name: "cors-allow-origin echoes the last of forty origins",
		Ingresses: one("cors.test", "/", "Prefix", "app", ann("enable-cors", "true", "cors-allow-origin", corsOrigins(40))),
		Request:   Request{Host: "cors.test", Path: "/", Header: map[string]string{"Origin": "https://frontend-39.tenant-39.example.net"}},
		Want:      Response{Status: 200, Service: "app", Header: map[string]string{"Access-Control-Allow-Origin": "https://frontend-39.tenant-39.example.net"}}},
	{Name: "cors-allow-origin: forty origins, none of them",
		Ingresses: one("cors.test", "/", "Prefix", "app", ann("enable-cors", "true", "cors-allow-origin", corsOrigins(40))),
		Request:   Request{Host: "cors.test", Path: "/", Header: map[string]string{"Origin": "https://frontend-40.tenant-40.example.net"}},
		Want:      Response{Status: 200, Service: "app", Absent: []string{"Access-Control-Allow-Origin"}}},
	{Name: "cors-allow-origin sends nothing to another origin",
		Ingresses: one("cors.test", "/", "Prefix", "app", ann("enable-cors", "true", "cors-allow-origin", "https://*.example.com")),
		Request:   Request{Host: "cors.test", Path: "/", Header: map[string]string{"Origin": "https://evil.test"}},
		Want:      Response{Status: 200, Service: "app", Absent: []string{"Access-Control-Allow-Origin"}}},
	{Name: "a wildcard origin matches one label only",
		Ingresses: one("cors.test", "/", "Prefix", "app", ann("enable-cors", "true", "cors-allow-origin", "https://*.example.com")),
		Request:   Request{Host: "cors.test", Path: "/", Header: map[string]string{"Origin": "https://a.b.example.com"}},
		Want:      Response{Status: 200, Service: "app", Absent: []string{"Access-Control-Allow-Origin"}}},
	{Name: "cors-allow-origin: an allowed origin also gets the credentials header",
		Ingresses: one("cors.test", "/", "Prefix", "app", ann("enable-cors", "true", "cors-allow-origin", "https://*.example.com")),
		Request:   Request{Host: "cors.test", Path: "/", Header: map[string]string{"Origin": "https://app.example.com"}},
		Want:      Response{Status: 200, Service: "app", Header: map[string]string{"Access-Control-Allow-Origin": "https://app.example.com", "Access-Control-Allow-Credentials": "true"}}},
	{Name: "cors-allow-origin: another origin gets no credentials header",
		Ingresses: one("cors.test", "/", "Prefix", "app", ann("enable-cors", "true", "cors-allow-origin", "https://*.example.com")),
		Request:   Request{Host: "cors.test", Path: "/", Header: map[string]string{"Origin": "https://evil.test"}},
		Want:      Response{Status: 200, Service: "app", Absent: []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Credentials"}}},
	{Name: "cors-expose-headers: an allowed listed origin gets them",
		Ingresses: one("cors.test", "/", "Prefix", "app", ann("enable-cors", "true", "cors-allow-origin", "https://*.example.com", "cors-expose-headers", "X-Total")),
		Request:   Request{Host: "cors.test", Path: "/", Header: map[string]string{"Origin": "https://app.example.com"}},
		Want:      Response{Status: 200, Service: "app", Header: map[string]string{"Access-Control-Allow-Origin": "https://app.example.com", "Access-Control-Expose-Headers": "X-Total"}}},
	{Name: "cors-expose-headers: another origin gets none",
		Ingresses: one("cors.test", "/", "Prefix", "app", ann("enable-cors", "true", "cors-allow-origin", "https://*.example.com", "cors-expose-headers", "X-Total")),
		Request:   Request{Host: "cors.test", Path: "/", Header: map[string]string{"Origin": "https://evil.test"}},
		Want:      Response{Status: 200, Service: "app", Absent: []string{"Access-Control-Allow-Origin", "Access-Control-Expose-Headers"}}},
	{Name: "cors-expose-headers: any origin gets them",
		Ingresses: one("cors.test", "/", "Prefix", "app", ann("enable-cors", "true", "cors-expose-headers", "X-Total")),
		Request:   Request{Host: "cors.test", Path: "/", Header: map[string]string{"Origin": "https://app.example.com"}},
		Want:      Response{Status: 200, Service: "app", Header: map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": "X-Total"}}},
	{Name: "cors-allow-origin: a preflight from an allowed origin is answered",
		Ingresses: one("cors.test", "/", "Prefix", "app", ann("enable-cors", "true", "cors-allow-origin", "https://*.example.com", "cors-allow-methods", "GET, PUT")),
		Request:   Request{Method: "OPTIONS", Host: "cors.test", Path: "/", Header: map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "PUT"}},
		Want: Response{Status: 204, Header: map[string]string{"Access-Control-Allow-Origin": "https://app.example.com",
			"Access-Control-Allow-Credentials": "true", "Access-Control-Allow-Methods": "GET, PUT"}}},
	{Name: "cors-allow-origin: a preflight from another origin goes to the backend",
		Ingresses: one("cors.test", "/", "Prefix", "app", ann("enable-cors", "true", "cors-allow-origin", "https://*.example.com")),
		Request:   Request{Method: "OPTIONS", Host: "cors.test", Path: "/", Header: map[string]string{"Origin": "https://evil.test", "Access-Control-Request-Method": "PUT"}},
		Want:      Response{Status: 200, Service: "app", Absent: []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Methods"}}},
	{Name: "enable-cors keeps the location's other response headers",
		Ingresses:  one("cors.test", "/", "Prefix", "app", ann("enable-cors", "true", "custom-headers", "default/extra-headers")),
		ConfigMaps: map[string]map[string]string{"extra-headers": {"X-Frame-Options": "DENY"}},
		Config:     map[string]string{"global-allowed-response-headers": "X-Frame-Options"},
		Request:    Request{Host: "cors.test", Path: "/", Header: map[string]string{"Origin": "https://app.example.com"}},
		Want:       Response{Status: 200, Service: "app", Header: map[string]string{"Access-Control-Allow-Origin": "*", "X-Frame-Options": "DENY"}}},

	// Balancing.
	{Name: "affinity cookie sets the session cookie",
		Ingresses: one("sticky.test", "/", "Prefix", "app", ann("affinity", "cookie", "session-cookie-name", "route")),
		Request:   get("sticky.test", "/"), Want: Response{Status: 200, Service: "app", HeaderPrefix: map[string]string{"Set-Cookie": "route="}}},

	// Errors and defaults.
	{Name: "default-backend answers while the Service has no endpoint",
		Ingresses: one("fb.test", "/", "Prefix", "app", ann("default-backend", "fallback")),
		Empty:     []string{"app"},
		Request:   get("fb.test", "/x"), Want: Response{Status: 200, Service: "fallback"}},
	{Name: "custom-http-errors sends the error to the default backend with ingress-nginx's headers",
		Ingresses: one("err.test", "/", "Prefix", "app", ann("custom-http-errors", "503,404", "default-backend", "errors")),
		Request:   get("err.test", "/_status/503/page"),
		Want: Response{Status: 200, Service: "errors", URI: "/", Upstream: map[string]string{
			"X-Code": "503", "X-Original-URI": "/_status/503/page", "X-Namespace": "default",
			"X-Ingress-Name": "web", "X-Service-Name": "app", "X-Service-Port": "80"}}},
	{Name: "custom-http-errors leaves other statuses alone",
		Ingresses: one("err.test", "/", "Prefix", "app", ann("custom-http-errors", "503", "default-backend", "errors")),
		Request:   get("err.test", "/_status/500/page"), Want: Response{Status: 500, Service: "app"}},

	{Name: "custom-headers sets only the headers the operator allows",
		Ingresses:  one("hdr.test", "/", "Prefix", "app", ann("custom-headers", "default/extra-headers")),
		ConfigMaps: map[string]map[string]string{"extra-headers": {"X-Frame-Options": "DENY", "X-Powered-By": "me"}},
		Config:     map[string]string{"global-allowed-response-headers": "X-Frame-Options"},
		Request:    get("hdr.test", "/"), Want: Response{Status: 200, Service: "app", Header: map[string]string{"X-Frame-Options": "DENY"}, Absent: []string{"X-Powered-By"}},
		Problems: []string{"InvalidAnnotation"}},

	// Source address lists. Clients are 127.x addresses, which the
	// integration tier sends from; the real-IP rows trust 127.0.0.2 as a
	// proxy.
	{Name: "allowlist-source-range lets a listed client in",
		Ingresses: one("acl.test", "/", "Prefix", "app", ann("allowlist-source-range", "192.0.2.0/24, 127.0.0.1")),
		Request:   get("acl.test", "/"), Want: Response{Status: 200, Service: "app"}},
	{Name: "allowlist-source-range refuses another client",
		Ingresses: one("acl.test", "/", "Prefix", "app", ann("allowlist-source-range", "127.0.0.1")),
		Request:   Request{Host: "acl.test", Path: "/", From: "127.0.0.5"}, Want: Response{Status: 403}},
	{Name: "a redirect under an allowlist answers a listed client",
		Ingresses: one("acl.test", "/", "Prefix", "app", ann("permanent-redirect", "https://example.org/new", "allowlist-source-range", "127.0.0.1")),
		Request:   get("acl.test", "/old"), Want: Response{Status: 301, Location: "https://example.org/new"}},
	{Name: "a redirect under an allowlist refuses another client (ingress-nginx redirects it: its return runs before the access checks)",
		Ingresses: one("acl.test", "/", "Prefix", "app", ann("permanent-redirect", "https://example.org/new", "allowlist-source-range", "127.0.0.1")),
		Request:   Request{Host: "acl.test", Path: "/old", From: "127.0.0.5"}, Want: Response{Status: 403}},
	{Name: "whitelist-source-range, the old name, refuses another client",
		Ingresses: one("acl.test", "/", "Prefix", "app", ann("whitelist-source-range", "192.0.2.0/24")),
		Request:   get("acl.test", "/"), Want: Response{Status: 403}},
	{Name: "allowlist-source-range wins over whitelist-source-range",
		Ingresses: one("acl.test", "/", "Prefix", "app", ann("allowlist-source-range", "127.0.0.1", "whitelist-source-range", "192.0.2.0/24")),
		Request:   get("acl.test", "/"), Want: Response{Status: 200, Service: "app"}, Problems: []string{"UnsupportedAnnotation"}},
	{Name: "denylist-source-range is checked before the allow list",
		Ingresses: one("acl.test", "/", "Prefix", "app", ann("denylist-source-range", "127.0.0.6", "allowlist-source-range", "127.0.0.0/8")),
		Request:   Request{Host: "acl.test", Path: "/", From: "127.0.0.6"}, Want: Response{Status: 403}},
	{Name: "denylist-source-range lets others in",
		Ingresses: one("acl.test", "/", "Prefix", "app", ann("denylist-source-range", "127.0.0.6")),
		Request:   Request{Host: "acl.test", Path: "/", From: "127.0.0.7"}, Want: Response{Status: 200, Service: "app"}},
	{Name: "an invalid source range closes the paths",
		Ingresses: one("acl.test", "/", "Prefix", "app", ann("allowlist-source-range", "127.0.0.1/8")),
		Request:   get("acl.test", "/"), Want: Response{Status: 503}, Problems: []string{"InvalidAnnotation"}},
	{Name: "X-Forwarded-For from an untrusted peer does not get through an allow list",
		Ingresses: one("acl.test", "/", "Prefix", "app", ann("allowlist-source-range", "192.0.2.0/24")),
		Config:    realIPRows,
		Request:   Request{Host: "acl.test", Path: "/", From: "127.0.0.3", Header: map[string]string{"X-Forwarded-For": "192.0.2.9"}},
		Want:      Response{Status: 403}},
	{Name: "a trusted proxy's X-Forwarded-For gets through an allow list",
		Ingresses: one("acl.test", "/", "Prefix", "app", ann("allowlist-source-range", "192.0.2.0/24")),
		Config:    realIPRows,
		Request:   Request{Host: "acl.test", Path: "/", From: "127.0.0.2", Header: map[string]string{"X-Forwarded-For": "198.51.100.1, 192.0.2.9"}},
		Want:      Response{Status: 200, Service: "app"}},
	{Name: "a trusted proxy's X-Forwarded-For is refused by a deny list",
		Ingresses: one("acl.test", "/", "Prefix", "app", ann("denylist-source-range", "192.0.2.0/24")),
		Config:    realIPRows,
		Request:   Request{Host: "acl.test", Path: "/", From: "127.0.0.2", Header: map[string]string{"X-Forwarded-For": "192.0.2.9"}},
		Want:      Response{Status: 403}},

	// Nothing is silent, and security fails closed.
	{Name: "an unknown annotation is ignored, the Ingress served",
		Ingresses: one("unk.test", "/", "Prefix", "app", ann("no-such-annotation", "x")),
		Request:   get("unk.test", "/"), Want: Response{Status: 200, Service: "app"}, Problems: []string{"UnknownAnnotation"}},
	{Name: "proxy-ssl-verify without a CA closes the paths",
		Ingresses: one("sec.test", "/", "Prefix", "app", ann("backend-protocol", "HTTPS", "proxy-ssl-verify", "on")),
		Request:   get("sec.test", "/"), Want: Response{Status: 503}, Problems: []string{"InvalidAnnotation"}},
	// ModSecurity: rows that hold with or without the module (Angie has
	// none); test/integration/modsecurity_test.go has the rest.
	{Name: "an invalid enable-modsecurity closes the paths",
		Ingresses: one("waf.test", "/", "Prefix", "app", ann("enable-modsecurity", "yes please")),
		Request:   get("waf.test", "/"), Want: Response{Status: 503}, Problems: []string{"InvalidAnnotation"}},
	{Name: "enable-owasp-core-rules without enable-modsecurity has no effect",
		Ingresses: one("waf.test", "/", "Prefix", "app", ann("enable-owasp-core-rules", "true")),
		Request:   get("waf.test", "/"), Want: Response{Status: 200, Service: "app"}, Problems: []string{"UnsupportedAnnotation"}},
	{Name: "enable-modsecurity false runs none",
		Ingresses: one("waf.test", "/", "Prefix", "app", ann("enable-modsecurity", "false")),
		Request:   get("waf.test", "/?id=1%27%20OR%20%271%27%3D%271"), Want: Response{Status: 200, Service: "app"}},
}

// ConfigAccessTable are rows whose ConfigMap keys would change every other
// row's answer (a global allow list, a key that closes every path), so
// each needs a controller of its own.
var ConfigAccessTable = []AnnotationCase{
	{Name: "whitelist-source-range in the ConfigMap lets a listed client in",
		Ingresses: one("gacl.test", "/", "Prefix", "app", nil),
		Config:    map[string]string{"whitelist-source-range": "127.0.0.1, 192.0.2.0/24"},
		Request:   get("gacl.test", "/"), Want: Response{Status: 200, Service: "app"}},
	{Name: "whitelist-source-range in the ConfigMap refuses another client",
		Ingresses: one("gacl.test", "/", "Prefix", "app", nil),
		Config:    map[string]string{"whitelist-source-range": "127.0.0.1"},
		Request:   Request{Host: "gacl.test", Path: "/", From: "127.0.0.5"}, Want: Response{Status: 403}},
	{Name: "an allowlist-source-range annotation replaces the ConfigMap's",
		Ingresses: one("gacl.test", "/", "Prefix", "app", ann("allowlist-source-range", "127.0.0.5")),
		Config:    map[string]string{"whitelist-source-range": "127.0.0.1", "denylist-source-range": "127.0.0.6"},
		Request:   Request{Host: "gacl.test", Path: "/", From: "127.0.0.5"}, Want: Response{Status: 200, Service: "app"}},
	{Name: "the ConfigMap's denylist-source-range still applies beside an allow list annotation",
		Ingresses: one("gacl.test", "/", "Prefix", "app", ann("allowlist-source-range", "127.0.0.0/8")),
		Config:    map[string]string{"denylist-source-range": "127.0.0.6"},
		Request:   Request{Host: "gacl.test", Path: "/", From: "127.0.0.6"}, Want: Response{Status: 403}},
	{Name: "block-cidrs refuses a client everywhere",
		Ingresses: one("gacl.test", "/", "Prefix", "app", nil),
		Config:    map[string]string{"block-cidrs": "127.0.0.9"},
		Request:   Request{Host: "gacl.test", Path: "/", From: "127.0.0.9"}, Want: Response{Status: 403}},
	{Name: "block-cidrs also applies where a location has lists of its own",
		Ingresses: one("gacl.test", "/", "Prefix", "app", ann("allowlist-source-range", "127.0.0.0/8")),
		Config:    map[string]string{"block-cidrs": "127.0.0.9"},
		Request:   Request{Host: "gacl.test", Path: "/", From: "127.0.0.9"}, Want: Response{Status: 403}},
	{Name: "block-cidrs lets others in",
		Ingresses: one("gacl.test", "/", "Prefix", "app", ann("allowlist-source-range", "127.0.0.0/8")),
		Config:    map[string]string{"block-cidrs": "127.0.0.9"},
		Request:   Request{Host: "gacl.test", Path: "/", From: "127.0.0.5"}, Want: Response{Status: 200, Service: "app"}},
	{Name: "block-user-agents refuses a listed user agent, ignoring case",
		Ingresses: one("gacl.test", "/", "Prefix", "app", nil),
		Config:    map[string]string{"block-user-agents": "Bad Bot/1.0 (compatible; x), ~^curl/"},
		Request:   Request{Host: "gacl.test", Path: "/", Header: map[string]string{"User-Agent": "bad bot/1.0 (Compatible; X)"}}, Want: Response{Status: 403}},
	{Name: "block-user-agents: a ~regex is searched for, case-sensitively",
		Ingresses: one("gacl.test", "/", "Prefix", "app", nil),
		Config:    map[string]string{"block-user-agents": "~[Ss]canner v\\d"},
		Request:   Request{Host: "gacl.test", Path: "/", Header: map[string]string{"User-Agent": "Mozilla/5.0 scanner v2"}}, Want: Response{Status: 403}},
	{Name: "block-user-agents: another case does not match a ~regex",
		Ingresses: one("gacl.test", "/", "Prefix", "app", nil),
		Config:    map[string]string{"block-user-agents": "~^curl/"},
		Request:   Request{Host: "gacl.test", Path: "/", Header: map[string]string{"User-Agent": "CURL/8.0"}}, Want: Response{Status: 200, Service: "app"}},
	{Name: "block-user-agents: a string must match the whole header",
		Ingresses: one("gacl.test", "/", "Prefix", "app", nil),
		Config:    map[string]string{"block-user-agents": "curl"},
		Request:   Request{Host: "gacl.test", Path: "/", Header: map[string]string{"User-Agent": "curl/8.0"}}, Want: Response{Status: 200, Service: "app"}},
	{Name: "block-referers refuses a ~*regex, ignoring case, on every server",
		Ingresses: one("gacl.test", "/", "Prefix", "app", nil),
		Config:    map[string]string{"block-referers": "~*^https?://spam\\.example/"},
		Request:   Request{Host: "unknown.test", Path: "/", Header: map[string]string{"Referer": "HTTP://SPAM.example/x"}}, Want: Response{Status: 403}},
	{Name: "block-referers lets other referers in",
		Ingresses: one("gacl.test", "/", "Prefix", "app", nil),
		Config:    map[string]string{"block-referers": "~*^https?://spam\\.example/"},
		Request:   Request{Host: "gacl.test", Path: "/", Header: map[string]string{"Referer": "https://spam.example.org/"}}, Want: Response{Status: 200, Service: "app"}},
	{Name: "an invalid block-user-agents closes every path",
		Ingresses: one("gacl.test", "/", "Prefix", "app", nil),
		Config:    map[string]string{"block-user-agents": "~(?=x)"},
		Request:   get("gacl.test", "/"), Want: Response{Status: 503}, Problems: []string{"InvalidConfig"}},
	{Name: "an invalid block-cidrs closes every path",
		Ingresses: one("gacl.test", "/", "Prefix", "app", nil),
		Config:    map[string]string{"block-cidrs": "127.0.0.9, 127.0.0.10/8"},
		Request:   get("gacl.test", "/"), Want: Response{Status: 503}, Problems: []string{"InvalidConfig"}},
}

// corsOrigins is a cors-allow-origin list of n origins,
// https://frontend-<i>.tenant-<i>.example.net.
func corsOrigins(n int) string {
	var list []string
	for i := range n {
		list = append(list, fmt.Sprintf("https://frontend-%d.tenant-%d.example.net", i, i))
	}
	return strings.Join(list, ", ")
}
