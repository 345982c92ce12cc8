package node

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// proc is a process of a Pod as the node sees it in /proc.
type proc struct {
	PID     int
	Cmdline string
	// From /proc/PID/status.
	UIDs, CapEff, CapPrm, CapBnd, NoNewPrivs, Seccomp string
}

// podProcesses lists the processes in a Pod's cgroup (every container,
// the sandbox's pause included), found through /proc/PID/cgroup.
func podProcesses(podUID string) ([]proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	marker := "/pod" + podUID + "/"
	var procs []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cg, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		if err != nil || !bytes.Contains(cg, []byte(marker)) {
			continue
		}
		p := proc{PID: pid}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		p.Cmdline = strings.TrimSpace(string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			v = strings.TrimSpace(v)
			switch k {
			case "Uid":
				p.UIDs = v
			case "CapEff":
				p.CapEff = v
			case "CapPrm":
				p.CapPrm = v
			case "CapBnd":
				p.CapBnd = v
			case "NoNewPrivs":
				p.NoNewPrivs = v
			case "Seccomp":
				p.Seccomp = v
			}
		}
		procs = append(procs, p)
	}
	if len(procs) == 0 {
		return nil, fmt.Errorf("no process in the cgroup of pod %s", podUID)
	}
	return procs, nil
}

// capNetBindService is CAP_NET_BIND_SERVICE's bit in a /proc capability
// mask.
const capNetBindService = 1 << 10

// isNginx reports whether a process's command line is nginx's: its
// master and workers name themselves "nginx: ...", and an nginx -t the
// controller runs shows the binary, nginx or the image's copy that holds
// the file capability (hack/image/customize.sh). No other name passes.
func isNginx(cmdline string) bool {
	if strings.HasPrefix(cmdline, "nginx: ") {
		return true
	}
	exe, _, _ := strings.Cut(cmdline, " ")
	switch filepath.Base(exe) {
	case "nginx", "nginx-net-bind-service":
		return true
	}
	return false
}

func capMask(hex string) uint64 {
	v, _ := strconv.ParseUint(hex, 16, 64)
	return v
}

func syscallKill(pid int) error {
	if pid <= 0 {
		return fmt.Errorf("no pid")
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// procsOf is podProcesses for a test.
func procsOf(t *testing.T, pod corev1.Pod) []proc {
	t.Helper()
	procs, err := podProcesses(string(pod.UID))
	if err != nil {
		t.Fatal(err)
	}
	return procs
}

// TestIsNginx pins which processes TestDaemonSetHostNetwork lets hold
// NET_BIND_SERVICE. It needs no cluster.
func TestIsNginx(t *testing.T) {
	for cmdline, want := range map[string]bool{
		"nginx: master process /usr/sbin/nginx-net-bind-service -p /var/lib/causeway/": true,
		"nginx: worker process": true,
		"/usr/sbin/nginx-net-bind-service -p /var/lib/causeway/ -t -q": true,
		"/usr/sbin/nginx -t":                            true,
		"/usr/bin/causeway controller":                  false,
		"/usr/bin/tini -- /usr/bin/causeway controller": false,
		"/tmp/nginx-evil -t":                            false,
		"/usr/sbin/nginxfoo":                            false,
		"":                                              false,
	} {
		if got := isNginx(cmdline); got != want {
			t.Errorf("isNginx(%q) = %v, want %v", cmdline, got, want)
		}
	}
}
