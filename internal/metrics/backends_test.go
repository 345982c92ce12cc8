package metrics

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestBackendEndpoints: a sync's Replace leaves exactly its backends as
// series, an endpoint push's Set changes one, and a backend the next
// sync no longer has is gone.
func TestBackendEndpoints(t *testing.T) {
	b := newBackendEndpoints()
	want := func(lines ...string) {
		t.Helper()
		exp := "# HELP causeway_backend_endpoints Ready endpoints per backend (namespace/service/port).\n# TYPE causeway_backend_endpoints gauge\n" + strings.Join(lines, "\n") + "\n"
		if len(lines) == 0 {
			exp = ""
		}
		if err := testutil.CollectAndCompare(b, strings.NewReader(exp)); err != nil {
			t.Error(err)
		}
	}
	want()
	b.Replace(maps.All(map[string]int{"shop/web/80": 2, "shop/api/8080": 0}))
	want(`causeway_backend_endpoints{backend="shop/api/8080"} 0`, `causeway_backend_endpoints{backend="shop/web/80"} 2`)
	b.Set("shop/api/8080", 3)
	want(`causeway_backend_endpoints{backend="shop/api/8080"} 3`, `causeway_backend_endpoints{backend="shop/web/80"} 2`)
	b.Replace(maps.All(map[string]int{"shop/web/80": 1}))
	want(`causeway_backend_endpoints{backend="shop/web/80"} 1`)
}

// BenchmarkBackendEndpointsGather is a scrape's gathering at 10,000
// backends, the bench/scale size: its garbage adds to a sync's peak when
// the two meet.
func BenchmarkBackendEndpointsGather(b *testing.B) {
	m := New()
	for i := range 10000 {
		m.BackendEndpoints.Set(fmt.Sprintf("bench-10000-a5/app-%05d/80", i), 1)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Registry.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}
