package externaldns

import (
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	extdnsv1 "github.com/causeway/causeway/internal/apis/externaldns/v1"
	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/owned"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		ed   nicv1.ExternalDNS
		err  string
	}{
		{name: "enable alone", ed: nicv1.ExternalDNS{Enable: true}},
		{name: "every field", ed: nicv1.ExternalDNS{Enable: true, RecordType: "CNAME", RecordTTL: 300, Labels: map[string]string{"team": "coffee"},
			ProviderSpecific: nicv1.ProviderSpecific{{Name: "aws/weight", Value: "10"}}}},
		{name: "an unknown record type", ed: nicv1.ExternalDNS{RecordType: "AAAAA"}, err: "recordType"},
		{name: "lower case is not a record type", ed: nicv1.ExternalDNS{RecordType: "a"}, err: "recordType"},
		{name: "a negative TTL", ed: nicv1.ExternalDNS{RecordTTL: -1}, err: "recordTTL"},
		{name: "a TTL over 2^31-1", ed: nicv1.ExternalDNS{RecordTTL: 1 << 31}, err: "recordTTL"},
		{name: "a label key that is no name", ed: nicv1.ExternalDNS{Labels: map[string]string{"a b": "c"}}, err: "labels: key"},
		{name: "a property without a name", ed: nicv1.ExternalDNS{ProviderSpecific: nicv1.ProviderSpecific{{Value: "x"}}}, err: "providerSpecific[0]"},
	} {
		err := Check(&tc.ed)
		if (err != nil) != (tc.err != "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: Check() = %v, want %q", tc.name, err, tc.err)
		}
	}
}

func cafe(ed nicv1.ExternalDNS) *nicv1.VirtualServer {
	return &nicv1.VirtualServer{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cafe", UID: "vs-uid", Labels: map[string]string{"team": "coffee"}},
		Spec:       nicv1.VirtualServerSpec{Host: "cafe.example.com", ExternalDNS: ed},
	}
}

func decode(t *testing.T, u *unstructured.Unstructured) *extdnsv1.DNSEndpoint {
	t.Helper()
	var dep extdnsv1.DNSEndpoint
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &dep); err != nil {
		t.Fatal(err)
	}
	return &dep
}

// TestWant: one record set per type derived from the published addresses
// (A, AAAA, CNAME), or the type the VirtualServer names, for its host.
func TestWant(t *testing.T) {
	addrs := []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.20"}, {IP: "192.0.2.10"}, {IP: "2001:db8::1"}, {Hostname: "lb.example.net"}}
	u, err := Want(cafe(nicv1.ExternalDNS{Enable: true, RecordTTL: 60, Labels: map[string]string{"zone": "public"},
		ProviderSpecific: nicv1.ProviderSpecific{{Name: "aws/evaluate-target-health", Value: "true"}}}), addrs)
	if err != nil {
		t.Fatal(err)
	}
	dep := decode(t, u)
	if u.GetAPIVersion() != "externaldns.nginx.org/v1" || u.GetKind() != "DNSEndpoint" || dep.Namespace != "shop" || dep.Name != "cafe" ||
		dep.Labels["team"] != "coffee" || !owned.ControlledBy(u, "vs-uid") {
		t.Errorf("object %+v", dep.ObjectMeta)
	}
	want := []struct {
		typ     string
		targets string
	}{{"A", "192.0.2.10,192.0.2.20"}, {"AAAA", "2001:db8::1"}, {"CNAME", "lb.example.net"}}
	if len(dep.Spec.Endpoints) != len(want) {
		t.Fatalf("endpoints %+v", dep.Spec.Endpoints)
	}
	for i, e := range dep.Spec.Endpoints {
		if e.DNSName != "cafe.example.com" || e.RecordType != want[i].typ || strings.Join(e.Targets, ",") != want[i].targets ||
			e.RecordTTL != 60 || e.Labels["zone"] != "public" || len(e.ProviderSpecific) != 1 {
			t.Errorf("endpoint %d: %+v", i, e)
		}
	}

	u, err = Want(cafe(nicv1.ExternalDNS{Enable: true, RecordType: "A"}), addrs[:1])
	if err != nil || decode(t, u).Spec.Endpoints[0].RecordType != "A" {
		t.Errorf("recordType: %v, %v", u, err)
	}
	if u, err := Want(cafe(nicv1.ExternalDNS{}), addrs); u != nil || err != nil {
		t.Errorf("not enabled: %v, %v", u, err)
	}
	if _, err := Want(cafe(nicv1.ExternalDNS{Enable: true}), nil); err != errNoAddress {
		t.Errorf("no address: %v", err)
	}
	if _, err := Want(cafe(nicv1.ExternalDNS{Enable: true, RecordType: "BAD"}), addrs); err == nil {
		t.Error("an invalid request gave no error")
	}

	// The Kind waits for the addresses.
	known := false
	k := Kind(func() ([]networkingv1.IngressLoadBalancerIngress, bool) { return addrs, known })
	if u, err := k.Want(cafe(nicv1.ExternalDNS{Enable: true})); u != nil || err != nil {
		t.Errorf("addresses unknown: %v, %v", u, err)
	}
	known = true
	if u, err := k.Want(cafe(nicv1.ExternalDNS{Enable: true})); u == nil || err != nil {
		t.Errorf("addresses known: %v, %v", u, err)
	}
}

func TestDiffers(t *testing.T) {
	addrs := []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.10"}}
	want, _ := Want(cafe(nicv1.ExternalDNS{Enable: true}), addrs)
	same, _ := Want(cafe(nicv1.ExternalDNS{Enable: true}), addrs)
	same.Object["status"] = map[string]any{"observedGeneration": int64(3)}
	if Differs(same, want) {
		t.Error("external-dns's status made it differ")
	}
	moved, _ := Want(cafe(nicv1.ExternalDNS{Enable: true}), []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.11"}})
	if !Differs(moved, want) {
		t.Error("another address does not differ")
	}
	ttl, _ := Want(cafe(nicv1.ExternalDNS{Enable: true, RecordTTL: 30}), addrs)
	if !Differs(ttl, want) {
		t.Error("another TTL does not differ")
	}
}
