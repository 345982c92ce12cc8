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
// several origins, or wildcard ones, a regular expression tells whether
// the request's Origin is allowed; the header then echoes it. Only
// add_header is used: headers-more is not loaded.
//
// A location has one if, the preflight's (two where the preflights of
// origins not allowed are answered too), and the other headers are its
// own add_header lines: with listed origins their values are the server's
// variables, empty for an origin not allowed (corsCheckView).
// ingress-nginx writes three ifs and a set. An if is a location
// configuration of its own: with every location's CORS, the preflights'
// ifs are a third of nginx -t and of nginx's memory at 10,000 distinct
// servers (bench/scale's README), and with Debian 12's Lua module
// (0.10.23) every if, like every location, costs an OpenSSL context at
// each reload and nginx -t.
//
// Listed origins are matched by regular expressions in ifs at the top of
// the server block (one set of ifs per distinct list), as ingress-nginx
// matches them in its locations, and not by a map: a map block costs
// nginx about a megabyte of hash arrays, zeroed, at every load even with
// one entry, and a fresh nginx (nginx -t, a start, the first reload) gives
// them back to the kernel at the block's end. At 1,000 Ingresses with an
// origin of their own (bench/scale -cors-origin, side by side): nginx -t
// 2.6-2.7 s instead of 6.4-7.0 s with a map per server, the start 5.3-5.5
// s instead of 13.4-15.6 s, the later reloads as long, and nginx a
// twelfth larger, as an if is a configuration of its own (with Debian's
// Lua module, an OpenSSL context too). An if in each location instead
// cost a reload as long as with maps and a sixth more memory. A server
// level if's match changes no configuration (nginx switches to an if's
// block only inside a location), so the location is found as without it.
// Each line's alternatives are anchored at both ends and at most
// corsOriginsLine bytes long. Since the same ifs set the header values
// too (corsCheckView), a location with listed origins has one if instead
// of three: at those 1,000 Ingresses nginx's memory went down by 30 %,
// below what the maps took, and nginx -t by a quarter or more.

type corsView struct {
	// Any allows every origin ("*"); otherwise Variable is the server's
	// variable that is "true" for an allowed origin.
	Any      bool
	Variable string
	// Origin is what Any answers: "*", or the request's Origin
	// (model.CORS.Echo).
	Origin string
	// Check is the index of that variable's view in serverView.CORSChecks.
	Check       int
	Credentials bool
	// Methods, Headers and Expose are quoted lists, or "".
	Methods, Headers, Expose string
	// MaxAge is in seconds (0: not sent).
	MaxAge int64
	// AnswerPreflights answers the preflights of origins not allowed
	// (their variable says "no"; model.CORS.AnswerPreflights).
	AnswerPreflights bool
}

// corsCheckView sets server variables from the request's Origin: Origins
// are quoted case-insensitive regular expressions, each a line of
// alternatives; Variable is set with the server's ID (see
// serverView.name). For an allowed origin Variable is "true", and
// Variable_origin, Variable_credentials and Variable_expose hold the
// values of the headers the locations add (the Origin, "true" and
// Expose); for another origin they are empty, so that add_header sends
// nothing and no location needs an if for them.
type corsCheckView struct {
	Variable string
	Origins  []string
	// Other is the value for a request with an Origin not allowed: "" as
	// for none, or "no" where such preflights are answered here.
	Other string
	// Expose is the quoted list of exposed headers, or "".
	Expose string
}

// corsCheckSuffixes name the variables a check sets besides its own.
var corsCheckSuffixes = []string{"_origin", "_credentials", "_expose"}

// corsOriginsLine bounds the length of one if's regular expression: no
// rendered line comes near nginx's 4 KiB token buffer
// (TestLinesFitNginxBuffer).
const corsOriginsLine = 768

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
	var res []string
	for _, o := range c.Origins {
		if o == "*" {
			v.Any = true
			return v, nil
		}
		re, err := originRegexDepth(o, c.AnyDepth)
		if err != nil {
			return nil, err
		}
		res = append(res, re)
	}
	// Each expression is anchored at both ends, so alternatives need no
	// group.
	var lines []string
	line := ""
	flush := func() error {
		q, err := Quote(line)
		if err != nil {
			return err
		}
		lines = append(lines, q)
		line = ""
		return nil
	}
	for _, re := range res {
		if line != "" && len(line)+1+len(re) > corsOriginsLine {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		if line != "" {
			line += "|"
		}
		line += re
	}
	if err := flush(); err != nil {
		return nil, err
	}
	other := ""
	if c.AnswerPreflights {
		other, v.AnswerPreflights = "no", true
	}
	sig := other + " " + v.Expose + " " + strings.Join(lines, " ")
	idx, ok := sp.cors[sig]
	if !ok {
		idx = len(sp.v.CORSChecks)
		sp.cors[sig] = idx
		sp.v.CORSChecks = append(sp.v.CORSChecks, corsCheckView{Origins: lines, Other: other, Expose: v.Expose})
	}
	v.Check = idx
	return v, nil
}
