package render

import (
	"fmt"
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
// With any origin allowed, a location has one if, the preflight's, and
// the other headers are its own add_header lines. ingress-nginx writes
// three ifs and a set, which listed origins keep (see the template). With
// Debian 12's Lua module (0.10.23) every if, like every location, costs
// its own OpenSSL context at each reload and nginx -t.
//
// Listed origins are matched by an if in the location, as ingress-nginx
// does, not by a map. A map block costs nginx about a megabyte of hash
// arrays, zeroed, at every reload, even with one entry, and glibc gives
// them back to the kernel at the block's end: 1,000 servers with an
// origin list each took 10.5-11.9 s to test with a map per server, 2.0-
// 2.4 s with the if, and 1.1-1.3 s without either (Lua module loaded,
// 2026-11-30). The map also evaluated its regular expressions one after
// the other, as the if does.

type corsView struct {
	// Any allows every origin ("*"); otherwise Origins are the quoted
	// case-insensitive regular expressions of the allowed ones, each
	// several origins' alternatives on a line of at most
	// corsOriginsLine bytes.
	Any     bool
	Origins []string
	// Origin is what Any answers: "*", or the request's Origin
	// (model.CORS.Echo).
	Origin      string
	Credentials bool
	// Methods, Headers and Expose are quoted lists, or "".
	Methods, Headers, Expose string
	// MaxAge is in seconds (0: not sent).
	MaxAge int64
	// AnswerPreflights answers the preflights of origins not allowed
	// (model.CORS.AnswerPreflights).
	AnswerPreflights bool
}

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
	line := ""
	flush := func() error {
		q, err := Quote(line)
		if err != nil {
			return err
		}
		v.Origins = append(v.Origins, q)
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
	v.AnswerPreflights = c.AnswerPreflights
	return v, nil
}
