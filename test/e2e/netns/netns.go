// Package netns gives end-to-end tests and benchmarks a place for backends
// that the Kubernetes API accepts as endpoints. The API server refuses
// loopback addresses in EndpointSlices, so backends cannot listen on
// 127.0.0.x as in the integration tier. Instead they listen in a network
// namespace of their own, reached from the host through a veth pair on a
// private /24 that exists only on this machine: traffic never leaves it.
//
// It needs root and iproute2's ip.
package netns

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// prefix starts the name of every namespace and link this package makes,
// so leftovers of killed runs can be recognised and removed.
const prefix = "cwe2e"

// Netns is a network namespace joined to the host by a veth pair.
type Netns struct {
	// Name is the namespace's name under /var/run/netns.
	Name string
	// HostIP is the host's end of the veth pair, PeerIP the namespace's:
	// backends listen on PeerIP.
	HostIP, PeerIP netip.Addr
}

// Available reports why namespaces cannot be made here, or nil.
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return errors.New("ip (iproute2) is not installed")
	}
	return nil
}

// New creates a namespace with a veth pair on the first free 10.251.N.0/24
// and removes leftovers of earlier runs whose process is gone.
func New() (*Netns, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	removeStale()
	pid := os.Getpid()
	n := &Netns{Name: fmt.Sprintf("%s-%d", prefix, pid)}
	subnet, err := freeSubnet(pid)
	if err != nil {
		return nil, err
	}
	n.HostIP = netip.AddrFrom4([4]byte{10, 251, subnet, 1})
	n.PeerIP = netip.AddrFrom4([4]byte{10, 251, subnet, 2})
	// Link names are limited to 15 bytes; the pid keeps them unique.
	host, peer := fmt.Sprintf("%s%dh", prefix, pid%1000000), fmt.Sprintf("%s%dn", prefix, pid%1000000)
	steps := [][]string{
		{"netns", "add", n.Name},
		{"link", "add", host, "type", "veth", "peer", "name", peer},
		{"link", "set", peer, "netns", n.Name},
		{"addr", "add", n.HostIP.String() + "/24", "dev", host},
		{"link", "set", host, "up"},
		{"-n", n.Name, "addr", "add", n.PeerIP.String() + "/24", "dev", peer},
		{"-n", n.Name, "link", "set", peer, "up"},
		{"-n", n.Name, "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if out, err := exec.Command("ip", s...).CombinedOutput(); err != nil {
			n.Close()
			return nil, fmt.Errorf("ip %s: %w: %s", strings.Join(s, " "), err, out)
		}
	}
	return n, nil
}

// freeSubnet picks a third octet no interface uses yet, starting from one
// derived from pid so that concurrent runs rarely even try the same.
func freeSubnet(pid int) (byte, error) {
	out, err := exec.Command("ip", "-o", "-4", "addr", "show").Output()
	if err != nil {
		return 0, fmt.Errorf("ip addr show: %w", err)
	}
	for i := range 250 {
		octet := byte((pid + i) % 250)
		if !strings.Contains(string(out), fmt.Sprintf(" 10.251.%d.", octet)) {
			return octet, nil
		}
	}
	return 0, errors.New("no free 10.251.N.0/24 subnet")
}

// removeStale deletes namespaces of this package whose process has exited.
// Deleting a namespace also removes its veth pair.
func removeStale() {
	entries, _ := os.ReadDir("/var/run/netns")
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix+"-")
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(rest)
		if err != nil || pid == os.Getpid() {
			continue
		}
		if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
			exec.Command("ip", "netns", "del", e.Name()).Run()
		}
	}
}

// Listen opens a TCP listener inside the namespace. The socket belongs to
// the namespace for its whole life, while everything else in the process
// stays in the host's.
func (n *Netns) Listen(addr string) (net.Listener, error) { return ListenIn(n.Name, addr) }

// ListenIn opens a TCP listener inside the namespace named name, as
// Listen does.
func ListenIn(name, addr string) (net.Listener, error) {
	var ln net.Listener
	err := Within(name, func() error {
		var err error
		ln, err = net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listen %s in %s: %w", addr, name, err)
		}
		return nil
	})
	return ln, err
}

// Within runs fn on a thread inside the namespace named name (under
// /var/run/netns). Sockets fn opens belong to that namespace for their
// whole life and may be used from any goroutine afterwards; everything
// else in the process stays in its own namespace.
func Within(name string, fn func() error) error {
	ch := make(chan error, 1)
	go func() {
		// Only this goroutine's thread switches namespace, and it switches
		// back before anything else may run on it. The thread must not be
		// discarded instead: a child started with Pdeathsig from it (the
		// test environment's API server, say) would be killed with it.
		runtime.LockOSThread()
		restored, err := withinHere(name, fn)
		if restored {
			runtime.UnlockOSThread()
		} // else the thread stays locked and the runtime discards it
		ch <- err
	}()
	return <-ch
}

// withinHere runs on a locked thread. restored is false only if the thread
// could not return to its own namespace.
func withinHere(name string, fn func() error) (restored bool, err error) {
	self, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return true, fmt.Errorf("open own network namespace: %w", err)
	}
	defer self.Close()
	target, err := os.Open(filepath.Join("/var/run/netns", name))
	if err != nil {
		return true, fmt.Errorf("open namespace %s: %w", name, err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		return true, fmt.Errorf("enter namespace %s: %w", name, err)
	}
	err = fn()
	if serr := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); serr != nil {
		return false, err
	}
	return true, err
}

// Close deletes the namespace and, with it, the veth pair.
func (n *Netns) Close() error {
	if out, err := exec.Command("ip", "netns", "del", n.Name).CombinedOutput(); err != nil {
		return fmt.Errorf("ip netns del %s: %w: %s", n.Name, err, out)
	}
	return nil
}
