package annotations

import (
	"fmt"
	"slices"
	"time"

	"github.com/causeway/causeway/internal/model"
)

// corsGroup is ingress-nginx's enable-cors family. Every setting but
// enable-cors applies only when it is true; the policy is filled with the
// defaults applied, so the renderer needs none.
var corsGroup = Group{
	Name: "cors",
	Annotations: supported("cors",
		Annotation{Name: "enable-cors", Scope: ScopeLocation, Default: "false",
			Grammar: "a boolean: true or false (also 1, 0, t, f, True, FALSE ...)",
			Difference: "the same answers; a location has one if, the preflight's, where ingress-nginx writes three " +
				"(four with listed origins): an if is a location configuration of its own, " +
				"and with Debian 12's Lua module costs an OpenSSL context at each reload"},
		Annotation{Name: "cors-allow-origin", Scope: ScopeLocation, Default: "*",
			Grammar: "* alone, or a comma-separated list of up to 64 origins scheme://host[:port] with scheme http or https, " +
				"host a DNS name or IPv4 address, optionally after a *. wildcard label; no path",
			Difference: "an entry without a scheme or with a path refuses the whole list instead of being skipped; " +
				"an invalid list leaves CORS off rather than allowing every origin; a default port (:443 for https) matches an origin without one"},
		Annotation{Name: "cors-allow-methods", Scope: ScopeLocation, Default: "GET, PUT, POST, DELETE, PATCH, OPTIONS",
			Grammar:    "methods from GET, PUT, POST, DELETE, PATCH, OPTIONS, HEAD, CONNECT, TRACE (any case), separated by commas or spaces",
			Difference: "other method names are refused, not passed on; methods are sent upper-cased and without duplicates"},
		Annotation{Name: "cors-allow-headers", Scope: ScopeLocation, Default: corsDefaultHeaders,
			Grammar:    "* alone, or a comma-separated list of up to 64 header names of letters, digits, - _ and .",
			Difference: "* is accepted; names differing only in case are sent once"},
		Annotation{Name: "cors-expose-headers", Scope: ScopeLocation, Default: "none (no Access-Control-Expose-Headers)",
			Grammar: "* alone, or a comma-separated list of up to 64 header names of letters, digits, - _ and ."},
		Annotation{Name: "cors-allow-credentials", Scope: ScopeLocation, Default: "true",
			Grammar: "a boolean"},
		Annotation{Name: "cors-max-age", Scope: ScopeLocation, Default: "1728000",
			Grammar:    "whole seconds, 0 to 31536000",
			Difference: "negative values and values over a year are refused"},
	),
	Parse: parseCORS,
}

// corsDefaultHeaders is ingress-nginx's default cors-allow-headers.
const corsDefaultHeaders = "DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization"

// corsMethods are the methods cors-allow-methods may name.
var corsMethods = map[string]bool{
	"GET": true, "PUT": true, "POST": true, "DELETE": true, "PATCH": true,
	"OPTIONS": true, "HEAD": true, "CONNECT": true, "TRACE": true,
}

// Bounds on the CORS lists and max-age.
const (
	maxCORSMethods = 32 // as written, duplicates included
	maxCORSHeaders = 64
	maxCORSMaxAge  = 365 * 24 * 3600
)

// corsOptions are the annotations that only apply with enable-cors.
var corsOptions = []string{"cors-allow-origin", "cors-allow-methods", "cors-allow-headers",
	"cors-expose-headers", "cors-allow-credentials", "cors-max-age"}

// corsDefaultHeaderList is corsDefaultHeaders parsed, once, and
// corsDefaultMethods the methods allowed by default. Every CORS Ingress
// without its own list shares them (at 10,000 Ingresses, copies were
// 2.5 MB of the model): model.CORS's lists are read, never written, and
// clipped, so that an append would copy.
var (
	corsDefaultHeaderList = slices.Clip(func() []string {
		l, err := model.ParseHeaderNameList(corsDefaultHeaders, maxCORSHeaders)
		if err != nil {
			panic(fmt.Sprintf("cors-allow-headers default: %v", err))
		}
		return l
	}())
	corsDefaultMethods = []string{"GET", "PUT", "POST", "DELETE", "PATCH", "OPTIONS"} // a literal: len == cap
)

func parseCORS(r *Reader, res *Result) {
	enabled, _ := Parse(r, "enable-cors", model.ParseBool)
	if !enabled {
		for _, n := range corsOptions {
			if r.Has(n) {
				r.Ignored(n, `only applies with enable-cors: "true"`)
			}
		}
		return
	}
	c := &model.CORS{
		AllowAnyOrigin: true,
		Methods:        corsDefaultMethods,
		Headers:        corsDefaultHeaderList,
		Credentials:    true,
		MaxAge:         1728000 * time.Second,
	}
	if v, ok := r.Get("cors-allow-origin"); ok {
		origins, err := model.ParseCORSOrigins(v)
		if err != nil {
			// Falling back to "*" would widen what the Ingress allows.
			r.Invalid("cors-allow-origin", v, fmt.Errorf("%w; CORS stays off rather than allowing every origin", err))
			return
		}
		if len(origins) == 1 && origins[0] == "*" {
			c.AllowAnyOrigin, c.Origins = true, nil
		} else {
			c.AllowAnyOrigin, c.Origins = false, origins
		}
	}
	Set(r, "cors-allow-methods", &c.Methods, func(s string) ([]string, error) {
		return model.ParseTokenList(s, corsMethods, maxCORSMethods)
	})
	Set(r, "cors-allow-headers", &c.Headers, func(s string) ([]string, error) {
		return model.ParseHeaderNameList(s, maxCORSHeaders)
	})
	Set(r, "cors-expose-headers", &c.ExposeHeaders, func(s string) ([]string, error) {
		return model.ParseHeaderNameList(s, maxCORSHeaders)
	})
	Set(r, "cors-allow-credentials", &c.Credentials, model.ParseBool)
	Set(r, "cors-max-age", &c.MaxAge, func(s string) (time.Duration, error) {
		n, err := parseInt(s, 0, maxCORSMaxAge)
		return time.Duration(n) * time.Second, err
	})
	res.Location.CORS = c
}
