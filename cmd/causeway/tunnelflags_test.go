package main

import (
	"io"
	"strings"
	"testing"
)

// TestTunnelServerFlagsNeedTheirs: a tunnel server flag without the flag it
// needs is refused before anything starts (it used to be checked after the
// listeners; here the agents' CA file does not exist, which a server that
// went on would fail on instead).
func TestTunnelServerFlagsNeedTheirs(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--iptables-cidr", "10.244.0.0/16"}, "--iptables-cidr needs --iptables"},
		{[]string{"--iptables"}, "--iptables needs --transparent-bind-address"},
	} {
		cmd := newTunnelServerCommand()
		cmd.SetArgs(append([]string{"--agent-ca-file", "/nonexistent/ca.pem", "--agent-bind-address", "127.0.0.1:0"}, c.args...))
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}
