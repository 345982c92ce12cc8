package build

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// subselectorWorld is world(2) where Service svc-a has three ready endpoints, each
// naming its Pod: v1 (10.0.0.1), v2 (10.0.0.2) and v2-canary (10.0.0.3),
// and one endpoint (10.0.0.4) that names no Pod.
func subselectorWorld() *source.Snapshot {
	snap := world(2)
	es := slice("default", svcName(0), "http", 8080, ep{addr: "10.0.0.1"}, ep{addr: "10.0.0.2"}, ep{addr: "10.0.0.3"}, ep{addr: "10.0.0.4"})
	for i, pod := range []string{"web-v1", "web-v2", "web-v2-canary"} {
		es.Endpoints[i].TargetRef = &corev1.ObjectReference{Kind: "Pod", Name: pod}
	}
	snap.EndpointSlices[0] = es
	pod := func(name string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: labels}}
	}
	snap.Pods = []*corev1.Pod{
		pod("web-v1", map[string]string{"app": "web", "version": "v1"}),
		pod("web-v2", map[string]string{"app": "web", "version": "v2"}),
		pod("web-v2-canary", map[string]string{"app": "web", "version": "v2", "track": "canary"}),
		// Same name in another namespace: not the endpoint's Pod.
		{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "web-v1", Labels: map[string]string{"version": "v2"}}},
	}
	return snap
}

// TestVirtualServerSubselector: an upstream's subselector keeps the
// endpoints whose Pods have its labels, in a backend of its own beside
// the Service port's; one that selects nothing is reported.
func TestVirtualServerSubselector(t *testing.T) {
	all := "default/" + svcName(0) + "/80"
	for _, tc := range []struct {
		name    string
		sel     map[string]string
		set     func(*source.Snapshot, *nicv1.VirtualServer)
		want    []string // endpoint addresses of the route's backend
		reasons []string
	}{
		{name: "no subselector: every endpoint", want: []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"}},
		{name: "one label", sel: map[string]string{"version": "v2"}, want: []string{"10.0.0.2", "10.0.0.3"}},
		{name: "every label must match", sel: map[string]string{"version": "v2", "track": "canary"}, want: []string{"10.0.0.3"}},
		{name: "selects none", sel: map[string]string{"version": "v3"}, want: nil, reasons: []string{model.ReasonMissingService}},
		{name: "a Pod's label change moves its endpoint", sel: map[string]string{"version": "v1"},
			set:  func(s *source.Snapshot, _ *nicv1.VirtualServer) { s.Pods[1].Labels["version"] = "v1" },
			want: []string{"10.0.0.1", "10.0.0.2"}},
		{name: "a missing Pod is not selected", sel: map[string]string{"app": "web"},
			set:  func(s *source.Snapshot, _ *nicv1.VirtualServer) { s.Pods = s.Pods[1:] },
			want: []string{"10.0.0.2", "10.0.0.3"}},
		{name: "with use-cluster-ip it has no effect", sel: map[string]string{"version": "v2"},
			set: func(s *source.Snapshot, vs *nicv1.VirtualServer) {
				s.Services[0].Spec.ClusterIP = "10.96.0.10"
				vs.Spec.Upstreams[0].UseClusterIP = true
			}, want: []string{"10.96.0.10"}, reasons: []string{model.ReasonUnsupported}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := subselectorWorld()
			vs := mkVirtualServer("cafe", "cafe.test", 0, pass("/", "a"))
			vs.Spec.Upstreams[0].Subselector = tc.sel
			snap.VirtualServers = []*nicv1.VirtualServer{vs}
			if tc.set != nil {
				tc.set(snap, vs)
			}
			m, problems := Build(snap, testOpts)
			key := server(m, "cafe.test").Match("/").Backend()
			switch {
			case len(tc.sel) == 0 && key != all:
				t.Errorf("backend %q, want the Service port's %q", key, all)
			case len(tc.sel) > 0 && !strings.HasPrefix(key, all+subselectorSuffix) && !strings.HasSuffix(key, clusterIPSuffix):
				t.Errorf("backend %q, want one of its own", key)
			}
			be := backendByKey(m, key)
			if be == nil {
				t.Fatalf("no backend %s", key)
			}
			var got []string
			for _, e := range be.Endpoints {
				got = append(got, e.Address)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("endpoints %v, want %v", got, tc.want)
			}
			if r := reasonsOf(problems, "VirtualServer", "cafe"); !slices.Equal(r, tc.reasons) {
				t.Errorf("problems %v, want reasons %v", problems, tc.reasons)
			}
		})
	}
}

// Two subselectors of one Service port are two backends; the same one in
// two VirtualServers is one.
func TestSubselectorBackendKeys(t *testing.T) {
	snap := subselectorWorld()
	v1 := mkVirtualServer("one", "one.test", 0, pass("/", "a"))
	v1.Spec.Upstreams[0].Subselector = map[string]string{"version": "v1"}
	v2 := mkVirtualServer("two", "two.test", 0, pass("/", "a"))
	v2.Spec.Upstreams[0].Subselector = map[string]string{"version": "v2"}
	again := mkVirtualServer("again", "again.test", 0, pass("/", "a"))
	again.Spec.Upstreams[0].Subselector = map[string]string{"version": "v2"}
	snap.VirtualServers = []*nicv1.VirtualServer{v1, v2, again}
	m, _ := Build(snap, testOpts)
	k1, k2, k3 := server(m, "one.test").Match("/").Backend(), server(m, "two.test").Match("/").Backend(), server(m, "again.test").Match("/").Backend()
	if k1 == k2 || k2 != k3 {
		t.Errorf("keys %q, %q, %q: want two different and the last two equal", k1, k2, k3)
	}
}
