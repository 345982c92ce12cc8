package render

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// The shared servers' maps, merged. Every shared server selects its
// members' backends (and access log values) with maps on $host (group.go),
// and nginx pays for each map block at every reload: it builds the map's
// hash tables in arrays of about a megabyte that it frees at the block's
// end, and glibc hands the top of the heap back to the kernel at each
// free, so the next block faults every page in again (about 7 ms a map
// on the test machine, bench/scale's README). At 10,000 Ingresses in 100
// layouts that was 200 maps and half of nginx -t.
//
// A request reaches a shared server's location only with $host one of
// that server's names: shared servers hold exact names only and are never
// a default server, so nginx picks one by the request's host alone. A map
// on $host therefore needs only the entries of the servers that read it,
// and the maps of many shared servers can be one, as long as no name is
// in two of them. The k-th map of each shared server (causeway_route_ or
// causeway_log_, as share names them) joins the k-th map of its family:
// one family per scope (model.Server.Scope, "" for Ingresses and
// VirtualServers), written to one file (layout.MapsFile). A shared server
// with a name that is already in its family's maps (which the model's
// alias and host rules should never let happen) keeps maps of its own, so
// that a duplicate key, which nginx refuses, can never be written.

// mapFamilies gathers the shared servers' maps by scope.
type mapFamilies struct {
	byScope map[string]*mapFamily
	order   []*mapFamily
}

// mapFamily is one scope's merged maps: names are the map keys (quoted
// server names) any of them holds, maps their views by variable.
type mapFamily struct {
	id    string
	names map[string]bool
	maps  map[string]*mapView
	order []*mapView
}

// familyID is the 12 hex digits the merged maps of scope are named after,
// as a shape's ID names its own (balancer's host_var accepts both).
func familyID(scope string) string {
	sum := sha256.Sum256([]byte("causeway maps\x00" + scope))
	return hex.EncodeToString(sum[:shapeIDBytes])
}

// join tells the map ID the shared server of scope whose members have
// names should name its maps after: its family's, or own (the shape's ID)
// when one of the names is already in the family's maps.
func (f *mapFamilies) join(scope, own string, names []string) (string, *mapFamily) {
	if f.byScope == nil {
		f.byScope = map[string]*mapFamily{}
	}
	fam := f.byScope[scope]
	if fam == nil {
		fam = &mapFamily{id: familyID(scope), names: map[string]bool{}, maps: map[string]*mapView{}}
		f.byScope[scope] = fam
		f.order = append(f.order, fam)
	}
	for _, n := range names {
		if fam.names[n] {
			return own, nil
		}
	}
	for _, n := range names {
		fam.names[n] = true
	}
	return fam.id, fam
}

// add moves the maps of a shared server that joined fam into it.
func (fam *mapFamily) add(maps []mapView) {
	for _, mv := range maps {
		m := fam.maps[mv.Variable]
		if m == nil {
			m = &mapView{Variable: mv.Variable}
			fam.maps[mv.Variable] = m
			fam.order = append(fam.order, m)
		}
		m.Entries = append(m.Entries, mv.Entries...)
	}
}

// memberNames are the names of a shape's members: the keys of each of its
// maps.
func memberNames(members []*memberView) []string {
	var out []string
	for _, m := range members {
		out = append(out, m.ServerNames...)
	}
	return out
}

// file is the merged maps' file and counts them for the hash sizes; nil
// when no shared server joined a family. The file names no object: a
// refusal in it (a hash nginx cannot build) is found by bisection.
func (f *mapFamilies) file(hashes *hashStats) ([]byte, error) {
	var maps []mapView // what maps.conf.tmpl prints
	for _, fam := range f.order {
		for _, m := range fam.order {
			hashes.mapped(m.Variable, len(m.Entries))
			maps = append(maps, *m)
		}
	}
	if len(maps) == 0 {
		return nil, nil
	}
	return execute("maps.conf.tmpl", maps)
}

// mapVariable names a shared server's map: kind is "route" or "log", id
// the shape's or its family's ID, n the map's index in the server.
func mapVariable(kind, id string, n int) string {
	return "causeway_" + kind + "_" + id + "_" + strconv.Itoa(n)
}
