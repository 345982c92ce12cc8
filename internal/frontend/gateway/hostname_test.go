package gateway

import (
	"strings"
	"testing"
)

func TestCheckHostname(t *testing.T) {
	long63 := strings.Repeat("a", 63)
	for _, tc := range []struct {
		name, h string
		ok      bool
	}{
		{"Hostname: precise", "foo.example.com", true},
		{"Hostname: single label", "localhost", true},
		{"Hostname: wildcard label first", "*.example.com", true},
		{"Hostname: digits and inner dash", "a-1.b2.c", true},
		{"Hostname: 63-character label", long63 + ".com", true},
		{"Hostname: 253 characters", strings.Repeat(long63+".", 3) + strings.Repeat("a", 61), true},
		{"Hostname: empty", "", false},
		{"Hostname: 254 characters", strings.Repeat(long63+".", 3) + strings.Repeat("a", 62), false},
		{"RFC 1123: 64-character label", strings.Repeat("a", 64) + ".com", false},
		{"Hostname: upper case", "Foo.example.com", false},
		{"Hostname: IPs are not allowed", "10.0.0.1", false},
		{"Hostname: IPv6 is not allowed", "::1", false},
		{"Hostname: wildcard then IP", "*.10.0.0.1", false},
		{"Hostname: wildcard not first", "foo.*.example.com", false},
		{"Hostname: wildcard inside a label", "f*o.example.com", false},
		{"Hostname: bare wildcard", "*", false},
		{"Hostname: two wildcards", "*.*.example.com", false},
		{"Hostname: trailing dot", "example.com.", false},
		{"Hostname: leading dash", "-a.com", false},
		{"Hostname: trailing dash", "a-.com", false},
		{"Hostname: underscore", "a_b.com", false},
		{"Hostname: port", "a.com:80", false},
		{"hostile: nginx syntax", "a.com;return 200", false},
		{"hostile: newline", "a.com\nb", false},
		{"hostile: NUL", "a.com\x00", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckHostname(tc.h)
			if (err == nil) != tc.ok {
				t.Errorf("CheckHostname(%q) = %v, want ok=%v", tc.h, err, tc.ok)
			}
		})
	}
}

func TestIntersectHostnames(t *testing.T) {
	for _, tc := range []struct {
		name            string
		listener, route string
		want            string
		ok              bool
	}{
		{"Listener.Hostname: unspecified matches all", "", "foo.example.com", "foo.example.com", true},
		{"HTTPRoute.Hostnames: listener only", "foo.example.com", "", "foo.example.com", true},
		{"neither", "", "", "", true},
		{"HTTPRoute.Hostnames: test.example.com matches test.example.com", "test.example.com", "test.example.com", "test.example.com", true},
		{"HTTPRoute.Hostnames: test.example.com listener matches *.example.com route", "test.example.com", "*.example.com", "test.example.com", true},
		{"HTTPRoute.Hostnames: *.example.com listener matches test.example.com", "*.example.com", "test.example.com", "test.example.com", true},
		{"HTTPRoute.Hostnames: *.example.com listener matches foo.test.example.com", "*.example.com", "foo.test.example.com", "foo.test.example.com", true},
		{"HTTPRoute.Hostnames: *.example.com matches *.example.com", "*.example.com", "*.example.com", "*.example.com", true},
		{"HTTPRoute.Hostnames: *.example.com does not match example.com", "*.example.com", "example.com", "", false},
		{"HTTPRoute.Hostnames: *.example.com does not match test.example.net", "*.example.com", "test.example.net", "", false},
		{"wildcards: the more specific wins (listener)", "*.foo.example.com", "*.example.com", "*.foo.example.com", true},
		{"wildcards: the more specific wins (route)", "*.example.com", "*.foo.example.com", "*.foo.example.com", true},
		{"wildcards: disjoint", "*.example.com", "*.example.net", "", false},
		{"wildcards: suffix not on a label boundary", "*.example.com", "*.myexample.com", "", false},
		{"exact: suffix not on a label boundary", "*.example.com", "myexample.com", "", false},
		{"exact: different", "a.example.com", "b.example.com", "", false},
		{"TLSRoute.Hostnames: something.example.com listener matches *.example.com route", "something.example.com", "*.example.com", "something.example.com", true},
		{"wildcard vs its own suffix", "example.com", "*.example.com", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := IntersectHostnames(tc.listener, tc.route)
			if got != tc.want || ok != tc.ok {
				t.Errorf("IntersectHostnames(%q, %q) = %q, %v; want %q, %v", tc.listener, tc.route, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestEffectiveHostnames(t *testing.T) {
	for _, tc := range []struct {
		name     string
		listener string
		route    []string
		want     []string
		all, ok  bool
	}{
		{"neither names a hostname: every host", "", nil, nil, true, true},
		{"route names none: the listener's", "*.example.com", nil, []string{"*.example.com"}, false, true},
		{"listener names none: the route's", "", []string{"a.example.com", "b.example.net"}, []string{"a.example.com", "b.example.net"}, false, true},
		{"HTTPRoute.Hostnames: non-matching hostnames MUST be ignored", "*.example.com", []string{"test.example.com", "test.example.net"}, []string{"test.example.com"}, false, true},
		{"HTTPRoute.Hostnames: none match: not accepted", "*.example.com", []string{"example.com", "test.example.net"}, nil, false, false},
		{"duplicates after intersection collapse", "foo.example.com", []string{"*.example.com", "foo.example.com"}, []string{"foo.example.com"}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, all, ok := EffectiveHostnames(tc.listener, tc.route)
			if strings.Join(got, ",") != strings.Join(tc.want, ",") || all != tc.all || ok != tc.ok {
				t.Errorf("EffectiveHostnames(%q, %q) = %q, %v, %v; want %q, %v, %v", tc.listener, tc.route, got, all, ok, tc.want, tc.all, tc.ok)
			}
		})
	}
}

// TestWildcardAtEveryPosition: a '*' inserted at, or replacing the
// character at, any position is refused; only a whole first label "*." is
// a wildcard.
func TestWildcardAtEveryPosition(t *testing.T) {
	const h = "abc.def.example.com"
	for i := 0; i <= len(h); i++ {
		candidates := []string{h[:i] + "*" + h[i:]}
		if i < len(h) {
			candidates = append(candidates, h[:i]+"*"+h[i+1:])
		}
		for _, w := range candidates {
			if err := CheckHostname(w); err == nil {
				t.Errorf("CheckHostname(%q) accepted a misplaced wildcard", w)
			}
			if _, ok := IntersectHostnames("", w); !ok {
				t.Errorf("the empty listener hostname intersects everything, even %q", w)
			}
		}
	}
	if err := CheckHostname("*.def.example.com"); err != nil {
		t.Errorf("the leading wildcard label is valid: %v", err)
	}
}

// FuzzIntersectHostnames checks the intersection against the matching
// rule on concrete hosts: it is symmetric, every host the result matches
// both match, and the result is valid.
func FuzzIntersectHostnames(f *testing.F) {
	for _, s := range [][2]string{
		{"", ""}, {"*.example.com", "foo.example.com"}, {"*.a.example.com", "*.example.com"},
		{"example.com", "*.example.com"}, {"a.b", "a.b"}, {"*.com", "*.example.com"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if (a != "" && CheckHostname(a) != nil) || (b != "" && CheckHostname(b) != nil) {
			return
		}
		ab, okAB := IntersectHostnames(a, b)
		ba, okBA := IntersectHostnames(b, a)
		if ab != ba || okAB != okBA {
			t.Fatalf("not symmetric: %q∩%q = %q,%v but %q,%v", a, b, ab, okAB, ba, okBA)
		}
		if !okAB {
			// No host is matched by both: try the hosts each names.
			for _, h := range []string{concrete(a), concrete(b)} {
				if h != "" && HostnameMatches(a, h) && HostnameMatches(b, h) {
					t.Fatalf("%q∩%q is empty but both match %q", a, b, h)
				}
			}
			return
		}
		if ab != "" && CheckHostname(ab) != nil {
			t.Fatalf("%q∩%q = %q is not a valid hostname", a, b, ab)
		}
		if ab != a && ab != b {
			t.Fatalf("%q∩%q = %q is neither", a, b, ab)
		}
		if h := concrete(ab); h != "" && (!HostnameMatches(a, h) || !HostnameMatches(b, h)) {
			t.Fatalf("%q∩%q = %q matches %q, which %q or %q does not", a, b, ab, h, a, b)
		}
	})
}

// concrete is a precise host a hostname matches: the wildcard label
// replaced by a label.
func concrete(h string) string {
	if s, ok := wildcard(h); ok {
		return "x." + s
	}
	return h
}
