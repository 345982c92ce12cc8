package render

import (
	"fmt"

	"github.com/causeway/causeway/internal/model"
)

// Misdirected requests (model.HTTPListener.Hostnames): on an HTTPS port
// shared by Gateway listeners of different hostnames, two maps tell which
// listener a request's server name (SNI) goes to and which its Host goes
// to, by the same rule (exact hostname, else the longest wildcard, else
// the listener without a hostname: nginx's "hostnames" maps order keys
// that way, and Gateway wildcards cover any number of labels as nginx's
// do), and a third map is "1" when they differ. Every server on the port
// answers such a request 421. A connection without a server name is not
// checked: it chose no listener.

// misdirectedView is one port's maps (nginx.conf.tmpl).
type misdirectedView struct {
	Port int
	// Default is the number of the listener without a hostname, else 0
	// (none).
	Default int
	Entries []misdirectedEntry
}

// misdirectedEntry is one listener hostname, rendered as a map key, and
// its number.
type misdirectedEntry struct {
	Key string
	ID  int
}

// misdirectedVariable is the variable ("1" for a misdirected request) of
// HTTPS listener l, without "$"; "" when l has no check.
func misdirectedVariable(l *model.HTTPListener) string {
	if l == nil || !l.SSL || len(l.Hostnames) == 0 {
		return ""
	}
	return fmt.Sprintf("causeway_misdirected_%d", l.Port)
}

// planMisdirected are the maps of the HTTPS listeners with a check, one
// per port.
func planMisdirected(m *model.Model) ([]misdirectedView, error) {
	var out []misdirectedView
	seen := map[int]bool{}
	for _, l := range m.HTTPListeners {
		if misdirectedVariable(l) == "" || seen[l.Port] {
			continue
		}
		seen[l.Port] = true
		v := misdirectedView{Port: l.Port}
		for i, h := range l.Hostnames {
			id := i + 1
			if h == "" {
				v.Default = id
				continue
			}
			// The same characters server names allow (a "*" only as
			// the leading label); a wildcard stays nginx's own, which
			// covers any depth.
			if _, err := hostMatch(h, "~"); err != nil {
				return nil, fmt.Errorf("listener port %d: %w", l.Port, err)
			}
			key, err := Quote(h)
			if err != nil {
				return nil, err
			}
			v.Entries = append(v.Entries, misdirectedEntry{Key: key, ID: id})
		}
		out = append(out, v)
	}
	return out, nil
}
