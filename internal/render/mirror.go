package render

import (
	"strconv"

	"github.com/causeway/causeway/internal/model"
)

// Mirroring: the location copies each request to an internal location of
// the server, which proxies it to the mirror URL; nginx ignores the
// answer.

// mirrorUse is the quoted URI of the internal location a location mirrors
// to.
type mirrorUse struct {
	URI         string
	RequestBody bool
}

type mirrorLocationView struct {
	// URI is quoted; PassURL is the quoted proxy_pass target.
	URI, PassURL string
	Headers      headersView
}

// planMirror returns the mirror of a location, adding the internal
// location the first time a URL and Host pair is seen. Its URI is one no
// user location names exactly, since nginx refuses duplicate locations.
func (sp *serverPlan) planMirror(m *model.Mirror) (*mirrorUse, error) {
	pass, err := mirrorURL(m.URL)
	if err != nil {
		return nil, err
	}
	h := *sp.clientHeaders(&headersView{Module: "proxy", ProxyHost: m.Host == "", Custom: sp.rc.setHeaders})
	if m.Host != "" {
		if h.Host, err = Quote(string(m.Host)); err != nil {
			return nil, err
		}
	}
	key := pass + " " + h.Host
	uri, ok := sp.mirrors[key]
	if !ok {
		uri = `"` + sp.freeURI("/_causeway_mirror_", &sp.mirrorNext) + `"`
		sp.mirrors[key] = uri
		sp.v.MirrorLocations = append(sp.v.MirrorLocations, mirrorLocationView{URI: uri, PassURL: pass, Headers: h})
	}
	return &mirrorUse{URI: uri, RequestBody: m.RequestBody}, nil
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
