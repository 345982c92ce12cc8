package integration

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/flavour"
	"github.com/causeway/causeway/test/testenv"
)

// TestDemoCommandsWork runs hack/demo.sh (make demo) as the README says,
// on free ports, and runs every curl command it prints, as printed: each
// must succeed, and none may get a 5xx. It found the demo's state
// directory below /root (where .cache leads), which nginx's unprivileged
// workers cannot read: every request answered 500.
func TestDemoCommandsWork(t *testing.T) {
	if dataPlaneFlavour.Name != flavour.Nginx {
		t.Skip("make demo runs Debian's nginx; the nginx tier runs this test")
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	echo := filepath.Join(dir, "echo")
	build := exec.Command("go", "build", "-o", echo, "./hack/echo")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build echo: %v\n%s", err, out)
	}
	// The state directory is where make demo puts its own, beside it.
	state, err := os.MkdirTemp("/var/lib", "causeway-demo-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(state) })
	os.Chmod(state, 0o755)
	ip := loopbackIP()
	env := map[string]string{"DEMO_ADDR": ip, "DEMO_HTTP": strconv.Itoa(freePort(t, ip)), "DEMO_HTTPS": strconv.Itoa(freePort(t, ip)),
		"DEMO_HEALTH": strconv.Itoa(freePort(t, "127.0.0.1")), "DEMO_METRICS": strconv.Itoa(freePort(t, "127.0.0.1")),
		"DEMO_STATE": filepath.Join(state, "state"), "DEMO_CAUSEWAY": binary, "DEMO_ECHO": echo}
	cmd := exec.Command("bash", "hack/demo.sh")
	cmd.Dir = root
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		cmd.Wait()
	})
	// The commands are the lines between "Try:" and the first line that
	// starts at the margin, a trailing backslash joining two.
	var commands []string
	var pending string
	ready := make(chan struct{})
	go func() {
		in, printed := false, false
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasSuffix(line, "Try:"):
				in = true
			case in && strings.HasPrefix(line, "  curl"), in && pending != "":
				pending += strings.TrimSpace(line)
				if strings.HasSuffix(pending, "\\") {
					pending = strings.TrimSuffix(pending, "\\") + " "
					continue
				}
				commands = append(commands, pending)
				pending = ""
			case in && line != "" && !strings.HasPrefix(line, " "):
				in = false
			}
			if strings.HasPrefix(line, "Press Ctrl-C") && !printed {
				printed = true
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(90 * time.Second):
		t.Fatalf("the demo did not print its commands:\n%s", log.String())
	}
	if len(commands) < 6 {
		t.Fatalf("%d commands printed, want every one of the README's: %q", len(commands), commands)
	}
	for _, c := range commands {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		run := exec.CommandContext(ctx, "bash", "-c", "set -o pipefail; "+c)
		run.Dir = root // as the README runs them, from the clone
		got, err := run.CombinedOutput()
		cancel()
		if err != nil || bytes.Contains(got, []byte("HTTP/1.1 5")) || bytes.Contains(got, []byte("Internal Server Error")) {
			t.Errorf("%s: %v\n%s", c, err, got)
		}
	}
	if t.Failed() {
		t.Logf("demo log:\n%s", log.String())
	}
}
