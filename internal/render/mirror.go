package render

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
)

// Mirroring: the location copies each request to internal locations of
// the server (nginx's mirror directive, one per mirror), each of which
// proxies its copy to a mirror URL or backend; nginx ignores the
// answers.
//
// A mirror subrequest shares the variables of the request it copies (as
// external authentication's does, extauth_backend.go). A copy to a backend
// therefore names its backend in $causeway_mirror_backend and goes through
// an upstream of its own, so the request's $causeway_backend stays as it
// is, and is never retried: a retry would read the variable again, which
// the request's next mirror may have set since. The sharing is also what
// lets the copy carry the request headers the location computed (a
// RequestHeaderModifier's variables were set in the request's rewrite
// phase, before the mirror module runs).
//
// A mirror of less than every request returns early, in its internal
// location, unless a split_clients variable of nginx.conf picked the
// request: one per percentage and position among the location's mirrors,
// keyed on $request_id (128 random bits per request) with the position
// appended, so each copy is drawn on its own.

// mirrorUse is what a location prints: the quoted URIs of the internal
// locations it mirrors to, and whether the copies carry the body.
type mirrorUse struct {
	URIs        []string
	RequestBody bool
}

type mirrorLocationView struct {
	// URI is quoted; PassURL is the quoted proxy_pass target.
	URI, PassURL string
	Headers      headersView
	// OriginalURI sends X-Original-URI, as ingress-nginx's mirror does.
	OriginalURI bool `json:",omitempty"`
	// Sample is the split_clients variable that picks the requests
	// copied; "" copies every request.
	Sample string `json:",omitempty"`
	// Backend is the quoted key the mirror balancer reads (Lua data
	// plane); Return answers in place of proxying (plain mode, a backend
	// without endpoints).
	Backend string `json:",omitempty"`
	Return  int    `json:",omitempty"`
	// NoRetry keeps a copy to a backend from trying another endpoint.
	NoRetry bool `json:",omitempty"`
}

// mirrorSplitView is one split_clients of nginx.conf: Variable is "1"
// for Percent of the requests, "" for the others; Salt is appended to
// $request_id.
type mirrorSplitView struct {
	Variable      string
	Percent, Salt int
}

// mirrorPlan is what the servers' mirrors need of nginx.conf.
type mirrorPlan struct {
	// splits are the split_clients variables used, by name.
	splits map[string]mirrorSplitView
	// balancer: some mirror goes to a backend through the Lua balancer.
	balancer bool
}

// planMirrors returns the mirrors of a location planned as v, adding the
// internal locations the server has not got yet. An internal location's
// URI is one no user location names exactly, since nginx refuses
// duplicate locations.
func (sp *serverPlan) planMirrors(v *policyView, ms []model.Mirror) (*mirrorUse, error) {
	if len(ms) > model.MaxMirrors {
		return nil, fmt.Errorf("%d mirrors, at most %d", len(ms), model.MaxMirrors)
	}
	use := &mirrorUse{RequestBody: ms[0].RequestBody}
	for i, m := range ms {
		if err := m.Validate(); err != nil {
			return nil, err
		}
		if m.RequestBody != use.RequestBody {
			return nil, fmt.Errorf("mirrors with and without the request body: nginx has one mirror_request_body per location")
		}
		lv, err := sp.mirrorLocation(v, m, i)
		if err != nil {
			return nil, err
		}
		key := fmt.Sprintf("%#v", lv)
		uri, ok := sp.mirrors[key]
		if !ok {
			uri = `"` + sp.freeURI("/_causeway_mirror_", &sp.mirrorNext) + `"`
			sp.mirrors[key] = uri
			lv.URI = uri
			sp.v.MirrorLocations = append(sp.v.MirrorLocations, lv)
		}
		use.URIs = append(use.URIs, uri)
	}
	return use, nil
}

// mirrorLocation is the internal location (without its URI) of mirror m,
// the i-th of a location planned as v.
func (sp *serverPlan) mirrorLocation(v *policyView, m model.Mirror, i int) (mirrorLocationView, error) {
	var lv mirrorLocationView
	if m.Percent < 100 {
		s := mirrorSplitView{Variable: "causeway_mirror_" + strconv.Itoa(m.Percent) + "_" + strconv.Itoa(i), Percent: m.Percent, Salt: i}
		sp.rc.mirrors.splits[s.Variable] = s
		lv.Sample = s.Variable
	}
	if m.URL != "" {
		pass, err := mirrorURL(m.URL)
		if err != nil {
			return lv, err
		}
		lv.PassURL, lv.OriginalURI = pass, true
		lv.Headers = *sp.clientHeaders(&headersView{Module: "proxy", ProxyHost: m.Host == "", Custom: sp.rc.setHeaders})
		if m.Host != "" {
			if lv.Headers.Host, err = Quote(string(m.Host)); err != nil {
				return lv, err
			}
		}
		return lv, nil
	}
	// A copy to a backend is the request the location sends its own.
	lv.NoRetry = true
	if v.Module != "proxy" || v.SSL != nil {
		return lv, fmt.Errorf("mirror to backend %q from a location speaking %s%s: only plain HTTP is mirrored", m.Backend, v.Module,
			map[bool]string{true: " over TLS"}[v.SSL != nil])
	}
	if v.Headers != nil {
		lv.Headers = *v.Headers
	} else {
		lv.Headers = *sp.clientHeaders(&headersView{Module: "proxy", Custom: sp.rc.setHeaders})
	}
	if err := balancer.ValidateKey(m.Backend); err != nil {
		return lv, err
	}
	if sp.rc.lua {
		// ValidateKey admits nothing that needs escaping in quotes.
		lv.Backend = `"` + m.Backend + `"`
		lv.PassURL = "http://" + balancer.MirrorUpstreamName + "$request_uri"
		sp.rc.mirrors.balancer = true
		return lv, nil
	}
	name, err := upstreamName(m.Backend)
	if err != nil {
		return lv, err
	}
	if b := sp.rc.backends[m.Backend]; b == nil || len(b.Endpoints) == 0 {
		lv.Return = 503 // no ready endpoint: nothing to copy to
		return lv, nil
	}
	lv.PassURL = "http://" + name + "$request_uri"
	return lv, nil
}

// freeURI returns the next path prefix+N, counting with *next, that no
// user location names exactly (nginx refuses duplicate locations).
func (sp *serverPlan) freeURI(prefix string, next *int) string {
	for {
		path := prefix + strconv.Itoa(*next)
		*next++
		if !sp.reserved[path] {
			return path
		}
	}
}

// planMirrors declares what the servers' mirrors use: the mirror
// balancer and the split_clients variables, in a stable order.
func (v *mainView) planMirrors(p mirrorPlan) {
	if p.balancer {
		v.MirrorBalancer = balancer.MirrorUpstreamName
	}
	for _, name := range slices.Sorted(maps.Keys(p.splits)) {
		v.MirrorSplits = append(v.MirrorSplits, p.splits[name])
	}
}
