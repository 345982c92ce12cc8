// Package iptables keeps the nat rules that send locally originated
// traffic for tunneled destinations to the server's transparent listener,
// as Yurttunnel's iptables manager does for kubelet ports.
//
// The manager owns exactly one chain (CAUSEWAY-TUNNEL by default) and one
// jump rule to it from OUTPUT, marked with a comment. It never edits any
// other rule: the chain is rewritten atomically with iptables-restore
// --noflush, which replaces only the chains it declares.
package iptables

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultChain is the chain the manager owns.
const DefaultChain = "CAUSEWAY-TUNNEL"

// comment marks every rule the manager creates.
const comment = "causeway-tunnel"

// DefaultPorts are the kubelet's HTTPS and read-only ports.
var DefaultPorts = []uint16{10250, 10255}

// Runner runs iptables commands; tests replace it.
type Runner interface {
	// Run runs the iptables binary with args and returns its stdout.
	Run(ctx context.Context, args ...string) ([]byte, error)
	// Restore feeds input to iptables-restore --noflush.
	Restore(ctx context.Context, input []byte) error
}

// ExecRunner runs the real binaries, optionally behind a prefix such as
// "ip netns exec NAME".
type ExecRunner struct {
	Prefix []string
}

// Run implements Runner.
func (r ExecRunner) Run(ctx context.Context, args ...string) ([]byte, error) {
	return r.exec(ctx, nil, "iptables", append([]string{"-w", "5"}, args...)...)
}

// Restore implements Runner.
func (r ExecRunner) Restore(ctx context.Context, input []byte) error {
	_, err := r.exec(ctx, input, "iptables-restore", "-w", "5", "--noflush")
	return err
}

func (r ExecRunner) exec(ctx context.Context, stdin []byte, bin string, args ...string) ([]byte, error) {
	argv := append(append(slices.Clone(r.Prefix), bin), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// Config configures a Manager.
type Config struct {
	Chain string
	// Ports are the destination ports redirected for each tunneled address.
	Ports []uint16
	// AllPorts redirects every TCP port of a tunneled address instead:
	// what Ingress traffic to edge Pods needs, whose ports are whatever
	// their Services say.
	AllPorts bool
	// Static are destinations redirected whether an agent claims them or
	// not (an edge Pod network). While no agent owns one, the transparent
	// listener resets a connection to it at once, so nginx moves on to its
	// next endpoint instead of waiting out a connect timeout in a network
	// that drops the packets.
	Static []netip.Prefix
	// Target is the transparent listener's address that rules DNAT to.
	Target netip.AddrPort
	Runner Runner
}

// Manager installs, syncs and removes the rules.
type Manager struct {
	cfg Config
}

// New returns a Manager; Target must be an IPv4 address and port.
func New(cfg Config) (*Manager, error) {
	if cfg.Chain == "" {
		cfg.Chain = DefaultChain
	}
	if len(cfg.Ports) == 0 && !cfg.AllPorts {
		cfg.Ports = DefaultPorts
	}
	for _, p := range cfg.Static {
		if !p.IsValid() || !p.Addr().Is4() {
			return nil, fmt.Errorf("static destination %s: need an IPv4 CIDR", p)
		}
	}
	if !cfg.Target.IsValid() || !cfg.Target.Addr().Unmap().Is4() || cfg.Target.Addr().IsUnspecified() {
		return nil, fmt.Errorf("DNAT target %s: need a concrete IPv4 address and port", cfg.Target)
	}
	if cfg.Runner == nil {
		cfg.Runner = ExecRunner{}
	}
	return &Manager{cfg: cfg}, nil
}

// Rules returns the chain's rules for the given destinations, in the form
// `iptables -S` prints them, so Sync can tell whether anything changed.
// IPv6 destinations are skipped: this manager drives iptables, not
// ip6tables.
func (m *Manager) Rules(addrs []netip.Addr, prefixes []netip.Prefix) []string {
	var dsts []netip.Prefix
	for _, a := range addrs {
		if a = a.Unmap(); a.Is4() {
			dsts = append(dsts, netip.PrefixFrom(a, 32))
		}
	}
	for _, p := range slices.Concat(prefixes, m.cfg.Static) {
		if p.Addr().Unmap().Is4() {
			dsts = append(dsts, p.Masked())
		}
	}
	slices.SortFunc(dsts, func(a, b netip.Prefix) int {
		if c := b.Bits() - a.Bits(); c != 0 {
			return c // the most specific first, though DNAT targets are equal
		}
		return a.Addr().Compare(b.Addr())
	})
	dsts = slices.Compact(dsts)
	var rules []string
	for _, d := range dsts {
		if m.cfg.AllPorts {
			rules = append(rules, fmt.Sprintf("-A %s -d %s -p tcp -m comment --comment %s -j DNAT --to-destination %s",
				m.cfg.Chain, d, comment, m.cfg.Target))
			continue
		}
		for _, port := range m.cfg.Ports {
			rules = append(rules, fmt.Sprintf("-A %s -d %s -p tcp -m tcp --dport %d -m comment --comment %s -j DNAT --to-destination %s",
				m.cfg.Chain, d, port, comment, m.cfg.Target))
		}
	}
	return rules
}

func (m *Manager) jump() []string {
	return []string{"OUTPUT", "-m", "comment", "--comment", comment, "-j", m.cfg.Chain}
}

// Sync makes the chain hold exactly the rules for the destinations and
// makes sure OUTPUT jumps to it. It changes nothing when both already
// hold, so it is cheap to call often. It reports whether it wrote rules.
func (m *Manager) Sync(ctx context.Context, addrs []netip.Addr, prefixes []netip.Prefix) (bool, error) {
	want := m.Rules(addrs, prefixes)
	current, err := m.cfg.Runner.Run(ctx, "-t", "nat", "-S", m.cfg.Chain)
	changed := false
	if err != nil || !slices.Equal(parseChain(current, m.cfg.Chain), want) {
		var b strings.Builder
		b.WriteString("*nat\n:" + m.cfg.Chain + " - [0:0]\n")
		for _, r := range want {
			b.WriteString(r + "\n")
		}
		b.WriteString("COMMIT\n")
		if err := m.cfg.Runner.Restore(ctx, []byte(b.String())); err != nil {
			return false, fmt.Errorf("write chain %s: %w", m.cfg.Chain, err)
		}
		changed = true
	}
	if _, err := m.cfg.Runner.Run(ctx, append([]string{"-t", "nat", "-C"}, m.jump()...)...); err != nil {
		args := append([]string{"-t", "nat", "-I", "OUTPUT", "1"}, m.jump()[1:]...)
		if _, err := m.cfg.Runner.Run(ctx, args...); err != nil {
			return changed, fmt.Errorf("add jump from OUTPUT: %w", err)
		}
		changed = true
	}
	return changed, nil
}

// parseChain keeps the -A lines of `iptables -S CHAIN`.
func parseChain(out []byte, chain string) []string {
	var rules []string
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "-A "+chain+" ") {
			rules = append(rules, line)
		}
	}
	return rules
}

// Cleanup removes the jump rule(s) and the chain. Missing pieces are fine.
func (m *Manager) Cleanup(ctx context.Context) error {
	for i := 0; i < 16; i++ { // duplicates, if someone added the jump twice
		if _, err := m.cfg.Runner.Run(ctx, append([]string{"-t", "nat", "-D"}, m.jump()...)...); err != nil {
			break
		}
	}
	if _, err := m.cfg.Runner.Run(ctx, "-t", "nat", "-S", m.cfg.Chain); err != nil {
		return nil // no chain
	}
	if _, err := m.cfg.Runner.Run(ctx, "-t", "nat", "-F", m.cfg.Chain); err != nil {
		return fmt.Errorf("flush %s: %w", m.cfg.Chain, err)
	}
	if _, err := m.cfg.Runner.Run(ctx, "-t", "nat", "-X", m.cfg.Chain); err != nil {
		return fmt.Errorf("delete %s: %w", m.cfg.Chain, err)
	}
	return nil
}

// Source gives the current destinations and signals when they change; the
// tunnel server's routing table provides it.
type Source interface {
	Destinations() ([]netip.Addr, []netip.Prefix)
	Changed() <-chan struct{}
}

// Run syncs on every change and every resync interval (repairing rules
// someone else removed) until ctx ends, then removes everything it made.
func (m *Manager) Run(ctx context.Context, src Source, resync time.Duration, onErr func(error)) error {
	if resync <= 0 {
		resync = 30 * time.Second
	}
	t := time.NewTicker(resync)
	defer t.Stop()
	for {
		addrs, prefixes := src.Destinations()
		if _, err := m.Sync(ctx, addrs, prefixes); err != nil && ctx.Err() == nil && onErr != nil {
			onErr(err)
		}
		select {
		case <-ctx.Done():
			cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			return m.Cleanup(cctx)
		case <-src.Changed():
		case <-t.C:
		}
	}
}

// ParsePorts parses a comma-separated port list, or "all" for every port.
func ParsePorts(s string) (ports []uint16, all bool, err error) {
	if strings.TrimSpace(s) == "all" {
		return nil, true, nil
	}
	var out []uint16
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := strconv.ParseUint(f, 10, 16)
		if err != nil || p == 0 {
			return nil, false, fmt.Errorf("port %q: must be 1-65535 or the whole list \"all\"", f)
		}
		out = append(out, uint16(p))
	}
	return out, false, nil
}
