package main

import (
	"testing"
	"time"
)

// --shutdown-grace-period takes ingress-nginx's whole seconds or a Go
// duration.
func TestGracePeriodFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{in: "0", want: 0},
		{in: "5", want: 5 * time.Second},
		{in: "5s", want: 5 * time.Second},
		{in: "1m30s", want: 90 * time.Second},
		{in: "-1", bad: true},
		{in: "-2s", bad: true},
		{in: "soon", bad: true},
		{in: "", bad: true},
	} {
		var g gracePeriod
		err := g.Set(tc.in)
		if tc.bad != (err != nil) || (!tc.bad && time.Duration(g) != tc.want) {
			t.Errorf("Set(%q) = %v, %v; want %v (error %v)", tc.in, time.Duration(g), err, tc.want, tc.bad)
		}
	}
}
