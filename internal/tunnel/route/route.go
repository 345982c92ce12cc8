// Package route decides which agent carries a connection to a destination.
//
// A Table is an immutable snapshot built from the registered agents; the
// server rebuilds it whenever an agent registers, drains or leaves, and
// looks destinations up without locks. Lookup is a pure function of the
// table and the destination, so it is tested with tables alone.
package route

import (
	"errors"
	"fmt"
	"hash/fnv"
	"net/netip"
	"slices"
	"sort"
	"strings"
)

// Agent is what the routing table knows about one registered link.
type Agent struct {
	// ID identifies the link (one agent may hold several to one server
	// for a moment); it is the tie-breaker among equal candidates.
	ID string
	// Node is the agent's node name; the stable choice hashes it, so a
	// destination keeps its agent across reconnects.
	Node         string
	NodeIPs      []netip.Addr
	CIDRs        []netip.Prefix
	HostNames    []string
	DefaultRoute bool
	Draining     bool
}

// Match says which rule selected the agent.
type Match string

const (
	MatchNodeIP   Match = "nodeIP"
	MatchCIDR     Match = "cidr"
	MatchHostName Match = "hostName"
	MatchDefault  Match = "default"
)

var (
	// ErrNoAgent means no agent owns the destination and none is a
	// default route.
	ErrNoAgent = errors.New("no agent owns the destination")
	// ErrDraining means the agents that own the destination are all
	// draining. Less specific rules are not tried: they would send the
	// connection to a network that probably cannot reach it.
	ErrDraining = errors.New("every agent that owns the destination is draining")
)

// Table is an immutable routing snapshot.
type Table struct {
	byIP     map[netip.Addr][]*Agent
	byPrefix map[netip.Prefix][]*Agent
	// lengths4 and lengths6 are the distinct prefix lengths, longest
	// first, so the longest match is one map lookup per length.
	lengths4, lengths6 []int
	byHost             map[string][]*Agent
	defaults           []*Agent
	conflicts          []Conflict
	size               int
}

// Conflict is a node-IP claim the table ignores because the most specific
// CIDR containing the IP belongs to other agents. A node IP is the most
// specific claim there is, so without this rule an agent could list the
// addresses of a network the administrator granted to another agent, one
// by one, and take all of them.
type Conflict struct {
	IP     netip.Addr
	Agent  string // link ID of the claimant
	Node   string // its node
	Prefix netip.Prefix
	Owners []string // nodes holding Prefix, sorted
}

// NewTable builds a table from agents; it copies nothing the caller keeps
// mutating, so callers must pass fresh Agent values.
func NewTable(agents []Agent) *Table {
	t := &Table{byIP: map[netip.Addr][]*Agent{}, byPrefix: map[netip.Prefix][]*Agent{},
		byHost: map[string][]*Agent{}, size: len(agents)}
	byPrefix := t.byPrefix
	for i := range agents {
		for _, p := range agents[i].CIDRs {
			p = p.Masked()
			byPrefix[p] = append(byPrefix[p], &agents[i])
		}
	}
	seen4, seen6 := map[int]bool{}, map[int]bool{}
	for p := range byPrefix {
		if p.Addr().Is4() && !seen4[p.Bits()] {
			seen4[p.Bits()] = true
			t.lengths4 = append(t.lengths4, p.Bits())
		} else if p.Addr().Is6() && !seen6[p.Bits()] {
			seen6[p.Bits()] = true
			t.lengths6 = append(t.lengths6, p.Bits())
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(t.lengths4)))
	sort.Sort(sort.Reverse(sort.IntSlice(t.lengths6)))
	for i := range agents {
		a := &agents[i]
		for _, ip := range a.NodeIPs {
			ip = ip.Unmap()
			if p, owners, ok := t.longestPrefix(ip); ok && !holds(owners, a.Node) {
				t.conflicts = append(t.conflicts, conflict(ip, a, p, owners))
				continue
			}
			t.byIP[ip] = append(t.byIP[ip], a)
		}
		for _, h := range a.HostNames {
			h = normalizeHost(h)
			t.byHost[h] = append(t.byHost[h], a)
		}
		if a.DefaultRoute {
			t.defaults = append(t.defaults, a)
		}
	}
	sort.Slice(t.conflicts, func(i, j int) bool {
		ci, cj := t.conflicts[i], t.conflicts[j]
		if ci.IP != cj.IP {
			return ci.IP.Less(cj.IP)
		}
		return ci.Agent < cj.Agent
	})
	t.conflicts = slices.CompactFunc(t.conflicts, func(a, b Conflict) bool { return a.IP == b.IP && a.Agent == b.Agent })
	return t
}

// longestPrefix finds the most specific registered CIDR containing ip.
func (t *Table) longestPrefix(ip netip.Addr) (netip.Prefix, []*Agent, bool) {
	lengths := t.lengths6
	if ip.Is4() {
		lengths = t.lengths4
	}
	for _, bits := range lengths {
		p := netip.PrefixFrom(ip, bits).Masked()
		if as, ok := t.byPrefix[p]; ok {
			return p, as, true
		}
	}
	return netip.Prefix{}, nil, false
}

func holds(as []*Agent, node string) bool {
	for _, a := range as {
		if a.Node == node {
			return true
		}
	}
	return false
}

func conflict(ip netip.Addr, a *Agent, p netip.Prefix, owners []*Agent) Conflict {
	c := Conflict{IP: ip, Agent: a.ID, Node: a.Node, Prefix: p}
	for _, o := range owners {
		c.Owners = append(c.Owners, o.Node)
	}
	sort.Strings(c.Owners)
	c.Owners = slices.Compact(c.Owners)
	return c
}

// Conflicts lists the node-IP claims the table ignores, by IP and link.
func (t *Table) Conflicts() []Conflict { return t.conflicts }

// Len is the number of agents in the table.
func (t *Table) Len() int { return t.size }

// Lookup picks the agent for host, an IP address or a host name (no port).
// Rules, in order: an agent whose node IP is the destination (unless the
// longest CIDR containing it is another agent's: see Conflict); the agents
// with the longest CIDR containing it; agents registering the host name;
// default-route agents. Within the first rule that matches, draining
// agents are skipped and the choice among the rest is a stable hash of
// destination and node name.
func (t *Table) Lookup(host string) (Agent, Match, error) {
	host = normalizeHost(host)
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
		if as := t.byIP[ip]; len(as) > 0 {
			return pick(host, as, MatchNodeIP)
		}
		if _, as, ok := t.longestPrefix(ip); ok {
			return pick(host, as, MatchCIDR)
		}
	} else if as := t.byHost[host]; len(as) > 0 {
		return pick(host, as, MatchHostName)
	}
	if len(t.defaults) > 0 {
		return pick(host, t.defaults, MatchDefault)
	}
	return Agent{}, "", fmt.Errorf("%s: %w", host, ErrNoAgent)
}

// pick chooses by rendezvous hashing: each candidate scores
// hash(destination, node) and the highest wins, so adding or removing one
// agent moves only the destinations that agent wins or held.
func pick(dest string, as []*Agent, m Match) (Agent, Match, error) {
	var best *Agent
	var bestScore uint64
	for _, a := range as {
		if a.Draining {
			continue
		}
		s := score(dest, a.Node)
		if best == nil || s > bestScore || (s == bestScore && a.ID < best.ID) {
			best, bestScore = a, s
		}
	}
	if best == nil {
		return Agent{}, m, fmt.Errorf("%s (%s match): %w", dest, m, ErrDraining)
	}
	return *best, m, nil
}

func score(dest, node string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(dest))
	h.Write([]byte{0})
	h.Write([]byte(node))
	return h.Sum64()
}

func normalizeHost(h string) string {
	h = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
}

// Destinations returns every node IP in the table, sorted; the iptables
// manager DNATs exactly these (plus Prefixes).
func (t *Table) Destinations() []netip.Addr {
	out := make([]netip.Addr, 0, len(t.byIP))
	for ip := range t.byIP {
		out = append(out, ip)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	return out
}

// Prefixes returns every registered CIDR, longest first.
func (t *Table) Prefixes() []netip.Prefix {
	out := make([]netip.Prefix, 0, len(t.byPrefix))
	for p := range t.byPrefix {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Bits() != out[j].Bits() {
			return out[i].Bits() > out[j].Bits()
		}
		return out[i].String() < out[j].String()
	})
	return out
}
