package render

import (
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
)

// TestCanaryMetricsSeries: a counted split location has a second series,
// with the canary label, that its balancer log hook picks for requests
// the canary serves; a location without a canary has one series only.
func TestCanaryMetricsSeries(t *testing.T) {
	split := loc(model.Prefix, "/split", nil)
	rule := model.CanaryRule{Weight: 10, WeightTotal: 100}
	split.Action.Proxy.Split = rule.Split(ingA, split.Action.Proxy.Backend, "shop/grpc/grpc")
	m := policyModel(&model.Server{Host: "canary.example.com", Locations: []*model.Location{split, loc(model.Prefix, "/main", nil)}})
	p := goldenParams
	mc := goldenMetrics
	p.Dynamic, p.Metrics = &Dynamic{}, &mc
	out, err := Render(m, p)
	if err != nil {
		t.Fatal(err)
	}
	var canaries []balancer.SeriesLabels
	for k, l := range out.Series {
		if k != balancer.SeriesKey(*l) {
			t.Errorf("key %q does not match its labels %+v", k, l)
		}
		if l.Canary != "" {
			canaries = append(canaries, *l)
		}
	}
	want := balancer.SeriesLabels{Namespace: ingA.Namespace, Ingress: ingA.Name, Service: "web", Path: "/split", Host: "canary.example.com", Canary: "shop-grpc-grpc"}
	if len(canaries) != 1 || canaries[0] != want {
		t.Fatalf("canary series %+v, want %+v", canaries, want)
	}
	var conf string
	for _, f := range out.Files {
		conf += string(f)
	}
	if n := strings.Count(conf, "set $"+balancer.CanaryMetricsVariable+` "`+balancer.SeriesKey(want)+`";`); n != 2 { // = /split and /split/
		t.Fatalf("the canary series key is set in %d locations, want 2", n)
	}
	want.Canary = ""
	if balancer.SeriesKey(want) == balancer.SeriesKey(canaries[0]) {
		t.Fatal("the canary label does not change the key")
	}
}
