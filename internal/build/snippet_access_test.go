package build

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
)

// TestClosedSnippetLocations: a refused server-snippet whose refusals
// are all deny-only location blocks closes only those locations, on
// every host of its Ingress, whether it was refused for its grammar or
// because snippets are off; one that refuses elsewhere still closes every
// path. The ConfigMap's server-snippet closes its locations on every host.
func TestClosedSnippetLocations(t *testing.T) {
	git := model.ClosedLocation{Modifier: "~", Path: `/\.git`}
	for _, tc := range []struct {
		name    string
		config  map[string]string
		server  string // the Ingress's server-snippet
		closed  []model.ClosedLocation
		served  bool // the Ingress's paths proxy
		problem string
	}{
		{"refused for its block, snippets on", map[string]string{"allow-snippet-annotations": "true"}, `location ~ /\.git { deny all; }`,
			[]model.ClosedLocation{git}, true, "the requests they match answer 503"},
		{"refused with snippets off", nil, `location ~ /\.git { deny all; }`,
			[]model.ClosedLocation{git}, true, "the requests they match answer 503"},
		{"a refusal outside a location", map[string]string{"allow-snippet-annotations": "true"}, "satisfy any;\n" + `location ~ /\.git { deny all; }`,
			nil, false, "every path of this Ingress answers 503"},
		{"the ConfigMap's", map[string]string{"allow-snippet-annotations": "true", "server-snippet": `location = /metrics { deny all; }`}, "",
			[]model.ClosedLocation{{Modifier: "=", Path: "/metrics"}}, true, "answer 503 on every host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := world(1)
			ing := mkIngress("default", "web", 0, rule("a.test", path("/", "Prefix", svcName(0), 80)), rule("b.test", path("/", "Prefix", svcName(0), 80)))
			if tc.server != "" {
				ing.Annotations = map[string]string{annotations.DefaultPrefix + "/server-snippet": tc.server}
			}
			s.Ingresses = append(s.Ingresses, ing)
			if tc.config != nil {
				s.ConfigMaps = append(s.ConfigMaps, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "config"}, Data: tc.config})
			}
			m, problems := Build(s, testOpts)
			for _, host := range []string{"a.test", "b.test"} {
				srv := server(m, host)
				var got []model.ClosedLocation
				for _, c := range srv.Closed {
					c.Source = model.ObjectRef{}
					got = append(got, c)
				}
				if !reflect.DeepEqual(got, tc.closed) {
					t.Errorf("%s: closed %+v, want %+v", host, got, tc.closed)
				}
				if served := srv.Locations[0].Action.Proxy != nil; served != tc.served {
					t.Errorf("%s: served %v, want %v", host, served, tc.served)
				}
			}
			found := false
			for _, p := range problems {
				found = found || strings.Contains(p.Message, tc.problem)
			}
			if !found {
				t.Errorf("no Problem says %q: %v", tc.problem, problems)
			}
		})
	}
}
