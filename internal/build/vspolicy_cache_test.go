package build

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// TestCachePolicyZones: a cache Policy gets a zone per VirtualServer that
// uses it (two VirtualServers never share cached responses), one zone for
// all the routes of one VirtualServer, the VirtualServer's Policy on every
// route, and a route's own in its place; an upstream without buffering is
// reported; a Policy nothing serves leaves no zone.
func TestCachePolicyZones(t *testing.T) {
	snap := world(2)
	cache := func(zone string) nicv1.PolicySpec {
		return nicv1.PolicySpec{Cache: &nicv1.Cache{CacheZoneName: zone, CacheZoneSize: "1m", Time: "1m"}}
	}
	snap.Policies = []*nicv1.Policy{mkPolicy("pages", cache("pages")), mkPolicy("api", cache("api")), mkPolicy("idle", cache("idle"))}
	cafe := mkVirtualServer("cafe", "cafe.test", 0, pass("/", "a"), pass("/menu", "a"), pass("/api", "b"))
	cafe.Spec.Policies = []nicv1.PolicyReference{{Name: "pages"}}
	cafe.Spec.Routes[2].Policies = []nicv1.PolicyReference{{Name: "api"}}
	off := false
	cafe.Spec.Upstreams[1].Buffering = &off
	shop := mkVirtualServer("shop", "shop.test", 1, pass("/", "a"))
	shop.Spec.Policies = []nicv1.PolicyReference{{Name: "pages"}}
	snap.VirtualServers = []*nicv1.VirtualServer{cafe, shop}
	m, problems := Build(snap, testOpts)
	zone := func(host, path string) string {
		l := server(m, host).Match(path)
		if l.Policy == nil || l.Policy.Cache == nil {
			t.Fatalf("%s%s: no cache", host, path)
		}
		return l.Policy.Cache.Zone
	}
	root, menu, api, other := zone("cafe.test", "/"), zone("cafe.test", "/menu"), zone("cafe.test", "/api"), zone("shop.test", "/")
	switch {
	case root != menu:
		t.Errorf("one VirtualServer's routes use zones %s and %s, want one", root, menu)
	case root == other:
		t.Errorf("two VirtualServers share the zone %s", root)
	case !strings.HasSuffix(root, "_pages") || !strings.HasSuffix(api, "_api"):
		t.Errorf("zones %s and %s, want the Policies' names kept", root, api)
	}
	var names []string
	for _, z := range m.CacheZones {
		names = append(names, z.Name)
		if err := z.Validate(); err != nil {
			t.Error(err)
		}
	}
	want := []string{api, root, other}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("zones %v, want %v (none for the unused Policy)", names, want)
	}
	found := false
	for _, p := range problems {
		found = found || p.Object.Name == "cafe" && strings.Contains(p.Message, "route /api: the cache Policy needs buffering")
	}
	if !found {
		t.Errorf("problems %v, want one for /api's unbuffered upstream", problems)
	}
	if l := server(m, "cafe.test").Match("/api"); !reflect.DeepEqual(l.Policy.Cache.Valid, []model.CacheValid{{Duration: time.Minute}}) {
		t.Errorf("/api cache %+v", l.Policy.Cache)
	}
}

// TestCacheZonesTotal: the keys zones of all caches together stay within
// model.MaxCacheZonesTotal. Each VirtualServer using a 1g cache Policy
// gets a zone of its own; the fifth, youngest, is served without caching,
// reported once, and the others keep theirs.
func TestCacheZonesTotal(t *testing.T) {
	snap := world(2)
	snap.Policies = []*nicv1.Policy{mkPolicy("big", nicv1.PolicySpec{Cache: &nicv1.Cache{CacheZoneName: "big", CacheZoneSize: "1g", Time: "1m"}})}
	for i := range 5 {
		vs := mkVirtualServer("vs"+string(rune('a'+i)), string(rune('a'+i))+".test", i, pass("/", "a"), pass("/x", "a"))
		vs.Spec.Policies = []nicv1.PolicyReference{{Name: "big"}}
		snap.VirtualServers = append(snap.VirtualServers, vs)
	}
	m, problems := Build(snap, testOpts)
	var total model.Size
	for _, z := range m.CacheZones {
		total += z.Size
	}
	if len(m.CacheZones) != 4 || total != model.MaxCacheZonesTotal {
		t.Errorf("%d zones of %d bytes in total, want 4 of %d", len(m.CacheZones), total, model.MaxCacheZonesTotal)
	}
	for i := range 5 {
		host := string(rune('a'+i)) + ".test"
		for _, path := range []string{"/", "/x"} {
			l := server(m, host).Match(path)
			if cached := l.Policy != nil && l.Policy.Cache != nil; cached != (i < 4) {
				t.Errorf("%s%s cached %v", host, path, cached)
			}
			if l.Action.Proxy == nil {
				t.Errorf("%s%s not served", host, path)
			}
		}
	}
	var reported []string
	for _, p := range problems {
		if strings.Contains(p.Message, "over 4096 MiB together") {
			reported = append(reported, p.Object.Name)
		}
	}
	if !slices.Equal(reported, []string{"vse"}) {
		t.Errorf("reported on %v, want once on vse; problems %v", reported, problems)
	}
}
