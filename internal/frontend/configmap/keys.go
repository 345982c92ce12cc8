package configmap

import (
	"fmt"
	"sort"

	"github.com/causeway/causeway/internal/model"
)

// This file is the table of every ConfigMap key ingress-nginx reads, and
// what Causeway does with each. Parse reads it to tell a key it does not
// parse yet from a typo; `causeway migrate check` and
// docs/migrating-from-ingress-nginx.md read it through Keys.

// KeyStatus says what Causeway does with a ConfigMap key.
type KeyStatus string

const (
	// KeySupported keys are parsed and mean what they mean to
	// ingress-nginx.
	KeySupported KeyStatus = "supported"
	// KeyDifferent keys are parsed under ingress-nginx's name, with the
	// difference in Key.Difference.
	KeyDifferent KeyStatus = "supported with a difference"
	// KeyNotYetSupported keys are ignored with a Problem; Key.Note says
	// what Causeway does meanwhile or what to use instead.
	KeyNotYetSupported KeyStatus = "not yet supported"
	// KeyNotApplicable keys configure something Causeway does not have,
	// or does in its own way (Key.Note says which); they are ignored with
	// a Problem.
	KeyNotApplicable KeyStatus = "not applicable"
	// KeyCausewayOnly keys are Causeway's own; ingress-nginx has none of
	// that name.
	KeyCausewayOnly KeyStatus = "Causeway only"
)

// Parsed reports whether Causeway parses keys of this status.
func (s KeyStatus) Parsed() bool {
	return s == KeySupported || s == KeyDifferent || s == KeyCausewayOnly
}

// Key is one row of the table.
type Key struct {
	Name   string
	Status KeyStatus
	// NginxDefault is ingress-nginx's default ("" for Causeway-only keys).
	NginxDefault string
	// Default is Causeway's default, for the keys it parses.
	Default string
	// Difference says how Causeway reads a KeyDifferent key differently
	// from ingress-nginx.
	Difference string
	// Note says, for a key Causeway does not parse, why, and what
	// Causeway does meanwhile or what to use instead; for a Causeway-only
	// key, what it does.
	Note string
	// Security marks keys that make ingress-nginx refuse or inspect
	// requests: ignoring one lets through requests ingress-nginx would
	// have refused.
	Security bool
}

// Keys returns the table sorted by name.
func Keys() []Key {
	out := make([]Key, len(keyTable))
	copy(out, keyTable)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LookupKey finds the row of a key.
func LookupKey(name string) (Key, bool) {
	k, ok := keyIndex[name]
	return k, ok
}

// unparsedMessage is the Problem for a key without a parser.
func unparsedMessage(name string) string {
	k, known := keyIndex[name]
	switch {
	case !known:
		return fmt.Sprintf("unknown key %q is ignored", model.Truncate(name))
	case k.Status == KeyNotApplicable:
		return fmt.Sprintf("ingress-nginx key %q does not apply to Causeway and is ignored: %s", name, k.Note)
	default:
		return fmt.Sprintf("ingress-nginx key %q is not supported yet and is ignored: %s", name, k.Note)
	}
}

var keyIndex = func() map[string]Key {
	idx := make(map[string]Key, len(keyTable))
	for _, k := range keyTable {
		if _, dup := idx[k.Name]; dup {
			panic("configmap: key listed twice: " + k.Name)
		}
		idx[k.Name] = k
	}
	return idx
}()

// Row builders.

func supported(name, nginxDefault, def string) Key {
	return Key{Name: name, Status: KeySupported, NginxDefault: nginxDefault, Default: def}
}

func different(name, nginxDefault, def, difference string) Key {
	return Key{Name: name, Status: KeyDifferent, NginxDefault: nginxDefault, Default: def, Difference: difference}
}

func notYet(name, nginxDefault, note string) Key {
	return Key{Name: name, Status: KeyNotYetSupported, NginxDefault: nginxDefault, Note: note}
}

// guard is a security key not supported yet (none since ModSecurity
// arrived; the mechanism stays for the next one).
func guard(name, nginxDefault, note string) Key {
	k := notYet(name, nginxDefault, note)
	k.Security = true
	return k
}

func notApplicable(name, nginxDefault, note string) Key {
	return Key{Name: name, Status: KeyNotApplicable, NginxDefault: nginxDefault, Note: note}
}

func own(name, def, note string) Key {
	return Key{Name: name, Status: KeyCausewayOnly, Default: def, Note: note}
}

// annotationDefault is a key that sets the default of the annotation of
// the same name (annotationKeys); an Ingress's annotation overrides it.
// difference is "" when Causeway reads it as ingress-nginx does.
func annotationDefault(name, nginxDefault, def, difference string) Key {
	if difference == "" {
		return supported(name, nginxDefault, def)
	}
	return different(name, nginxDefault, def, difference)
}

// sameAsDefault is a key whose ingress-nginx default is what Causeway
// does and cannot change yet.
func sameAsDefault(name, nginxDefault, what string) Key {
	return notYet(name, nginxDefault, what+", which is ingress-nginx's default")
}

// Shared notes.
const (
	noteLogsStderr = "nginx's logs go to the controller's stderr; collect them from the Pod's log"
	noteStream     = "not read yet: the stream servers of the tcp-services and udp-services ConfigMaps and of TransportServers (docs/layer4.md) use ingress-nginx's default stream settings"
	noteLimitKey   = "limits always count per client address ($binary_remote_addr after the real-IP settings) and per Ingress"
	noteNoEffect   = "it has no effect in ingress-nginx either"
	noteSized      = "Causeway sizes nginx's hash tables from the configuration (the longest host, the number of hosts and maps)"
	noteHSTS       = "the header is sent on every HTTPS response, including those of hosts served with the default certificate " +
		"(ingress-nginx sends it only for hosts with a certificate of their own); a custom-headers value for Strict-Transport-Security replaces it"
	noteJaeger  = "ingress-nginx documents it but no longer reads it: " + noteNoEffect
	noteSnippet = "raw nginx configuration is never pasted into Causeway's configuration, and there is no main or stream model " +
		"to read this snippet into; http-snippet, server-snippet and location-snippet are read (with allow-snippet-annotations)"
	noteHTTP2 = "nginx ignores it since 1.19.7 (large_client_header_buffers bounds HTTP/2 headers too) and ingress-nginx deprecates it"
)

// keyTable is every ConfigMap key of ingress-nginx (its documented keys
// and those its code reads), and Causeway's own.
var keyTable = []Key{
	// Parsed: configKeys holds their parsers.
	supported("ssl-redirect", "true", "true"),
	supported("disable-access-log", "false", "false"),
	different("worker-processes", "the number of CPUs", "auto",
		"auto or a whole number from 1 to 256 (ingress-nginx accepts any number)"),
	different("worker-shutdown-timeout", "240s", "240s",
		"a Go duration such as 240s or 4m, or whole seconds, from 1s to 24h; nginx's units d, w, M and y are refused"),
	different("proxy-connect-timeout", "5", "5s",
		"whole seconds or a Go duration such as 5s, from 1s to 24h; 0 is refused (ingress-nginx: whole seconds only)"),
	different("proxy-read-timeout", "60", "60s",
		"whole seconds or a Go duration such as 60s, from 1s to 24h; 0 is refused (ingress-nginx: whole seconds only)"),
	different("proxy-send-timeout", "60", "60s",
		"whole seconds or a Go duration such as 60s, from 1s to 24h; 0 is refused (ingress-nginx: whole seconds only)"),
	different("proxy-body-size", "1m", "1m",
		"1 to 9 digits and an optional unit k, m or g; the unit b is refused"),
	different("load-balance", "round_robin", "round_robin",
		"round_robin, ewma, least_conn or p2c; chash, chashsubset, sticky_balanced and sticky_persistent are refused here "+
			"(use the upstream-hash-by or affinity annotations, or causeway.io/load-balance on the Service)"),
	different("upstream-keepalive-connections", "320", "320",
		"0 turns upstream keepalive off only in plain mode: the Lua balancer keeps at least one idle connection. "+
			"In plain mode each backend's upstream keeps such a pool, and the pools together keep at most 65,536 idle connections per worker (each its share beyond that, reported)"),
	own("worker-connections", "16384",
		"connections per nginx worker, from 64 to 1048576: ingress-nginx's max-worker-connections, without its 0; when both are set, worker-connections wins"),
	own("reload-free-certificates", "true",
		"renewed certificates apply without a reload; false loads certificates at reload only"),
	own("reload-free-hosts", "true",
		"with the Lua data plane, a new host of a layout other hosts already share goes live without a reload, served through a second server block of that layout (its hop server) until the next reload; "+
			"false renders no hop servers (about half the size of the shared server files) and every new host reloads"),

	// Access and security.
	different("add-headers", "", "none",
		"namespace/name only (a bare name is refused); each key must be a header name of letters, digits, - _ and ., each value visible ASCII "+
			"without $ (no nginx variables), \" \\ { or }; Server, Date, Connection, Content-Length and Transfer-Encoding are refused; a bad entry is left out with a Problem. The headers are added with add_header ... always "+
			"(headers-more is not loaded) and a backend's header of the same name is hidden, so the client sees one value, as with ingress-nginx's more_set_headers"),
	different("allow-backend-server-header", "false", "false",
		"as in ingress-nginx, the backend's Server header reaches the client only when server-tokens is true as well (a Problem says so otherwise); "+
			"without it the client gets no Server header (see server-tokens)"),
	notApplicable("allow-cross-namespace-resources", "false",
		"Causeway never reads a Secret or ConfigMap from another namespace through an annotation, as with false"),
	different("allow-snippet-annotations", "false", "false",
		"true applies configuration-snippet and server-snippet only as far as Causeway can read them into typed directives of an allowlist "+
			"(docs/security.md, \"Snippets\"); a snippet with anything else is refused whole with a Problem. false refuses every snippet annotation with a Problem"),
	notApplicable("annotations-risk-level", "High",
		"every annotation value is checked against a grammar of its own and reaches nginx through one escaping function; there are no risk levels to choose"),
	notApplicable("annotation-value-word-blocklist", "",
		"every annotation value is checked against a grammar of its own and reaches nginx through one escaping function; there is nothing to block"),
	supported("global-allowed-response-headers", "", "none: custom-headers may set no header"),
	different("hide-headers", "", "empty",
		"comma-separated header names of letters, digits, - _ and ., at most 100; hidden from gRPC backends' responses too (ingress-nginx: proxied HTTP only)"),
	different("whitelist-source-range", "", "none",
		"an annotation of either name (allowlist-source-range, whitelist-source-range) replaces it; an invalid entry (host bits set, a zone, an IPv4-mapped IPv6 address) makes every path of every Ingress answer 503 instead of failing nginx's configuration test"),
	different("denylist-source-range", "", "none",
		"an invalid entry makes every path of every Ingress answer 503 instead of failing nginx's configuration test"),
	different("block-cidrs", "", "none",
		"also refused in locations with their own source lists (nginx would not inherit the http-level deny there); an invalid entry makes every path of every Ingress and every VirtualServer route answer 503 instead of failing nginx's configuration test"),
	different("block-user-agents", "", "none",
		"entries follow a strict grammar: strings of visible ASCII, or ~regex and ~*regex in the regex grammar of path regexes (no $, no lookaround); an invalid entry makes every path of every Ingress and every VirtualServer route answer 503 instead of failing nginx's configuration test"),
	different("block-referers", "", "none",
		"as block-user-agents"),
	different("enable-modsecurity", "false", "false",
		"runs ModSecurity (DetectionOnly until SecRuleEngine On) on every path of every Ingress, not on VirtualServer routes; an Ingress's enable-modsecurity wins. "+
			"An invalid value, or ModSecurity missing from nginx (Angie always), makes every path of every Ingress answer 503. The audit log is one JSON line "+
			"per relevant transaction on nginx's output, without bodies (ingress-nginx: files under /var/log/audit)"),
	different("enable-owasp-modsecurity-crs", "false", "false",
		"with enable-modsecurity, runs Debian's OWASP Core Rule Set (3.3; ingress-nginx ships 4.x) wherever ModSecurity runs; an invalid value, "+
			"or the rules missing, makes every path of every Ingress answer 503 when enable-modsecurity is true"),
	different("modsecurity-snippet", "", "none",
		"with enable-modsecurity, read into typed directives under the allowlist of the modsecurity-snippet annotation (docs/security.md, \"ModSecurity\"), "+
			"not gated by allow-snippet-annotations; as in ingress-nginx it replaces the base configuration unless it includes "+
			"/etc/nginx/modsecurity/modsecurity.conf, and including /etc/nginx/owasp-modsecurity-crs/nginx-modsecurity.conf runs the CRS; a refused snippet makes "+
			"every path of every Ingress answer 503 when enable-modsecurity is true; without it the snippet is unused (a Problem says so)"),
	different("global-auth-url", "", "none",
		"the auth-url grammar: nginx variables only as its URL templates allow ($host sends the subrequest back to this nginx, and is refused with a Problem, 503, in rules without host), "+
			"and a literal host is resolved when nginx loads the configuration; an invalid URL makes every path of every Ingress answer 503"),
	different("global-auth-method", "", "the client's method", "an invalid method makes every path of every Ingress answer 503"),
	different("global-auth-signin", "", "none", "the auth-signin grammar: nginx variables only as its URL templates allow ($escaped_request_uri needs the Lua data plane); the whole original URL is URL-encoded"),
	supported("global-auth-signin-redirect-param", "rd", "rd"),
	different("global-auth-response-headers", "", "none", "an invalid list makes every path of every Ingress answer 503"),
	supported("global-auth-request-redirect", "", "the request URI"),
	notYet("global-auth-snippet", "", noteSnippet),
	different("global-auth-cache-key", "", "none",
		"the auth-cache-key grammar: only $remote_user, $http_authorization, $host, $request_uri, $http_<name> and $cookie_<name>, and at least one of them"),
	different("global-auth-cache-duration", "200 202 401 5m", "200 202 401 5m", "durations in ms, s, m or h, at most 24h"),
	supported("global-auth-always-set-cookie", "false", "false"),
	different("no-auth-locations", "/.well-known/acme-challenge", "/.well-known/acme-challenge",
		"paths must be plain paths (letters, digits, %XX escapes and -._~!*()+,=:@&/)"),
	notYet("enable-auth-access-log", "false", "the subrequests to the authentication service are never logged, which is ingress-nginx's default"),
	notApplicable("strict-validate-path-type", "true",
		"paths are always validated: Exact and Prefix paths must be plain paths, and regular expressions need use-regex or rewrite-target"),

	// Logs.
	notApplicable("access-log-path", "/var/log/nginx/access.log", noteLogsStderr),
	notApplicable("http-access-log-path", "", noteLogsStderr),
	notApplicable("stream-access-log-path", "", noteLogsStderr),
	notApplicable("error-log-path", "/var/log/nginx/error.log", noteLogsStderr),
	different("access-log-params", "", "none (every line written at once)",
		"buffer=SIZE (up to 8m) and flush=TIME only, as space-separated words; gzip is refused, since the log is a text stream on stderr"),
	supported("enable-access-log-for-default-backend", "false", "false"),
	notYet("disable-http-access-log", "false", "use disable-access-log"),
	notYet("disable-stream-access-log", "false", noteStream),
	different("skip-access-log-urls", "", "empty", "exact URL paths only, compared with the decoded path without its query string ($uri; ingress-nginx compares $request_uri, query included); regular expressions are refused"),
	supported("error-log-level", "notice", "notice"),
	supported("log-format-escape-none", "false", "false"),
	supported("log-format-escape-json", "false", "false"),
	different("log-format-upstream", "ingress-nginx's upstreaminfo format", "ingress-nginx's upstreaminfo format", "every $variable must be one of a fixed list (docs/configuration.md); ${...}, ', \\, control and non-ASCII characters are refused"),
	notYet("log-format-stream", "ingress-nginx's stream format", noteStream),
	notYet("enable-syslog", "false", noteLogsStderr+"; ship them with the cluster's log collector"),
	notYet("syslog-host", "", noteLogsStderr+"; ship them with the cluster's log collector"),
	notYet("syslog-port", "514", noteLogsStderr+"; ship them with the cluster's log collector"),
	notYet("debug-connections", "", "debug logging for chosen clients is not supported"),

	// Client connections and headers.
	different("client-header-buffer-size", "1k", "1k", "a size from 128 bytes to 1m (ingress-nginx accepts any nginx size)"),
	different("client-header-timeout", "60", "60s", "whole seconds or a duration with a unit ms, s, m or h, more than 0 and up to 24h (ingress-nginx: whole seconds only)"),
	different("client-body-timeout", "60", "60s", "whole seconds or a duration with a unit ms, s, m or h, more than 0 and up to 24h (ingress-nginx: whole seconds only)"),
	different("large-client-header-buffers", "4 8k", "4 8k", "a count from 1 to 128 and a size from 1k to 1m, separated by spaces (ingress-nginx passes the value to nginx unchecked)"),
	different("keep-alive", "75", "75s", "whole seconds or a duration with a unit ms, s, m or h, up to 24h (ingress-nginx: whole seconds only); 0 turns client keepalive off, as in ingress-nginx"),
	different("keep-alive-requests", "1000", "1000", "an integer from 1 to 1073741824 (ingress-nginx accepts any number)"),
	sameAsDefault("ignore-invalid-headers", "true", "nginx's default (on) applies"),
	supported("enable-underscores-in-headers", "false", "false"),
	supported("use-http2", "true", "true"),
	different("http2-max-concurrent-streams", "128", "128", "a whole number from 1 to 65536"),
	notApplicable("http2-max-field-size", "", noteHTTP2),
	notApplicable("http2-max-header-size", "", noteHTTP2),
	notApplicable("http2-max-requests", "0", noteHTTP2),
	notYet("default-type", "text/html", "responses nginx makes itself have the type application/octet-stream"),
	supported("server-tokens", "false", "false"),
	supported("http-redirect-code", "308", "308"),
	notYet("no-tls-redirect-locations", "/.well-known/acme-challenge",
		"every path of a host with TLS is redirected to HTTPS, /.well-known/acme-challenge included"),
	sameAsDefault("relative-redirects", "false", "redirects nginx makes are absolute"),
	notYet("use-port-in-redirects", "false", "the port of redirects nginx makes cannot be chosen"),

	// TLS.
	different("ssl-protocols", "TLSv1.2 TLSv1.3", "TLSv1.2 TLSv1.3",
		"TLSv1, TLSv1.1, TLSv1.2 and TLSv1.3, separated by spaces or commas; SSLv2, SSLv3 and other words are refused (ingress-nginx passes the value to nginx as written)"),
	different("ssl-ciphers", "ingress-nginx's ECDHE list", "ingress-nginx's ECDHE list",
		"an OpenSSL cipher list of letters, digits and :+!@._=- only; the server's order is always preferred, as in ingress-nginx; "+
			"TLSv1.3 suites are not affected (OpenSSL chooses them)"),
	different("ssl-ecdh-curve", "auto", "auto",
		"auto, or ':'-separated names from X25519, X448, prime256v1, secp384r1, secp521r1, P-256, P-384 and P-521"),
	different("ssl-dh-param", "", "none: DHE cipher suites are not offered",
		"namespace/name only; the Secret's dhparam.pem must be one PEM block DH PARAMETERS with a prime of 2048 to 8192 bits (Debian's OpenSSL "+
			"refuses smaller ones); anything else is a Problem and DHE stays off (ingress-nginx hands the file to nginx unchecked)"),
	supported("ssl-session-cache", "true", "true"),
	different("ssl-session-cache-size", "10m", "10m", "a size from 64k to 1g in nginx's syntax (k, m, g)"),
	different("ssl-session-timeout", "10m", "10m", "a time from 1s to 24h: whole seconds or a number with ms, s, m or h"),
	supported("ssl-session-tickets", "false", "false"),
	different("ssl-session-ticket-key", "randomly generated", "none: nginx makes its own at each start",
		"the base64 of 48 or 80 bytes, as in ingress-nginx; it is a secret kept in a ConfigMap, readable by whoever may read ConfigMaps: "+
			"prefer ssl-session-ticket-key-secret. It applies only with ssl-session-tickets (a Problem says so otherwise), and a change reloads nginx"),
	own("ssl-session-ticket-key-secret", "none",
		"namespace/name of a Secret whose tickets.key holds the TLS session ticket key every replica shares (48 or 80 bytes, raw or base64), and optionally "+
			"tickets.previous.key a key still accepted for tickets made before a rotation; it wins over ssl-session-ticket-key. The keys are written 0600 under the state "+
			"directory's secrets/, and a change reloads nginx (nginx reads ticket keys at reload only)"),
	notYet("ssl-buffer-size", "4k", "nginx's default (16k) applies"),
	notYet("ssl-early-data", "false", "TLS 1.3 early data stays off"),
	supported("ssl-reject-handshake", "false", "false"),
	different("enable-ocsp", "false", "false",
		"the controller, not nginx, asks each host certificate's OCSP responder (the issuer must follow the certificate in tls.crt), checks "+
			"the answer and staples only a good one, fetched again halfway to its nextUpdate; a revoked certificate is stapled nothing, with a Problem. "+
			"Stapling needs the Lua data plane (renewed answers apply without a reload) or reload-free-certificates false (each answer reloads); "+
			"with neither it is a Problem. The default certificate is not stapled"),
	different("hsts", "true", "true", noteHSTS),
	supported("hsts-include-subdomains", "true", "true"),
	different("hsts-max-age", "31536000", "31536000", "whole seconds from 0 to 2147483647"),
	supported("hsts-preload", "false", "false"),

	// Client addresses and forwarded headers: parsed (realip.go).
	different("use-forwarded-headers", "false", "false",
		"X-Forwarded-Proto, -Host and -Port are passed on only from peers in proxy-real-ip-cidr (ingress-nginx trusts them from any peer); "+
			"the Host header sent upstream stays the request's; with use-proxy-protocol as well, the client address is the PROXY header's, "+
			"not the forwarded header's (forwarded-for-proxy-protocol-header is not supported)"),
	supported("enable-real-ip", "false", "false"),
	different("forwarded-for-header", "X-Forwarded-For", "X-Forwarded-For",
		"a header name of letters, digits and - only (nginx ignores request headers with other characters); proxy_protocol is refused"),
	different("compute-full-forwarded-for", "false", "false",
		"the incoming X-Forwarded-For is passed on only from peers in proxy-real-ip-cidr; from others, the client's address alone"),
	different("proxy-real-ip-cidr", "0.0.0.0/0", "0.0.0.0/0",
		"comma-separated IPv4 or IPv6 CIDRs or addresses, at most 1000; a CIDR with host bits set (10.0.0.1/8) is refused"),
	different("use-proxy-protocol", "false", "false",
		"X-Forwarded-Port is the PROXY header's destination port, and X-Forwarded-Proto is https when that port is 443 unless a trusted peer's "+
			"X-Forwarded-Proto says otherwise"),
	different("proxy-protocol-header-timeout", "5s", "5s",
		"ingress-nginx applies it only to its SSL-passthrough proxy; Causeway makes it nginx's client_header_timeout when use-proxy-protocol is on, "+
			"which bounds the PROXY header and the request headers of each new connection together; a Go duration or whole seconds, from 1s to 24h"),
	notYet("forwarded-for-proxy-protocol-header", "X-Forwarded-For-Proxy-Protocol",
		"with use-proxy-protocol, the client address is always the PROXY header's, even with use-forwarded-headers"),
	notYet("forwarded-host-header", "X-Forwarded-Host", "X-Forwarded-Host is always sent, with the request's Host"),
	notYet("proxy-add-original-uri-header", "false", "X-Original-URI is sent only to the custom-http-errors backend and mirror targets, as with false"),
	supported("generate-request-id", "true", "true"),
	different("proxy-set-headers", "", "none",
		"namespace/name only (a bare name is refused); values are literal text: nginx variables ($remote_addr) are refused, as are \" \\ { }, "+
			"control characters and non-ASCII; a bad entry is left out with a Problem. An entry for a header Causeway sets itself (Host, X-Real-IP, "+
			"X-Forwarded-*, X-Request-ID, X-Original-URI, Connection, Upgrade, the custom-http-errors headers) or for Content-Length or Transfer-Encoding "+
			"is refused with a Problem (ingress-nginx would send both values)"),

	// Listeners and workers.
	notYet("bind-address", "", "use the controller's --listen-address flag"),
	notYet("disable-ipv6", "false", "use the controller's --listen-address flag"),
	different("disable-ipv6-dns", "false", "false",
		"applies to the controller's lookups of ExternalName Services (nginx resolves no names at request time): true never asks for AAAA records"),
	own("resolver-addresses", "resolv.conf's nameservers",
		"comma-separated IPv4 or IPv6 addresses of DNS servers, each with an optional port (53 by default), at most 8, that resolve ExternalName "+
			"Services; names are then looked up as written, without resolv.conf's search domains. ingress-nginx always uses resolv.conf's (NGINX Ingress Controller's key of this name serves the same purpose)"),
	notYet("reuse-port", "true", "listeners are opened without reuseport"),
	different("max-worker-connections", "16384", "16384",
		"0 or an integer from 64 to 1048576; Causeway's worker-connections sets the same value and wins when both are set"),
	different("max-worker-open-files", "0", "0",
		"0 (the controller's hard open files limit less 1024, at least 1024) or an integer from 1024 to 16777216"),
	notYet("worker-cpu-affinity", "", "workers are not pinned to CPUs"),
	notYet("enable-multi-accept", "true", "nginx's default applies: each worker accepts one connection at a time"),
	notYet("enable-aio-write", "true", "nginx writes temporary files without aio"),
	notApplicable("enable-serial-reloads", "false", "Causeway reloads nginx one configuration at a time, and only when the configuration changed"),
	notApplicable("lua-shared-dicts", "", "Causeway's Lua data plane sizes its own shared dictionaries"),
	notApplicable("nginx-status-ipv4-whitelist", "127.0.0.1", "Causeway's status endpoint is on a unix socket, never on the network"),
	notApplicable("nginx-status-ipv6-whitelist", "::1", "Causeway's status endpoint is on a unix socket, never on the network"),
	notApplicable("server-name-hash-max-size", "1024", noteSized),
	notApplicable("server-name-hash-bucket-size", "the CPU's cache line", noteSized),
	notApplicable("map-hash-bucket-size", "64", noteSized),
	notApplicable("variables-hash-bucket-size", "256", noteSized),
	notApplicable("variables-hash-max-size", "2048", noteSized),
	sameAsDefault("proxy-headers-hash-max-size", "512", "nginx's default (512) applies"),
	sameAsDefault("proxy-headers-hash-bucket-size", "64", "nginx's default (64) applies"),

	// Proxying: the defaults of annotations of the same name (defaults.go).
	annotationDefault("client-body-buffer-size", "8k", "8k", "more than 0 and at most 1g"),
	annotationDefault("proxy-buffers-number", "4", "4",
		"a whole number from 3 to 64 (nginx refuses fewer than 3 beside the default busy buffers size)"),
	annotationDefault("proxy-buffer-size", "4k", "4k",
		"more than 0 and at most 1g; the unit b is refused"),
	annotationDefault("proxy-buffering", "off", "off", ""),
	annotationDefault("proxy-request-buffering", "on", "on", ""),
	annotationDefault("proxy-http-version", "1.1", "1.1", ""),
	annotationDefault("proxy-max-temp-file-size", "1024m", "1024m",
		"0 or at least proxy-buffer-size, as nginx requires; where an Ingress's buffer annotations or a VirtualServer upstream's "+
			"buffers are larger, nginx's default applies there instead, with a Problem (ingress-nginx's configuration would fail)"),
	annotationDefault("proxy-next-upstream", "error timeout", "error timeout",
		"commas are accepted too, off must stand alone, and duplicates are dropped"),
	annotationDefault("proxy-next-upstream-timeout", "0", "0",
		"seconds or a duration with one unit ms, s, m or h, up to 24h"),
	notYet("proxy-next-upstream-tries", "3",
		"a failed request tries one other endpoint by default; set causeway.io/proxy-next-upstream-tries on the Service, "+
			"or the proxy-next-upstream-tries annotation on the Ingresses that need another value"),
	annotationDefault("proxy-cookie-domain", "off", "off",
		"off or two lower-case domain names; regular expressions (~), variables and IP addresses are refused"),
	annotationDefault("proxy-cookie-path", "off", "off",
		"off or exactly two plain paths; regular expressions (~), variables, ? and & are refused"),
	annotationDefault("proxy-redirect-from", "off", "default",
		"the default is nginx's, which rewrites only Location headers that name Causeway's internal upstream (backends send none): in effect "+
			"nothing is rewritten, as with ingress-nginx's off. A URL or path must be an absolute http or https URL or a plain path "+
			"(bare host names, variables and regular expressions are refused) and needs proxy-redirect-to"),
	annotationDefault("proxy-redirect-to", "off", "off",
		"an absolute http or https URL or a plain path (bare host names and variables are refused)"),
	annotationDefault("proxy-busy-buffers-size", "", "nginx's default (twice the buffer size)",
		"must fit the buffers (at least proxy-buffer-size, at most all proxy-buffers-number buffers but one), as nginx requires; where an Ingress's "+
			"buffer annotations or a VirtualServer upstream's buffers no longer fit it, nginx's default applies there instead, with a Problem "+
			"(ingress-nginx's configuration would fail)"),
	annotationDefault("custom-http-errors", "", "none",
		"status codes from 400 to 599 (ingress-nginx also takes 300 to 399); an Ingress's default-backend annotation, when set, renders "+
			"its errors (ingress-nginx always asks the default backend); without --default-backend-service the key applies only to Ingresses "+
			"with a default-backend annotation"),
	annotationDefault("force-ssl-redirect", "false", "false",
		"applies to every Ingress host, TLS or not, as in ingress-nginx, but not to the catch-all server that serves Ingress rules without a host "+
			"(ingress-nginx redirects those paths too)"),
	annotationDefault("preserve-trailing-slash", "false", "false",
		"applies to every Ingress host's HTTPS redirect, but not to the catch-all server"),
	annotationDefault("service-upstream", "false", "false",
		"an annotation decides per Ingress (ingress-nginx lets the first Ingress of a Service decide for every Ingress using it)"),
	notYet("upstream-keepalive-time", "1h", "nginx's default (1h) applies, which is ingress-nginx's"),
	different("upstream-keepalive-timeout", "60", "60s", "whole seconds or a duration with a unit ms, s, m or h, more than 0 and up to 24h (ingress-nginx: whole seconds only)"),
	different("upstream-keepalive-requests", "10000", "10000", "an integer from 1 to 1073741824 (ingress-nginx accepts any number)"),
	notYet("retry-non-idempotent", "false", "POST, LOCK and PATCH requests are never retried on another endpoint once sent, as with false"),
	notYet("grpc-buffer-size-kb", "0", "nginx's default gRPC buffer size applies"),
	notApplicable("proxy-ssl-location-only", "false", "backend TLS annotations always apply to the Ingress's own paths only"),
	notYet("disable-proxy-intercept-errors", "false", "custom-http-errors always intercepts the listed statuses"),
	notApplicable("upstream-hash-by", "", noteNoEffect+"; use the upstream-hash-by annotation"),
	notApplicable("upstream-hash-by-subset", "false", noteNoEffect),
	notApplicable("upstream-hash-by-subset-size", "3", noteNoEffect),
	notApplicable("app-root", "", noteNoEffect+"; use the app-root annotation"),

	// Limits.
	different("limit-rate", "0", "0", "a size such as 1024, 100k or 1m, at most 1g (bytes per second per response; 0 turns it off); like ingress-nginx's, it slows only Ingresses with proxy-buffering: on"),
	different("limit-rate-after", "0", "0", "a size such as 1m, at most 1g"),
	different("limit-req-status-code", "503", "503", "a status from 400 to 599"),
	different("limit-conn-status-code", "503", "503", "a status from 400 to 599"),
	notYet("limit-conn-zone-variable", "$binary_remote_addr", noteLimitKey),

	// Compression.
	supported("use-gzip", "false", "false"),
	supported("gzip-level", "1", "1"),
	different("gzip-min-length", "256", "256", "a size in bytes, or with a unit k, m or g, up to 1g (ingress-nginx: bytes only)"),
	different("gzip-types", "ingress-nginx's list of text types", "ingress-nginx's list",
		"MIME types type/subtype of at most 46 bytes (nginx's limit) separated by spaces or commas, at most 100, or * alone; parameters and wildcards such as text/* are refused"),
	notYet("gzip-disable", "", "gzip is used for every client that accepts it"),
	different("enable-brotli", "false", "false",
		"needs nginx's brotli filter module (Debian's libnginx-mod-http-brotli-filter); without it brotli stays off with a Problem"),
	supported("brotli-level", "4", "4"),
	different("brotli-min-length", "20", "20", "a size in bytes, or with a unit k, m or g, up to 1g (ingress-nginx: bytes only)"),
	different("brotli-types", "ingress-nginx's list of text types", "ingress-nginx's list",
		"MIME types type/subtype of at most 46 bytes (nginx's limit) separated by spaces or commas, at most 100, or * alone; parameters and wildcards such as text/* are refused"),

	// GeoIP.
	notApplicable("use-geoip", "true", noteJaeger),
	different("use-geoip2", "false", "false",
		"the databases are never downloaded: mount them (<edition>.mmdb, as geoipupdate writes them) in the directory of --geoip2-dir "+
			"(/etc/ingress-controller/geoip, ingress-nginx's), and choose them with --maxmind-edition-ids; ingress-nginx's variables are defined, "+
			"empty where no database sets them, and snippets and log-format-upstream may read them. Needs nginx's geoip2 module "+
			"(Debian's libnginx-mod-http-geoip2); without it, or without a database, the variables are empty, with a Problem"),
	supported("geoip2-autoreload-in-minutes", "0", "0"),

	// TCP and UDP services.
	notYet("proxy-stream-timeout", "600s", noteStream),
	notYet("proxy-stream-next-upstream", "true", noteStream),
	notYet("proxy-stream-next-upstream-timeout", "600s", noteStream),
	notYet("proxy-stream-next-upstream-tries", "3", noteStream),
	notYet("proxy-stream-responses", "1", noteStream),

	// Snippets.
	notYet("main-snippet", "", noteSnippet),
	different("http-snippet", "", "none",
		"read into typed directives under an allowlist of the header directives nginx allows at the http level (add_header, more_set_headers, "+
			"more_clear_headers, proxy_set_header, proxy_hide_header, expires), allow and deny (added to every location's address lists), and map "+
			"(a source of variables a snippet may read, a new variable, literal or regex keys, no hostnames, include or volatile), whose "+
			"variables the snippets of Ingresses may read; applied to every host, ahead of server-snippet, only with "+
			"allow-snippet-annotations; a host's or location's own directive of the same kind adds to them rather than replacing them; "+
			"anything else (limit_req_zone, upstream, server blocks ...) refuses the whole key with a Problem"),
	different("server-snippet", "", "none",
		"read like the server-snippet annotation and applied to every host, ahead of its own, only with allow-snippet-annotations; "+
			"a return or redirecting rewrite is refused (it would answer ahead of every path's access checks); anything outside the allowlist refuses the whole key with a Problem, "+
			"and every path answers 503 when it refuses requests, unless its refusals are all location blocks that only refuse (location ~ /\\.git { deny all; }): "+
			"then only the requests they match answer 503"),
	notYet("stream-snippet", "", noteSnippet),
	different("location-snippet", "", "none",
		"read like configuration-snippet and applied to every location, ahead of the Ingress's own, only with allow-snippet-annotations; "+
			"a return or redirecting rewrite is refused; anything outside the allowlist refuses the whole key with a Problem"),

	// Tracing.
	different("enable-opentelemetry", "false", "false",
		"no nginx module: nginx starts or continues the W3C trace context and logs each span, and the controller exports the spans, "+
			"a second or two after the request; it applies to VirtualServer routes and the controller's own 404 too (docs/tracing.md)"),
	different("opentelemetry-trust-incoming-span", "true", "true",
		"only the W3C traceparent and tracestate headers are read; an Ingress's annotation applies whether or not it sets enable-opentelemetry "+
			"(ingress-nginx reads it only next to enable-opentelemetry \"true\")"),
	different("opentelemetry-operation-name", "", "the Ingress path",
		"variables are limited to $request_method, $uri, $request_uri, $host, $scheme, $server_name, $server_port, $server_protocol, $status, "+
			"$namespace, $ingress_name, $service_name, $service_port, $location_path and $proxy_upstream_name, filled in by the controller; "+
			"without it a span is named after the Ingress path (ingress-nginx: after nginx's location, such as \"/api/\")"),
	notApplicable("opentelemetry-config", "/etc/ingress-controller/telemetry/opentelemetry.toml",
		"no nginx module reads a configuration file: the otlp-* and otel-* keys configure the controller's exporter"),
	different("otlp-collector-host", "", "none: no span is exported",
		"a DNS name or IP address, without a scheme or port; the controller sends the spans, in plain text as ingress-nginx's module does"),
	supported("otlp-collector-port", "4317", "4317 (4318 with otlp-collector-protocol http/protobuf)"),
	own("otlp-collector-protocol", "grpc", "how spans are sent: OTLP over gRPC (grpc, ingress-nginx's only protocol) or over HTTP with protobuf bodies to /v1/traces (http/protobuf)"),
	supported("otel-max-queuesize", "2048", "2048"),
	supported("otel-schedule-delay-millis", "5000", "5000"),
	supported("otel-max-export-batch-size", "512", "512"),
	supported("otel-service-name", "nginx", "nginx"),
	different("otel-sampler", "AlwaysOn", "AlwaysOn",
		"decided in nginx, so the sampled flag sent upstream is the decision; TraceIdRatioBased reads the trace ID's last 8 bytes "+
			"as OpenTelemetry's Go SDK does (the C++ SDK of ingress-nginx's module reads the first 8), and remote is refused"),
	supported("otel-sampler-ratio", "0.01", "0.01"),
	supported("otel-sampler-parent-based", "true", "true"),
	notApplicable("jaeger-collector-host", "", noteJaeger),
	notApplicable("jaeger-collector-port", "6831", noteJaeger),
	notApplicable("jaeger-endpoint", "", noteJaeger),
	notApplicable("jaeger-service-name", "nginx", noteJaeger),
	notApplicable("jaeger-propagation-format", "jaeger", noteJaeger),
	notApplicable("jaeger-sampler-type", "const", noteJaeger),
	notApplicable("jaeger-sampler-param", "1", noteJaeger),
	notApplicable("jaeger-sampler-host", "http://127.0.0.1", noteJaeger),
	notApplicable("jaeger-sampler-port", "5778", noteJaeger),
	notApplicable("jaeger-trace-context-header-name", "uber-trace-id", noteJaeger),
	notApplicable("jaeger-debug-header", "uber-debug-id", noteJaeger),
	notApplicable("jaeger-baggage-header", "jaeger-baggage", noteJaeger),
	notApplicable("jaeger-trace-baggage-header-prefix", "uberctx-", noteJaeger),
}
