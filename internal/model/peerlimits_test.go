package model

import (
	"testing"
	"time"
)

func TestPeerLimitsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		l    PeerLimits
		ok   bool
	}{
		{"none", PeerLimits{}, true},
		{"nginx's defaults", PeerLimits{MaxFails: 1, FailTimeout: 10 * time.Second}, true},
		{"max conns alone", PeerLimits{MaxConns: 100}, true},
		{"fail timeout alone does nothing but is valid", PeerLimits{FailTimeout: time.Second}, true},
		{"max fails at its bound", PeerLimits{MaxFails: MaxPeerFails, FailTimeout: MaxPeerFailTimeout}, true},
		{"max fails over its bound", PeerLimits{MaxFails: MaxPeerFails + 1, FailTimeout: time.Second}, false},
		{"negative max fails", PeerLimits{MaxFails: -1, FailTimeout: time.Second}, false},
		{"max fails without a timeout", PeerLimits{MaxFails: 1}, false},
		{"fail timeout over a day", PeerLimits{MaxFails: 1, FailTimeout: MaxPeerFailTimeout + time.Millisecond}, false},
		{"fail timeout below a second", PeerLimits{MaxFails: 1, FailTimeout: 500 * time.Millisecond}, false},
		{"fail timeout not whole seconds", PeerLimits{MaxFails: 1, FailTimeout: 1500 * time.Millisecond}, false},
		{"negative fail timeout", PeerLimits{MaxFails: 1, FailTimeout: -time.Second}, false},
		{"max conns over its bound", PeerLimits{MaxConns: MaxPeerConns + 1}, false},
		{"negative max conns", PeerLimits{MaxConns: -1}, false},
	} {
		if err := tc.l.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}
