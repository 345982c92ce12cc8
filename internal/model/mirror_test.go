package model

import "testing"

func TestMirrorValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    Mirror
		ok   bool
	}{
		{"URL", Mirror{URL: "http://m.example/x", Percent: 100}, true},
		{"URL with host", Mirror{URL: "http://m.example/x", Host: "h.example", Percent: 100}, true},
		{"backend", Mirror{Backend: "ns/svc/80", Percent: 1}, true},
		{"backend 100", Mirror{Backend: "ns/svc/80", Percent: 100}, true},
		{"neither", Mirror{Percent: 100}, false},
		{"both", Mirror{URL: "http://m.example/x", Backend: "ns/svc/80", Percent: 100}, false},
		{"backend with host", Mirror{Backend: "ns/svc/80", Host: "h.example", Percent: 100}, false},
		{"percent 0", Mirror{Backend: "ns/svc/80"}, false},
		{"percent 101", Mirror{Backend: "ns/svc/80", Percent: 101}, false},
		{"percent -1", Mirror{URL: "http://m.example/x", Percent: -1}, false},
	} {
		if err := tc.m.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}
