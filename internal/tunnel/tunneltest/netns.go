package tunneltest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// RequireNetnsEnv is the variable that turns a missing network-namespace
// capability from a skip into a failure, so CI cannot pass by skipping.
const RequireNetnsEnv = "CAUSEWAY_REQUIRE_NETNS"

// NeedNetns skips (or, with CAUSEWAY_REQUIRE_NETNS=1, fails) t unless the
// process can create network namespaces and run iptables.
func NeedNetns(t testing.TB) {
	t.Helper()
	why := ""
	switch {
	case os.Geteuid() != 0:
		why = "not root"
	default:
		for _, bin := range []string{"ip", "iptables", "iptables-restore"} {
			if _, err := exec.LookPath(bin); err != nil {
				why = bin + " not installed"
			}
		}
	}
	if why == "" {
		return
	}
	if os.Getenv(RequireNetnsEnv) == "1" {
		t.Fatalf("network namespace test cannot run (%s) and %s=1", why, RequireNetnsEnv)
	}
	t.Skipf("network namespace test skipped: %s (set %s=1 to make this a failure)", why, RequireNetnsEnv)
}

// Netns is a network namespace created for one test.
type Netns struct{ Name string }

// NewNetns creates a namespace with loopback up and registers its removal
// with t.Cleanup, so it goes away even when the test fails.
func NewNetns(t testing.TB, name string) *Netns {
	t.Helper()
	Run(t, "ip", "netns", "del", name) // leftovers of a killed run; errors ignored
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", name, err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	ns := &Netns{Name: name}
	ns.MustRun(t, "ip", "link", "set", "lo", "up")
	return ns
}

// Cmd builds a command that runs inside the namespace.
func (ns *Netns) Cmd(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", ns.Name, name}, args...)...)
}

// MustRun runs a command inside the namespace and fails t on error.
func (ns *Netns) MustRun(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := ns.Cmd(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("in %s: %s %s: %v: %s", ns.Name, name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Run runs a command and returns its combined output and error.
func Run(t testing.TB, name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}
