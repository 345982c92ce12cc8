package controller

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/causeway/causeway/internal/externalname"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// ReasonExternalName is the reason of the Problems of an ExternalName
// Service whose name does not resolve.
const ReasonExternalName = "ExternalNameUnresolved"

// NameResolver resolves the names of ExternalName Services;
// *externalname.Resolver implements it.
type NameResolver interface {
	Configure(externalname.Settings)
	Keep(names []string)
	Lookup(name string) externalname.Answer
	Changed() <-chan struct{}
}

// fillExternalNames gives each ExternalName backend of m the addresses
// its name resolved to so far, as endpoints, and returns the Problems of
// names that do not resolve. keep makes m's names the ones resolved from
// now on (false for the trial builds of bisection). Without a resolver,
// such backends keep no endpoints and their paths answer 503.
func (c *Controller) fillExternalNames(m *model.Model, snap *source.Snapshot, keep bool) []model.Problem {
	r := c.opts.Names
	if r == nil {
		return nil
	}
	var names []string
	for _, b := range m.Backends {
		if b.External == nil {
			continue
		}
		if _, err := netip.ParseAddr(b.External.Host); err != nil {
			names = append(names, b.External.Host)
		}
	}
	r.Configure(externalname.Settings{Servers: m.Config.Resolvers, NoIPv6: m.Config.NoIPv6DNS})
	if keep {
		slices.Sort(names)
		r.Keep(slices.Compact(names))
	}
	res := &SyncResult{Model: m, Snapshot: snap}
	for _, b := range m.Backends {
		if b.External == nil || len(b.Endpoints) > 0 {
			continue // none, or an address written as the name
		}
		ans := r.Lookup(b.External.Host)
		for _, a := range ans.Addrs {
			b.Endpoints = append(b.Endpoints, model.Endpoint{Address: a.String(), Port: b.External.Port})
		}
		switch {
		case ans.Err == nil:
		case len(ans.Addrs) == 0:
			msg := fmt.Sprintf("externalName %q does not resolve: %v", b.External.Host, ans.Err)
			reportBackend(res, b.Key, ReasonExternalName, fmt.Sprintf("%s; backend %s answers 503", msg, b.Key), msg)
		default:
			reportBackend(res, b.Key, ReasonExternalName, fmt.Sprintf("externalName %q could not be resolved again: %v; its last %d addresses are used",
				b.External.Host, ans.Err, len(ans.Addrs)), "")
		}
	}
	return res.Problems
}

// namesChanged receives when a resolved name changed; nil (never) without
// a resolver.
func (c *Controller) namesChanged() <-chan struct{} {
	if c.opts.Names == nil {
		return nil
	}
	return c.opts.Names.Changed()
}
