package model

import "testing"

func TestBusyBuffersFit(t *testing.T) {
	for _, tc := range []struct {
		busy Size
		n    int
		size Size
		ok   bool
	}{
		{busy: 4 << 10, ok: true},   // one default buffer
		{busy: 12 << 10, ok: true},  // all four default buffers but one
		{busy: 16 << 10, ok: false}, // all four
		{busy: 2 << 10, ok: false},  // less than one buffer
		{busy: 8 << 10, n: 2, ok: false},
		{busy: 4 << 10, n: 2, ok: true},
		{busy: 56 << 10, n: 8, size: 8 << 10, ok: true},
		{busy: 57 << 10, n: 8, size: 8 << 10, ok: false},
		{busy: 4 << 10, n: 8, size: 8 << 10, ok: false},
		{busy: 16 << 10, size: 16 << 10, ok: true},
	} {
		err := BusyBuffersFit(tc.busy, tc.n, tc.size)
		if (err == nil) != tc.ok {
			t.Errorf("BusyBuffersFit(%d, %d, %d) = %v, want ok %v", tc.busy, tc.n, tc.size, err, tc.ok)
		}
	}
}
