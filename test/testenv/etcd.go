package testenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// etcd is a single-member etcd on loopback with its data in the Env's
// directory.
type etcd struct {
	proc      *Process
	clientURL string
}

// startEtcd starts etcd and waits until it reports healthy. A port taken
// between choosing it and etcd binding it makes etcd exit at once, so a few
// attempts with fresh ports are made before giving up.
func startEtcd(ctx context.Context, bin, dir string) (*etcd, error) {
	dataDir := filepath.Join(dir, "etcd-data")
	logPath := filepath.Join(dir, "etcd.log")
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		if err := os.RemoveAll(dataDir); err != nil {
			return nil, fmt.Errorf("reset etcd data dir: %w", err)
		}
		ports, err := freePorts(2)
		if err != nil {
			return nil, err
		}
		clientURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
		peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
		args := []string{
			"--name=testenv",
			"--data-dir=" + dataDir,
			"--listen-client-urls=" + clientURL,
			"--advertise-client-urls=" + clientURL,
			"--listen-peer-urls=" + peerURL,
			"--initial-advertise-peer-urls=" + peerURL,
			"--initial-cluster=testenv=" + peerURL,
			"--initial-cluster-state=new",
			"--logger=zap",
			"--log-outputs=stderr",
			"--log-level=warn",
		}
		proc, err := StartProcess("etcd", bin, args, etcdEnv(), logPath)
		if err != nil {
			return nil, err
		}
		if err := waitEtcdHealthy(ctx, proc, clientURL); err != nil {
			proc.Stop(5 * time.Second)
			lastErr = err
			if !errors.Is(err, errProcessExited) {
				break // a timeout, not a lost race for a port
			}
			continue
		}
		return &etcd{proc: proc, clientURL: clientURL}, nil
	}
	return nil, fmt.Errorf("start etcd: %w", lastErr)
}

// etcdEnv is the inherited environment without ETCD_* variables: etcd
// reads its flags from those, and a stray one from the developer's shell
// must not change the test cluster.
func etcdEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ETCD_") {
			env = append(env, kv)
		}
	}
	return env
}

// waitEtcdHealthy polls etcd's /health endpoint until it reports healthy,
// the process exits or ctx ends.
func waitEtcdHealthy(ctx context.Context, proc *Process, clientURL string) error {
	client := &http.Client{Timeout: time.Second}
	healthy := func() bool {
		resp, err := client.Get(clientURL + "/health")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var body struct {
			Health string `json:"health"`
		}
		return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&body) == nil && body.Health == "true"
	}
	return poll(ctx, proc, 50*time.Millisecond, healthy)
}

// poll calls ready every interval until it returns true. It fails when the
// process exits (with the end of its log) or ctx ends.
func poll(ctx context.Context, proc *Process, interval time.Duration, ready func() bool) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if ready() {
			return nil
		}
		select {
		case <-proc.done:
			return proc.ExitError()
		case <-ctx.Done():
			return fmt.Errorf("wait for %s: %w; last lines of %s:\n%s", proc.name, ctx.Err(), proc.LogPath, proc.LogTail(30))
		case <-t.C:
		}
	}
}

// freePorts returns n distinct loopback TCP ports that were free a moment
// ago. All listeners are held until every port is chosen, so the kernel
// cannot hand out the same one twice.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find free loopback port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
