package render

import (
	"testing"
	"time"

	"github.com/causeway/causeway/internal/model"
)

// TestPeerParams: a backend's peer limits as nginx's server parameters;
// limits outside the model's bounds are refused.
func TestPeerParams(t *testing.T) {
	for _, tc := range []struct {
		l    model.PeerLimits
		want string
		err  bool
	}{
		{l: model.PeerLimits{}, want: "max_fails=0"},
		{l: model.PeerLimits{MaxFails: 1, FailTimeout: 10 * time.Second}, want: "max_fails=1 fail_timeout=10s"},
		{l: model.PeerLimits{MaxFails: 2, FailTimeout: 90 * time.Second, MaxConns: 4}, want: "max_fails=2 fail_timeout=90s max_conns=4"},
		{l: model.PeerLimits{MaxFails: 2, FailTimeout: 1500 * time.Millisecond}, err: true},
		{l: model.PeerLimits{MaxConns: 1}, want: "max_fails=0 max_conns=1"},
		{l: model.PeerLimits{MaxFails: 1}, err: true},
		{l: model.PeerLimits{MaxConns: -1}, err: true},
	} {
		got, err := peerParams(tc.l)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("peerParams(%+v) = %q, %v; want %q (error %v)", tc.l, got, err, tc.want, tc.err)
		}
	}
}
