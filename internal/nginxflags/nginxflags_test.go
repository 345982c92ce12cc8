package nginxflags

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestTableCoversIngressNginx: the table has exactly ingress-nginx's flag
// names (testdata lists them, with how they were read from its source),
// so no flag of an ingress-nginx command line is unknown to Causeway.
func TestTableCoversIngressNginx(t *testing.T) {
	data, err := os.ReadFile("testdata/ingress-nginx-flags.txt")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	klog := false
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case line == "# klog":
			klog = true
		case line == "" || strings.HasPrefix(line, "#"):
		default:
			want = append(want, line)
			if f, ok := Lookup(line); ok && f.Klog != klog {
				t.Errorf("--%s: Klog %v, want %v", line, f.Klog, klog)
			}
		}
	}
	slices.Sort(want)
	var got []string
	for _, f := range All() {
		got = append(got, f.Name)
	}
	if !reflect.DeepEqual(got, want) {
		for _, n := range want {
			if _, ok := Lookup(n); !ok {
				t.Errorf("ingress-nginx's --%s is not in the table", n)
			}
		}
		for _, n := range got {
			if !slices.Contains(want, n) {
				t.Errorf("--%s is in the table, not in ingress-nginx's list", n)
			}
		}
	}
}

// TestTableRows: each row is complete for its status.
func TestTableRows(t *testing.T) {
	for i, f := range table {
		if i > 0 && table[i-1].Name >= f.Name {
			t.Errorf("--%s is out of order (after --%s): Lookup searches a sorted table", f.Name, table[i-1].Name)
		}
		if !slices.Contains(Statuses, f.Status) {
			t.Errorf("--%s: status %q", f.Name, f.Status)
		}
		if f.Status.Taken() != (f.Causeway != "") {
			t.Errorf("--%s: status %s with Causeway flag %q", f.Name, f.Status, f.Causeway)
		}
		if (f.Status == SupportedWithDifference) != (f.Difference != "") {
			t.Errorf("--%s: status %s with difference %q", f.Name, f.Status, f.Difference)
		}
		if f.Status.Taken() == (f.Instead != "") {
			t.Errorf("--%s: status %s with instead %q", f.Name, f.Status, f.Instead)
		}
		if f.Harmless != "" && f.Status != Unsupported {
			t.Errorf("--%s: a harmless value on a %s flag", f.Name, f.Status)
		}
		for _, s := range []string{f.Difference, f.Instead} {
			if strings.HasSuffix(s, ".") {
				t.Errorf("--%s: %q ends in a full stop; the docs and logs add their own", f.Name, s)
			}
		}
	}
}

func TestIsHarmless(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        bool
	}{
		{"enable-topology-aware-routing", "false", true},
		{"enable-topology-aware-routing", "0", true},
		{"enable-topology-aware-routing", "true", false},
		{"enable-topology-aware-routing", "maybe", false},
		{"health-check-path", "/healthz", true},
		{"health-check-path", "/health", false},
		{"maxmind-license-key", "", false}, // no harmless value: any key asks for downloads
		{"profiling", "false", false},      // not-applicable: never "harmless" by this test
		{"election-id", "x", false},
	} {
		f, ok := Lookup(tc.name)
		if !ok {
			t.Fatalf("--%s not in the table", tc.name)
		}
		if got := f.IsHarmless(tc.value); got != tc.want {
			t.Errorf("--%s=%q harmless: %v, want %v", tc.name, tc.value, got, tc.want)
		}
	}
}

func TestParseArgs(t *testing.T) {
	got := ParseArgs([]string{"/nginx-ingress-controller", "--election-id=x", "--publish-service", "ns/svc", "--enable-ssl-passthrough",
		"--watch-ingress-without-class=false", "-v=2", "--v", "3", "--no-such-flag", "value", "--typo=1", "--", "--configmap=a/b"})
	want := []Arg{
		{Name: "election-id", Value: "x", Known: true},
		{Name: "publish-service", Value: "ns/svc", Known: true},
		{Name: "enable-ssl-passthrough", Value: "true", Known: true},
		{Name: "watch-ingress-without-class", Value: "false", Known: true},
		{Name: "v", Value: "2", Known: true},
		{Name: "v", Value: "3", Known: true},
		{Name: "no-such-flag"},
		{Name: "typo", Value: "1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseArgs:\n got %+v\nwant %+v", got, want)
	}
}
