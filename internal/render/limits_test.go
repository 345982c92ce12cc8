package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// TestZoneSizeIsBounded: zones share a fixed budget, never more than
// ingress-nginx's 5m each nor less than the floor.
func TestZoneSizeIsBounded(t *testing.T) {
	for _, tc := range []struct {
		zones int
		want  int64
	}{{0, 5 << 20}, {1, 5 << 20}, {12, 5 << 20}, {13, 5041 << 10}, {64, 1 << 20}, {256, 256 << 10}, {10000, 256 << 10}} {
		if got := zoneSize(tc.zones); got != tc.want {
			t.Errorf("zoneSize(%d) = %d, want %d", tc.zones, got, tc.want)
		}
		if tc.zones <= limitZonesBudget/minZoneSize && int64(tc.zones)*zoneSize(tc.zones) > limitZonesBudget {
			t.Errorf("%d zones of %d exceed the budget", tc.zones, zoneSize(tc.zones))
		}
	}
}

// TestLimitZonesAreSharedPerRate: many Ingresses with the same rate add no
// zone, each counts on its own (its scope), and every zone has the same
// key, so a reload never changes the key of a zone name.
func TestLimitZonesAreSharedPerRate(t *testing.T) {
	var servers []*model.Server
	for i := range 100 {
		l := loc(model.Prefix, "/", &model.Policy{Limits: &model.Limits{RPS: 10, BurstRPS: 50, Connections: 5}})
		l.Source = model.ObjectRef{Kind: "Ingress", Namespace: "shop", Name: fmt.Sprintf("ing-%d", i)}
		servers = append(servers, &model.Server{Host: fmt.Sprintf("h%d.example.com", i), Locations: []*model.Location{l}})
	}
	out, err := Render(policyModel(servers...), goldenParams)
	if err != nil {
		t.Fatal(err)
	}
	conf := string(out.Files["nginx.conf"])
	if n := strings.Count(conf, "limit_req_zone "); n != 1 {
		t.Errorf("%d limit_req_zone lines, want 1", n)
	}
	if n := strings.Count(conf, "limit_conn_zone "); n != 1 {
		t.Errorf("%d limit_conn_zone lines, want 1", n)
	}
	for _, line := range strings.Split(conf, "\n") {
		if strings.Contains(line, "_zone ") && !strings.Contains(line, "_zone $causeway_limit_key zone=") {
			t.Errorf("zone with another key: %s", line)
		}
	}
	scopes := map[string]bool{}
	for _, f := range out.Files {
		for _, line := range strings.Split(string(f), "\n") {
			if s, ok := strings.CutPrefix(strings.TrimSpace(line), "set $causeway_limit_scope "); ok {
				scopes[s] = true
			}
		}
	}
	if len(scopes) != 100 {
		t.Errorf("%d distinct scopes for 100 Ingresses", len(scopes))
	}
}

// TestLimitsWithoutBurst: a rate without a burst (a rateLimit Policy
// without burst) prints none; nginx refuses burst=0.
func TestLimitsWithoutBurst(t *testing.T) {
	for _, lim := range []*model.Limits{{RPS: 10}, {RPM: 30}, {RPS: 10, BurstRPS: 5}} {
		out, err := Render(policyModel(&model.Server{Host: "a.test",
			Locations: []*model.Location{loc(model.Prefix, "/", &model.Policy{Limits: lim})}}), goldenParams)
		if err != nil {
			t.Fatal(err)
		}
		var reqs []string
		for _, f := range out.Files {
			for _, line := range strings.Split(string(f), "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), "limit_req zone=") {
					reqs = append(reqs, strings.TrimSpace(line))
				}
			}
		}
		want := "nodelay;"
		if lim.BurstRPS > 0 {
			want = "burst=5 nodelay;"
		}
		if len(reqs) != 1 || strings.Contains(reqs[0], "burst=0") || !strings.HasSuffix(reqs[0], want) {
			t.Errorf("%+v: limit_req %q, want one ending %q", lim, reqs, want)
		}
	}
}

// TestLimitsRefuseNegativeValues: the renderer refuses what no front-end
// should produce.
func TestLimitsRefuseNegativeValues(t *testing.T) {
	neg := model.Size(-1)
	for _, lim := range []*model.Limits{{RPS: -1}, {Connections: -2}, {RPS: 1, BurstRPS: -1}, {Rate: &neg}} {
		m := policyModel(&model.Server{Host: "neg.example.com", Locations: []*model.Location{loc(model.Prefix, "/", &model.Policy{Limits: lim})}})
		if _, err := Render(m, goldenParams); err == nil {
			t.Errorf("%+v rendered", *lim)
		}
	}
}
