package build

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
)

// responseCache gives a route of owner (a VirtualServer or
// VirtualServerRoute) the cache Policy p, in a zone of its own: as in
// NGINX Ingress Controller, two objects using one Policy do not share
// cached responses. The zone's name keeps the Policy's, after a digest of
// the owner and the Policy. A zone that would take the keys zones over
// model.MaxCacheZonesTotal is not made: the route is served without the
// cache (nil), reported. Objects come oldest first, so the oldest keep
// theirs.
func (b *virtualServerProcessor) responseCache(owner model.ObjectRef, p *nic.Policy) *model.ResponseCache {
	sum := sha256.Sum256([]byte(owner.Kind + "/" + owner.Key() + "|" + p.Ref.Key()))
	name := "cw_" + hex.EncodeToString(sum[:6]) + "_" + p.Cache.Zone.Name
	if b.cacheZones == nil {
		b.cacheZones = map[string]*model.CacheZone{}
	}
	if b.cacheZones[name] == nil {
		if b.cacheZonesSize+p.Cache.Zone.Size > model.MaxCacheZonesTotal {
			if key := "cache-total|" + owner.Key() + "|" + p.Ref.Key(); !b.reported[key] {
				b.reported[key] = true
				b.problem(owner, model.ReasonUnsupported, false,
					"Policy %s: its cache zone would take the keys zones of all caches over %d MiB together; "+
						"the routes using it are served without caching", p.Ref.Key(), model.MaxCacheZonesTotal>>20)
			}
			return nil
		}
		z := p.Cache.Zone
		z.Name = name
		b.cacheZones[name] = &z
		b.cacheZonesSize += z.Size
	}
	c := p.Cache.Cache
	c.Zone = name
	return &c
}

// usedCacheZones are the zones the served locations use, by name.
func (b *virtualServerProcessor) usedCacheZones() []*model.CacheZone {
	used := map[string]bool{}
	for _, srv := range b.model.Servers {
		for _, l := range srv.Locations {
			if l.Policy != nil && l.Policy.Cache != nil {
				used[l.Policy.Cache.Zone] = true
			}
		}
	}
	var out []*model.CacheZone
	for name, z := range b.cacheZones {
		if used[name] {
			out = append(out, z)
		}
	}
	slices.SortFunc(out, func(x, y *model.CacheZone) int { return strings.Compare(x.Name, y.Name) })
	return out
}
