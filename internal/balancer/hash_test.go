package balancer

import "testing"

// TestHashBackends: the digest tells backend lists apart exactly when
// their push would differ.
func TestHashBackends(t *testing.T) {
	a := Backend{Key: "ns/a/80", Endpoints: []Endpoint{{Address: "10.0.0.1", Port: 8080}}}
	b := Backend{Key: "ns/b/80", Endpoints: []Endpoint{{Address: "10.0.0.2", Port: 8080}}}
	moved := b
	moved.Endpoints = []Endpoint{{Address: "10.0.0.3", Port: 8080}}
	retries := 2
	withRetries := a
	withRetries.Retries = &retries
	hash := func(bs ...Backend) [32]byte {
		t.Helper()
		h, err := HashBackends(bs)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	base := hash(a, b)
	for _, tc := range []struct {
		name string
		h    [32]byte
		same bool
	}{
		{"the same backends", hash(a, b), true},
		{"an endpoint moved", hash(a, moved), false},
		{"a setting added", hash(withRetries, b), false},
		{"the other order", hash(b, a), false},
		{"one backend fewer", hash(a), false},
		{"none", hash(), false},
	} {
		if (tc.h == base) != tc.same {
			t.Errorf("%s: equal %v, want %v", tc.name, tc.h == base, tc.same)
		}
	}
	if hash() != hash([]Backend{}...) {
		t.Error("no backends hash differently as nil and empty")
	}
}
