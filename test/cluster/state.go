package cluster

import (
	"encoding/json"
	"fmt"
	"os"
	"syscall"
	"time"
)

// state is what a running cluster records in its directory, for Down,
// Leftovers and Attach from another process.
type state struct {
	// PID is the process that runs the cluster (hack/cluster's supervisor
	// or a test binary); its children are the cluster's components.
	PID       int
	StartedAt time.Time
	// Ready is set once the node is Ready and every image is imported.
	Ready bool
	// AdminKubeconfig authenticates as a cluster admin.
	AdminKubeconfig string
	// Sysctls are the host's values before the cluster changed them.
	Sysctls map[string]string
	// NetnsBefore and ShimSocketsBefore are the entries of netnsDir and
	// shimSocketDir that existed before the cluster started: every other
	// one is the cluster's.
	NetnsBefore       []string
	ShimSocketsBefore []string
}

func readState(p paths) (state, error) {
	var st state
	b, err := os.ReadFile(p.state())
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("read %s: %w", p.state(), err)
	}
	return st, nil
}

func writeState(p paths, st state) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := p.state() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p.state())
}

// netnsNow lists the network namespaces mounted now.
func (st state) netnsNow() []string { return listDir(netnsDir) }

// alive reports whether the process that runs the cluster still exists.
func (st state) alive() bool {
	return st.PID > 0 && syscall.Kill(st.PID, 0) == nil
}
