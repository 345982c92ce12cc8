package render

import (
	"errors"
	"strings"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
)

// Hosts added without a render of the cluster. A render defers a new host
// of a shape with a hop server to the table (hop.go), but it is a render
// of every server: at 10,000 Ingresses, with the build before it, about a
// second for one new host. HopHosts gives the same table entries from a
// model of the changed objects alone, reading of the last render only
// what the entries depend on: each shape's shared server (its maps'
// variables, its hop server's socket, its certificate) and the two
// values of the whole cluster that a server's text reads (some server has
// HSTS of its own; the http level defines $causeway_hsts).
//
// The server's text, and so its shape, is planned from the small model
// as the whole render plans it: anything of the cluster that would have
// planned it otherwise (TLS passthrough, a tracing or ModSecurity setting
// the model's objects bring) changes the shape, and no shape with a hop
// server matches. The caller (the controller) runs its full sync after
// anyway, which renders what is authoritative.

// hopShapes is what HopHosts reads of the render a HopState comes from.
type hopShapes struct {
	// servers are the shared servers of the shapes with a hop server, by
	// shape ID, with only what hopHosts reads of them.
	servers map[string]*serverView
	// hstsOverridden and hsts are the render's renderCtx's.
	hstsOverridden, hsts bool
}

// hopShape is what hopHosts reads of the shared server v.
func hopShape(v *serverView) *serverView {
	return &serverView{Locations: v.Locations, HopServer: v.HopServer, CertLua: v.CertLua, Cert: v.Cert}
}

// ErrNotHop is HopHosts' answer when some server of the model cannot be
// served from the table of the configuration p.Hop describes.
var ErrNotHop = errors.New("not a new host of a shape with a hop server")

// HopAdded is what HopHosts gives: the table's entries for the model's
// hosts, the objects each name comes from, and the metrics series keys
// their entries name, with their labels.
type HopAdded struct {
	Hosts   []balancer.Host
	Sources map[string][]model.ObjectRef
	Series  map[string]*balancer.SeriesLabels
}

// HopHosts is the table's entries for the servers of m, a model of some
// objects without the rest of the cluster's servers, as a render of the
// whole cluster given p.Hop would list them. Every server of m but the
// catch-all must be a new exact host (p.Hop serves none of its names) of
// a shape with a hop server in p.Hop, and fit its maps; else ErrNotHop.
// m's catch-all server is not looked at: the caller sees to it that the
// objects change nothing of it.
func HopHosts(m *model.Model, p Params) (*HopAdded, error) {
	if p.Hop == nil || p.Hop.shapes == nil || len(p.Hop.shapes.servers) == 0 || !m.Config.ReloadFreeHosts {
		return nil, ErrNotHop
	}
	lua, err := planLuaMode(m, p)
	if err != nil {
		return nil, err
	}
	waf, err := planModSecurity(m, p)
	if err != nil {
		return nil, err
	}
	if lua == nil || waf != nil {
		return nil, ErrNotHop
	}
	backends := make(map[string]*model.Backend, len(m.Backends))
	for _, b := range m.Backends {
		backends[b.Key] = b
	}
	rc, err := newRenderCtx(m, backends, p, true, nil)
	if err != nil {
		return nil, err
	}
	rc.hstsOverridden, rc.hsts = p.Hop.shapes.hstsOverridden, p.Hop.shapes.hsts
	rc.taken = p.Hop.Names
	for _, srv := range m.Servers {
		rc.names[srv.Host] = true
	}
	out := &HopAdded{Sources: map[string][]model.ObjectRef{}}
	var sh shaper
	for _, srv := range m.Servers {
		if srv.Host == "" {
			continue
		}
		if srv.Scope != "" || strings.HasPrefix(srv.Host, "*.") {
			return nil, ErrNotHop
		}
		v, err := planServer(rc, srv)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, ErrNotHop
		}
		key, err := sh.shape(v)
		if err != nil {
			return nil, err
		}
		id := shapeID(key)
		shared := p.Hop.shapes.servers[id]
		if shared == nil || !hopDeferred(p, key, v) {
			return nil, ErrNotHop
		}
		hosts, err := hopHosts(shared, id, []*memberView{memberOf(v)}, rc)
		if errors.Is(err, errHopConflict) {
			return nil, ErrNotHop
		}
		if err != nil {
			return nil, err
		}
		out.Hosts = append(out.Hosts, hosts...)
		for _, h := range hosts {
			out.Sources[h.Name] = srv.Sources
		}
	}
	if len(rc.spans) > 0 {
		// Traced: the exporter's span keys go with the full sync.
		return nil, ErrNotHop
	}
	out.Series = rc.series
	return out, nil
}
