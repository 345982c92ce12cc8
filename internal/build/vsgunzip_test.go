package build

import (
	"strings"
	"testing"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
)

// TestVirtualServerGunzip: spec.gunzip turns the gunzip filter on for the
// VirtualServer's server where nginx has it, and is reported (the server
// served without it) where it does not.
func TestVirtualServerGunzip(t *testing.T) {
	for _, tc := range []struct {
		name      string
		available bool
		want      bool
		problem   string
	}{
		{"nginx with the gunzip filter", true, true, ""},
		{"nginx without it", false, false, "spec.gunzip: nginx has no gunzip filter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := world(2)
			vs := mkVirtualServer("cafe", "cafe.test", 0, pass("/", "a"))
			vs.Spec.Gunzip = true
			snap.VirtualServers = []*nicv1.VirtualServer{vs, mkVirtualServer("plain", "plain.test", 1, pass("/", "a"))}
			opts := testOpts
			opts.GunzipAvailable = tc.available
			m, problems := Build(snap, opts)
			srv := server(m, "cafe.test")
			if got := srv.Policy != nil && srv.Policy.Gunzip; got != tc.want {
				t.Errorf("gunzip %v, want %v", got, tc.want)
			}
			if p := server(m, "plain.test").Policy; p != nil && p.Gunzip {
				t.Error("a VirtualServer without spec.gunzip has it")
			}
			var found []string
			for _, p := range problems {
				if strings.Contains(p.Message, "gunzip") {
					found = append(found, p.Message)
				}
			}
			if (tc.problem == "") != (len(found) == 0) || tc.problem != "" && !strings.Contains(found[0], tc.problem) {
				t.Errorf("problems %q, want %q", found, tc.problem)
			}
			if srv.Match("/").Action.Proxy == nil {
				t.Error("the VirtualServer is not served")
			}
		})
	}
}
