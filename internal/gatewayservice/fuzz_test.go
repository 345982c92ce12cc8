package gatewayservice

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzServiceName: whatever the Gateway's namespace and name, the Service
// name is a DNS-1035 label, and the labels are valid label values when
// the Gateway's names are valid Kubernetes names.
func FuzzServiceName(f *testing.F) {
	f.Add("default", "gw")
	f.Add("a", "b.c.d")
	f.Add("", "")
	f.Add("ns-with-a-very-long-name-that-goes-on-and-on-and-on-and-on-xyz", "x.y")
	f.Fuzz(func(t *testing.T, ns, name string) {
		n := ServiceName(ns, name)
		if errs := validation.IsDNS1035Label(n); len(errs) > 0 {
			t.Fatalf("ServiceName(%q, %q) = %q: %v", ns, name, n, errs)
		}
		if len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
			return
		}
		for k, v := range Labels(ns, name) {
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				t.Fatalf("label %s=%q: %v", k, v, errs)
			}
		}
	})
}

// FuzzParsePortRange: a range read back prints as it was written.
func FuzzParsePortRange(f *testing.F) {
	for _, s := range []string{"20000-20999", "1-65535", "0-1", "5-4", "-", "1--2", "08-09"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParsePortRange(s)
		if err != nil {
			return
		}
		if r.String() != s || r.First < 1 || r.Last > 65535 || r.First > r.Last {
			t.Fatalf("ParsePortRange(%q) = %v", s, r)
		}
	})
}
