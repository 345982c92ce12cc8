package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"slices"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/spanlog"
)

// Shared servers. nginx pays for every server block at each reload: its
// configuration is parsed, merged and given its own per-module state (with
// the Lua module loaded, an SSL context per server and per location). At
// 10,000 hosts that is seconds per reload. Most hosts are alike: the same
// paths with the same settings, each sending them to its own Services. In
// dynamic mode a location selects its backend with a variable, so such
// hosts can share one server block: one server_name per host, and per
// location a map from $host to that host's backend key.
//
// A shared server behaves exactly as the separate ones would: nginx picks a
// server by exact name before anything else, and only exact names are
// shared (wildcards and the default server keep their own; aliases are
// exact too), so the map is keyed by the very name that selected the
// server. Hosts with any other difference (paths, policy, certificate,
// redirect) land in different shapes and so in different servers: the
// shape is the whole view, policy included. What a shared server names
// (named and mirror locations) is per server block (serverView.name); its
// maps join those of the other shared servers in one file (hostmaps.go).

type mapView struct {
	Variable string
	Entries  []mapEntry
}

type mapEntry struct{ Host, Backend string }

// serverFiles renders every server of m: a file per host, or in dynamic
// mode a shared file per shape that more than one exact host has.
func serverFiles(m *model.Model, backends map[string]*model.Backend, p Params, lua bool, waf *modsecPlan) (Files, map[string][]model.ObjectRef, hashStats, *keyed, error) {
	files := Files{}
	sources := map[string][]model.ObjectRef{}
	refs := map[*memberView][]model.ObjectRef{}
	scopes := map[string]string{} // by shape key
	var hashes hashStats
	shapes := map[string][]*memberView{}
	firsts := map[string]*serverView{} // each shape's first server, whole
	var sh shaper
	var order []string
	var hosts []balancer.Host
	hostSources := map[string][]model.ObjectRef{}
	var families mapFamilies
	rc, err := newRenderCtx(m, backends, p, lua, waf)
	if err != nil {
		return nil, nil, hashes, nil, err
	}
	for _, srv := range m.Servers {
		rc.names[srv.Host] = true
	}
	// The catch-all and wildcard servers of Ingresses, rendered once it
	// is known whether some shape has a hop server (hop.go).
	type front struct {
		name string
		v    *serverView
	}
	var fronts []front
	// def is the catch-all, planned first: the servers that share its
	// SSL context (tlscontext.go) are rendered before it is.
	def, defAt, err := planCatchAll(rc)
	if err != nil {
		return nil, nil, hashes, nil, err
	}
	mayHop := lua && m.Config.ReloadFreeHosts
	rc.shareCatchAll = shareCatchAll(def, mayHop)
	deferred := map[string][]*memberView{} // by shape ID
	hop := HopState{Shapes: map[string]bool{}, Names: map[string]bool{},
		shapes: &hopShapes{servers: map[string]*serverView{}, hstsOverridden: rc.hstsOverridden, hsts: rc.hsts}}
	for i, srv := range m.Servers {
		v := def
		if i != defAt {
			if v, err = planServer(rc, srv); err != nil {
				return nil, nil, hashes, nil, fmt.Errorf("render server %q: %w", srv.Host, err)
			}
		}
		if v == nil {
			continue // on no listener: not served
		}
		var key string
		exact := lua && srv.Host != "" && !strings.HasPrefix(srv.Host, "*.")
		if exact {
			if key, err = sh.shape(v); err != nil {
				return nil, nil, hashes, nil, err
			}
			if srv.Scope == "" && hopDeferred(p, key, v) {
				mv := memberOf(v)
				deferred[shapeID(key)] = append(deferred[shapeID(key)], mv)
				refs[mv] = srv.Sources
				continue
			}
		}
		hashes.host(srv.Host)
		for _, n := range v.names {
			hashes.host(n)
			hop.Names[n] = true
		}
		for _, n := range v.ServerNames {
			hop.Names[unquoteName(n)] = true
		}
		if !exact {
			name, id := layout.ServerFile(srv.Host), hostID(srv.Host)
			if srv.Scope != "" {
				name, id = layout.ScopedServerFile(srv.Scope, srv.Host), scopedID(srv.Scope, srv.Host)
			}
			v.name(id, &hashes)
			rc.useSeries(v)
			rc.useSpans(v)
			sources[name] = srv.Sources
			if lua && srv.Scope == "" {
				fronts = append(fronts, front{name, v})
				continue
			}
			if files[name], err = rc.executeServer(v, def); err != nil {
				return nil, nil, hashes, nil, err
			}
			continue
		}
		mv := memberOf(v)
		refs[mv] = srv.Sources
		if _, seen := shapes[key]; !seen {
			order = append(order, key)
			firsts[key] = v
			if srv.Scope != "" {
				// A scoped server (a Gateway's) shares a file only
				// with servers of its listeners (the listen lines are
				// part of the shape); alone, its file and names are
				// its scope's, as its host may have servers in other
				// scopes too.
				scopes[key] = srv.Scope
			}
		}
		shapes[key] = append(shapes[key], mv)
	}
	if mayHop {
		// Now known: the catch-all serves the table's certificates only
		// if some shape of exact hosts is shared.
		shared := false
		for _, key := range order {
			if _, scoped := scopes[key]; len(shapes[key]) > 1 && !scoped {
				shared = true
				break
			}
		}
		rc.shareCatchAll = shareCatchAll(def, shared)
	}
	for _, key := range order {
		members := shapes[key]
		host := unquoteName(members[0].ServerNames[0])
		name := layout.ServerFile(host)
		v := firsts[key]
		id := hostID(host)
		if scope, ok := scopes[key]; ok {
			name, id = layout.ScopedServerFile(scope, host), scopedID(scope, host)
		}
		if len(members) > 1 {
			shared := shapeID(key) // key is the shape's SHA-256
			name = layout.SharedServerFile(shared)
			mapID, fam := families.join(scopes[key], shared, memberNames(members))
			var err error
			if v, err = share(shared, mapID, v, members, rc); err != nil {
				return nil, nil, hashes, nil, err
			}
			if fam != nil {
				fam.add(v.Maps)
				v.Maps = nil
			}
			for _, mv := range v.Maps {
				hashes.mapped(mv.Variable, len(mv.Entries))
			}
			id = "s" + shared
		}
		v.name(id, &hashes)
		var hopText []byte
		if _, isScoped := scopes[key]; len(members) > 1 && !isScoped {
			// The hop server is the named server's twin (hop.go).
			shared := shapeID(key)
			var err error
			if v.HopServer, hopText, err = hopServer(v, def, shared, rc); err != nil {
				return nil, nil, hashes, nil, err
			}
			if v.HopServer != nil {
				hop.Shapes[shared] = true
				hop.shapes.servers[shared] = hopShape(v)
			}
			if d := deferred[shared]; d != nil {
				hs, err := hopHosts(v, shared, d, rc)
				if err != nil {
					return nil, nil, hashes, nil, err
				}
				hosts = append(hosts, hs...)
				for _, dv := range d {
					for _, n := range dv.ServerNames {
						hostSources[unquoteName(n)] = refs[dv]
					}
				}
				delete(deferred, shared)
			}
		}
		rc.useSeries(v)
		rc.useSpans(v)
		out, err := rc.executeServer(v, def)
		if err != nil {
			return nil, nil, hashes, nil, err
		}
		if hopText != nil {
			// Last in the file (a shape with a hop server has no www.
			// twins), as the text its check read. One copy of the exact
			// size, as execute's.
			out = slices.Concat(bytes.TrimSuffix(out, []byte("\n")), hopText, []byte("\n"))
		}
		files[name] = out
		var all []model.ObjectRef
		for _, mv := range members {
			all = append(all, refs[mv]...)
			delete(refs, mv)
		}
		sources[name] = model.SortRefs(all)
		// The shape is rendered: its members' views are garbage from
		// here, not from the render's end, so the files and series made
		// from them are not live beside all of them (at 10,000 hosts the
		// views were a fifth of the render's peak).
		delete(shapes, key)
		delete(firsts, key)
	}
	if len(deferred) > 0 {
		return nil, nil, hashes, nil, errHopConflict // their shapes have no shared server now
	}
	if text, err := families.file(&hashes); err != nil {
		return nil, nil, hashes, nil, err
	} else if text != nil {
		files[layout.MapsFile] = text
	}
	for _, f := range fronts {
		if len(hop.Shapes) > 0 {
			if err := hopFront(f.v, rc); err != nil {
				return nil, nil, hashes, nil, err
			}
		}
		out, err := rc.executeServer(f.v, def)
		if err != nil {
			return nil, nil, hashes, nil, err
		}
		files[f.name] = out
	}
	if rc.tracing {
		countTracingVariables(&hashes, len(rc.spans))
	}
	for name := range rc.mirrors.splits {
		hashes.mapped(name, 0)
	}
	return files, sources, hashes, &keyed{series: rc.series, spans: rc.spans, tracing: rc.tracing, mirrors: rc.mirrors, hosts: hosts, hostSources: hostSources, hop: hop}, nil
}

// newRenderCtx is the context of a render of m's servers.
func newRenderCtx(m *model.Model, backends map[string]*model.Backend, p Params, lua bool, waf *modsecPlan) (*renderCtx, error) {
	rc := &renderCtx{m: m, backends: backends, p: p, lua: lua, names: map[string]bool{}, hstsOverridden: hstsOverridden(m),
		accessLog: accessLogArgs(m.Config), waf: waf, mirrors: mirrorPlan{splits: map[string]mirrorSplitView{}}}
	if p.Metrics != nil {
		q, err := Quote(p.StateDir.MetricsLog())
		if err != nil {
			return nil, fmt.Errorf("metrics log: %w", err)
		}
		rc.metricsLog = q + " " + metricsLogFormat + " " + metricsLogBuffer
	}
	if rc.tracing = tracingInUse(m); rc.tracing {
		q, err := Quote(p.StateDir.SpanLog())
		if err != nil {
			return nil, fmt.Errorf("span log: %w", err)
		}
		rc.spanLog = q + " " + spanLogFormat + " " + spanLogBuffer
	}
	var err error
	if rc.addHeaders, err = headerLines(m.Config.AddHeaders); err != nil {
		return nil, fmt.Errorf("add-headers: %w", err)
	}
	if rc.setHeaders, err = headerLines(m.Config.ProxySetHeaders); err != nil {
		return nil, fmt.Errorf("proxy-set-headers: %w", err)
	}
	rc.hsts = hopHSTS(m)
	if rc.defaultCert, err = defaultCertArg(m, p.StateDir); err != nil {
		return nil, err
	}
	return rc, nil
}

// keyed are the keys the rendered locations set for the controller's
// collectors, with what they stand for.
type keyed struct {
	series map[string]*balancer.SeriesLabels
	spans  map[string]spanlog.Labels
	// tracing: some location is traced.
	tracing bool
	// mirrors is what the locations' mirrors need of nginx.conf.
	mirrors mirrorPlan
	// hosts are the hosts left to the table, hostSources the objects
	// each of their names comes from, hop the HopState (hop.go).
	hosts       []balancer.Host
	hostSources map[string][]model.ObjectRef
	hop         HopState
}

// hostID names the maps of a host's own server: the catch-all's, or a
// digest of the host. Shared servers' IDs start with "s" instead.
func hostID(host string) string {
	if host == "" {
		return "default"
	}
	sum := sha256.Sum256([]byte(host))
	return "h" + hex.EncodeToString(sum[:6])
}

// scopedID is hostID for a server of a scope (model.Server.Scope).
func scopedID(scope, host string) string {
	sum := sha256.Sum256([]byte(scope + "\x00" + host))
	return "g" + hex.EncodeToString(sum[:6])
}

// name gives the server's CORS variables their names, which share one
// namespace across the http block, and counts them for the variables'
// hash. It runs once the server's file is known, so the names are no part
// of its shape.
func (v *serverView) name(id string, hashes *hashStats) {
	v.nameAuthUpstreams(id)
	for i := range v.CORSChecks {
		v.CORSChecks[i].Variable = "causeway_cors_" + id + "_" + strconv.Itoa(i)
		hashes.mapped(v.CORSChecks[i].Variable, 0)
		for _, suffix := range corsCheckSuffixes {
			hashes.mapped(v.CORSChecks[i].Variable+suffix, 0)
		}
	}
	if len(v.CORSChecks) == 0 {
		return // no location reads one: nothing to copy
	}
	locs := make([]locationView, len(v.Locations))
	for i, l := range v.Locations {
		if l.Policy != nil && l.Policy.CORS != nil && !l.Policy.CORS.Any {
			p, c := *l.Policy, *l.Policy.CORS
			c.Variable = v.CORSChecks[c.Check].Variable
			p.CORS = &c
			l.Policy = &p
		}
		locs[i] = l
	}
	v.Locations = locs
}

// shaper computes shapes, reusing its buffers from one server to the
// next: a copy of each of 10,000 views was a tenth of a render's garbage.
type shaper struct {
	c     serverView
	locs  []locationView
	vars  []logVar
	twins []twinView
	sum   []byte
	h     hash.Hash
	enc   *json.Encoder
}

// shape is the SHA-256 of everything about a server except its names,
// its sources and the backends its locations select.
func (s *shaper) shape(v *serverView) (string, error) {
	if s.h == nil {
		s.h = sha256.New()
		s.enc = json.NewEncoder(s.h)
		// Empty, not nil: encoded as [] (not null), as the shapes were
		// before, so shared files keep their names.
		s.twins, s.locs, s.vars = []twinView{}, []locationView{}, []logVar{}
	}
	s.c = *v
	s.c.ServerNames, s.c.Sources = nil, nil
	s.twins = slices.Grow(s.twins[:0], len(v.Twins))[:len(v.Twins)] // named after each host
	clear(s.twins)
	s.c.Twins = s.twins
	s.locs, s.vars = s.locs[:0], s.vars[:0]
	for _, l := range v.Locations {
		if l.Backend != "" {
			l.Backend, l.SelectKey = "", "backend"
		}
		// The access log's variables are per host, like the backend.
		if l.LogVars != nil {
			start := len(s.vars)
			for _, lv := range l.LogVars {
				s.vars = append(s.vars, logVar{Name: lv.Name})
			}
			l.LogVars = s.vars[start:len(s.vars):len(s.vars)]
		}
		s.locs = append(s.locs, l)
	}
	s.c.Locations = s.locs
	// The digest, not the text: at 10,000 hosts the texts held until the
	// end of the render were tens of megabytes. Encoded straight into the
	// hash: json.Marshal would copy each server's text, 38 MiB of garbage
	// per render at 10,000 hosts in 100 layouts.
	s.h.Reset()
	err := s.enc.Encode(&s.c)
	s.c = serverView{} // holds nothing of v until the next call
	if err != nil {
		return "", err
	}
	s.sum = s.h.Sum(s.sum[:0])
	return string(s.sum), nil
}

// share merges servers of one shape into one, named id. Locations that map
// every host to the same backends share one map. The maps are named after
// mapID: id, or the ID of the family they join (hostmaps.go).
func share(id, mapID string, first *serverView, members []*memberView, rc *renderCtx) (*serverView, error) {
	v := *first
	v.ServerNames = nil
	v.Sources = nil
	v.Twins = nil
	seen := map[string]bool{}
	for _, m := range members {
		v.ServerNames = append(v.ServerNames, m.ServerNames...)
		v.Twins = append(v.Twins, m.Twins...)
		for _, src := range m.Sources {
			if !seen[src] {
				seen[src] = true
				v.Sources = append(v.Sources, src)
			}
		}
	}
	variables := map[string]string{} // map entries -> variable
	v.Locations = make([]locationView, len(first.Locations))
	for i, l := range first.Locations {
		v.Locations[i] = l
		if err := shareLogVars(&v, id, mapID, i, members, variables, rc); err != nil {
			return nil, err
		}
		if l.Backend == "" {
			continue
		}
		var entries []mapEntry
		var sig strings.Builder
		for _, m := range members {
			key, err := Quote(m.Locations[i].Backend)
			if err != nil {
				return nil, err
			}
			for _, host := range m.ServerNames { // the host, then its aliases
				entries = append(entries, mapEntry{Host: host, Backend: key})
			}
			sig.WriteString(key + " ")
		}
		variable, ok := variables[sig.String()]
		if !ok {
			variable = mapVariable("route", mapID, len(v.Maps))
			variables[sig.String()] = variable
			v.Maps = append(v.Maps, mapView{Variable: variable, Entries: entries})
		}
		v.Locations[i].Backend, v.Locations[i].SelectKey = "", ""
		v.Locations[i].SelectMap = variable
	}
	return &v, nil
}

// memberView is what share and hopHosts read of a server of a shape: its
// names, twins and sources, and per location what a map may give it. The
// rest of its plan is its shape's first server's, and garbage once the
// shape is known: holding every plan until the shapes were shared kept
// about 45 MiB more alive during a render of 10,000 hosts in 100 shapes,
// which the collector's pacing doubles in the process's peak memory.
type memberView struct {
	ServerNames []string
	Twins       []twinView
	Sources     []string
	Locations   []memberLocation
}

type memberLocation struct {
	Backend, SelectKey string
	LogVars            []logVar
}

// memberOf is v as a member of its shape.
func memberOf(v *serverView) *memberView {
	m := &memberView{ServerNames: v.ServerNames, Twins: v.Twins, Sources: v.Sources, Locations: make([]memberLocation, len(v.Locations))}
	for i, l := range v.Locations {
		m.Locations[i] = memberLocation{Backend: l.Backend, SelectKey: l.SelectKey, LogVars: l.LogVars}
	}
	return m
}

// unquoteName strips the quotes of a plain quoted string without escapes:
// an exact host as serverName renders it, or a series key.
func unquoteName(name string) string {
	return strings.TrimSuffix(strings.TrimPrefix(name, `"`), `"`)
}

// shareLogVars gives location i of a shared server the access log
// variables of each member host: a value all members share stays as it
// is; any other comes from a map on $host, as backends do. variables
// (map entries -> variable) lets equal maps be one. The metrics series
// keys need no map: the location sets one shared key, and the render's
// series map that key and each member's names to the member's labels
// (the collector reads $host from the line).
func shareLogVars(v *serverView, id, mapID string, i int, members []*memberView, variables map[string]string, rc *renderCtx) error {
	lvs := members[0].Locations[i].LogVars
	if lvs == nil {
		return nil
	}
	out := make([]logVar, len(lvs))
	for j, lv := range lvs {
		out[j] = lv
		same := true
		for _, m := range members {
			same = same && m.Locations[i].LogVars[j].Value == lv.Value
		}
		if same {
			continue
		}
		if lv.Name == balancer.MetricsVariable || lv.Name == balancer.CanaryMetricsVariable {
			key := balancer.SharedSeriesKey(id, i, lv.Name)
			for _, m := range members {
				own := unquoteName(m.Locations[i].LogVars[j].Value) // a quoted hex key
				src, ok := rc.planned[own]
				if !ok {
					return fmt.Errorf("metrics series %s of %s is unknown", own, m.ServerNames[0])
				}
				for _, name := range m.ServerNames { // the host, then its aliases
					rc.putSharedSeries(key, unquoteName(name), src)
				}
			}
			q, err := Quote(key)
			if err != nil {
				return err
			}
			out[j].Value = q
			continue
		}
		if lv.Name == spanlog.Variable {
			q, err := rc.shareSpanKey(id, i, members, j)
			if err != nil {
				return err
			}
			out[j].Value = q
			continue
		}
		var entries []mapEntry
		var sig strings.Builder
		for _, m := range members {
			value := m.Locations[i].LogVars[j].Value
			for _, host := range m.ServerNames {
				entries = append(entries, mapEntry{Host: host, Backend: value})
			}
			sig.WriteString(value + " ")
		}
		variable, ok := variables[sig.String()]
		if !ok {
			variable = mapVariable("log", mapID, len(v.Maps))
			variables[sig.String()] = variable
			v.Maps = append(v.Maps, mapView{Variable: variable, Entries: entries})
		}
		out[j].Value = "$" + variable
	}
	v.Locations[i].LogVars = out
	return nil
}
