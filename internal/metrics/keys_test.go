package metrics

import (
	"testing"
	"time"
)

// TestKeysReuse: a key named again with the same labels is the same
// Key (nothing allocated, and no longer expiring); with other labels,
// or without Same, it is a new one carrying them.
func TestKeysReuse(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, tc := range []struct {
		name     string
		same     func(a, b string) bool
		labels   string
		wantKept bool
	}{
		{"same labels", func(a, b string) bool { return a == b }, "x", true},
		{"other labels", func(a, b string) bool { return a == b }, "y", false},
		{"no Same", nil, "x", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := Keys[string]{Same: tc.same}
			k.Set(map[string]string{"a": "x", "b": "x"}, now, time.Minute)
			first, _ := k.Get("a")
			k.Set(map[string]string{"b": "x"}, now, time.Minute) // a expires in a minute
			k.Set(map[string]string{"a": tc.labels, "b": "x"}, now.Add(time.Second), time.Minute)
			again, ok := k.Get("a")
			if !ok || again.Labels != tc.labels {
				t.Fatalf("a = %+v, %v; want labels %q", again, ok, tc.labels)
			}
			if kept := again == first; kept != tc.wantKept {
				t.Errorf("kept the Key: %v, want %v", kept, tc.wantKept)
			}
			// Named again, it no longer expires.
			if gone := k.Expire(now.Add(time.Hour)); gone["a"] || k.Len() != 2 {
				t.Errorf("expired %v, %d keys left; want a kept", gone, k.Len())
			}
		})
	}
}
