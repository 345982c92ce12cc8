// Package echo is a tiny HTTP backend that answers every request with JSON
// naming the service and endpoint that served it. The demo runs it as a
// process; integration tests run it in-process.
package echo

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Reply is what the backend answers.
type Reply struct {
	Service        string `json:"service"`
	Endpoint       string `json:"endpoint"`
	Host           string `json:"host"`
	Path           string `json:"path"`
	Method         string `json:"method"`
	ForwardedFor   string `json:"x_forwarded_for,omitempty"`
	ForwardedProto string `json:"x_forwarded_proto,omitempty"`
	// URI is the request target as received: path and query.
	URI string `json:"uri"`
	// Headers are the request headers of SeenHeaders that were set.
	Headers map[string]string `json:"headers,omitempty"`
}

// SeenHeaders are the request headers an echo reports back: those that
// nginx adds or rewrites for rewrites, custom error pages and upstream
// hosts.
var SeenHeaders = []string{
	"X-Forwarded-Prefix", "X-Forwarded-Host", "X-Forwarded-Port", "X-Real-IP", "X-Code", "X-Format", "X-Original-URI",
	"X-Namespace", "X-Ingress-Name", "X-Service-Name", "X-Service-Port", "X-Request-ID",
	// Client certificate authentication's (auth-tls-*).
	"Ssl-Client-Verify", "Ssl-Client-Subject-Dn", "Ssl-Client-Cert",
	// External authentication's answer headers (auth-response-headers).
	"X-Auth-User", "X-Auth-Groups", "X-Auth-Request-User", "X-Auth-Request-Email",
	// Snippets' proxy_set_header (test/spec/snippets.go).
	"X-Tenant",
	// Never to reach a backend: the hop between nginx's servers
	// (render/hop.go).
	"X-Causeway-Hop-Client", "X-Causeway-Hop-Proto",
}

// Handler answers as service, reporting endpoint (its own address).
func Handler(service, endpoint string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// ?sleep=200ms holds the response, to test in-flight requests.
		if d, err := time.ParseDuration(r.URL.Query().Get("sleep")); err == nil && d > 0 && d <= 10*time.Second {
			time.Sleep(d)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Echo-Endpoint", endpoint)
		// A path under /_status/503/ answers with that status, to test
		// error pages (a path, not a query: error locations keep the
		// query).
		if code, ok := StatusOf(r.URL.Path); ok {
			w.WriteHeader(code)
		}
		var seen map[string]string
		for _, h := range SeenHeaders {
			if v := r.Header.Get(h); v != "" {
				if seen == nil {
					seen = map[string]string{}
				}
				seen[h] = v
			}
		}
		json.NewEncoder(w).Encode(Reply{
			URI:            r.RequestURI,
			Headers:        seen,
			Service:        service,
			Endpoint:       endpoint,
			Host:           r.Host,
			Path:           r.URL.Path,
			Method:         r.Method,
			ForwardedFor:   r.Header.Get("X-Forwarded-For"),
			ForwardedProto: r.Header.Get("X-Forwarded-Proto"),
		})
	})
}

// StatusOf returns the status a path under /_status/NNN asks the echo to
// answer with.
func StatusOf(path string) (int, bool) {
	rest, ok := strings.CutPrefix(path, "/_status/")
	if !ok {
		return 0, false
	}
	code, err := strconv.Atoi(strings.SplitN(rest, "/", 2)[0])
	if err != nil || code < 200 || code > 599 {
		return 0, false
	}
	return code, true
}
