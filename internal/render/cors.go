package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/causeway/causeway/internal/model"
)

// CORS, as ingress-nginx's enable-cors: nginx answers preflight requests
// (OPTIONS) from an allowed origin itself with 204, and adds the
// Access-Control-Allow-Origin, -Credentials and -Expose-Headers headers to
// every other response to an allowed origin, whatever its status. With
// several origins, or wildcard ones, a map at the top of the server file
// tells whether the request's Origin is allowed; the header then echoes
// it. Only add_header is used: headers-more is not loaded.
//
// With any origin allowed, a location has one if, the preflight's, and
// the other headers are its own add_header lines. ingress-nginx writes
// three ifs and a set, which listed origins keep (see the template). With
// Debian 12's Lua module (0.10.23) every if, like every location, costs
// its own OpenSSL context at each reload and nginx -t.

type corsView struct {
	// Any allows every origin ("*"); otherwise Variable is the map
	// variable that is "true" for an allowed origin.
	Any      bool
	Variable string
	// Origin is what Any answers: "*", or the request's Origin
	// (model.CORS.Echo).
	Origin string
	// Map is the index of that map in serverView.CORSMaps.
	Map         int
	Credentials bool
	// Methods, Headers and Expose are quoted lists, or "".
	Methods, Headers, Expose string
	// MaxAge is in seconds (0: not sent).
	MaxAge int64
	// AnswerPreflights answers the preflights of origins not allowed
	// (their map says "no"; model.CORS.AnswerPreflights).
	AnswerPreflights bool
}

// corsMapView matches the request's Origin; Keys are quoted
// case-insensitive regular expressions, Variable is set with the
// server's ID (see serverView.name).
type corsMapView struct {
	Variable string
	Keys     []string
	// Other is the value for a request with an Origin not allowed: "" as
	// for none, or "no" where such preflights are answered here.
	Other string
}

func (sp *serverPlan) planCORS(c *model.CORS) (*corsView, error) {
	v := &corsView{Credentials: c.Credentials, Origin: `"*"`}
	var err error
	star := func(list []string) bool { return len(list) == 1 && list[0] == "*" }
	if star(c.Methods) {
		v.Methods = `"*"`
	} else if v.Methods, err = tokenList("CORS method", c.Methods, false); err != nil {
		return nil, err
	}
	if v.Headers, err = tokenList("CORS header", c.Headers, true); err != nil {
		return nil, err
	}
	if c.Echo {
		// The request's values, which nginx never lets hold a line break.
		v.Origin = "$http_origin"
		if star(c.Methods) {
			v.Methods = "$http_access_control_request_method"
		}
		if star(c.Headers) {
			v.Headers = "$http_access_control_request_headers"
		}
	}
	if v.Expose, err = tokenList("CORS exposed header", c.ExposeHeaders, true); err != nil {
		return nil, err
	}
	if c.MaxAge < 0 {
		return nil, fmt.Errorf("negative CORS max age %s", c.MaxAge)
	}
	v.MaxAge = int64(c.MaxAge / time.Second)
	if c.AllowAnyOrigin || len(c.Origins) == 0 {
		v.Any = true
		return v, nil
	}
	var keys []string
	for _, o := range c.Origins {
		if o == "*" {
			v.Any = true
			return v, nil
		}
		re, err := originRegexDepth(o, c.AnyDepth)
		if err != nil {
			return nil, err
		}
		q, err := Quote("~*" + re)
		if err != nil {
			return nil, err
		}
		keys = append(keys, q)
	}
	other := ""
	if c.AnswerPreflights {
		other, v.AnswerPreflights = "no", true
	}
	sig := other + " " + strings.Join(keys, " ")
	idx, ok := sp.cors[sig]
	if !ok {
		idx = len(sp.v.CORSMaps)
		sp.cors[sig] = idx
		sp.v.CORSMaps = append(sp.v.CORSMaps, corsMapView{Keys: keys, Other: other})
	}
	v.Map = idx
	return v, nil
}
