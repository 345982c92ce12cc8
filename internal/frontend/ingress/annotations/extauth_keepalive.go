package annotations

import (
	"github.com/causeway/causeway/internal/model"
)

// authKeepaliveRows are the auth-keepalive family, part of extAuthGroup:
// a pool of idle connections to auth-url's service. They only shape how
// the service is reached, so a bad value is dropped with a Problem.
var authKeepaliveRows = []Annotation{
	{Name: "auth-keepalive", Scope: ScopeLocation, Default: "0: each subrequest opens its own connection",
		Grammar: "a whole number from 0 to 1024: idle connections to auth-url's host and port kept per nginx worker " +
			"(an upstream with keepalive, asked over HTTP/1.1 with an empty Connection header)",
		Difference: "nginx's auth_request does not read the service's answer body, so a connection is reused only after an answer " +
			"without one (204, Content-Length: 0, or any answer to auth-method HEAD); it also works with HTTP/2 clients, " +
			"which ingress-nginx's Lua subrequest does not; a negative or other invalid value is refused with a Problem"},
	{Name: "auth-keepalive-requests", Scope: ScopeLocation, Default: "1000",
		Grammar:    "a whole number from 1 to 1000000: subrequests one connection serves before it is closed; only with auth-keepalive above 0",
		Difference: "0 or an invalid value is refused with a Problem and the default kept (ingress-nginx turns keepalive off)"},
	{Name: "auth-keepalive-timeout", Scope: ScopeLocation, Default: "60 (seconds)",
		Grammar:    "a duration of more than 0 and at most 1h, in seconds (60) or with a unit ms, s, m or h; only with auth-keepalive above 0",
		Difference: "0 or an invalid value is refused with a Problem and the default kept (ingress-nginx turns keepalive off)"},
	{Name: "auth-keepalive-share-vars", Scope: ScopeLocation, Default: "false",
		Grammar: "a boolean; the subrequest always shares the request's nginx variables (so the service and the backend see the same X-Request-ID), " +
			"which is what true asks",
		Difference: "false cannot be honoured (nginx's auth_request subrequest shares the variables; ingress-nginx's Lua subrequest " +
			"does not): it is reported and the variables are shared"},
}

// authKeepaliveNames are the names of authKeepaliveRows.
var authKeepaliveNames = func() []string {
	out := make([]string, len(authKeepaliveRows))
	for i, a := range authKeepaliveRows {
		out[i] = a.Name
	}
	return out
}()

// parseAuthKeepalive reads the family into a, whose URL is valid.
func parseAuthKeepalive(r *Reader, a *model.ExternalAuth) {
	if share, ok := Parse(r, "auth-keepalive-share-vars", model.ParseBool); ok && !share {
		r.Ignored("auth-keepalive-share-vars", "is false, but nginx's auth_request subrequest always shares the request's variables")
	}
	k := &model.AuthKeepalive{Requests: model.DefaultAuthKeepaliveRequests, Timeout: model.DefaultAuthKeepaliveTimeout}
	Set(r, "auth-keepalive", &k.Connections, func(s string) (int, error) { return parseInt(s, 0, model.MaxAuthKeepalive) })
	requests := func(s string) (int, error) { return parseInt(s, 1, model.MaxAuthKeepaliveRequests) }
	if k.Connections == 0 {
		if _, ok := Parse(r, "auth-keepalive-requests", requests); ok {
			r.Ignored("auth-keepalive-requests", "only applies with auth-keepalive above 0")
		}
		if _, ok := Parse(r, "auth-keepalive-timeout", model.ParseAuthKeepaliveTimeout); ok {
			r.Ignored("auth-keepalive-timeout", "only applies with auth-keepalive above 0")
		}
		return
	}
	Set(r, "auth-keepalive-requests", &k.Requests, requests)
	Set(r, "auth-keepalive-timeout", &k.Timeout, model.ParseAuthKeepaliveTimeout)
	if a.Host == "" {
		// As ingress-nginx, which turns keepalive off for a host with "$".
		r.Ignored("auth-keepalive", "does not apply when auth-url's host is $host or $best_http_host: the subrequest goes back to this nginx")
		return
	}
	a.Keepalive = k
}
