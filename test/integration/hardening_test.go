package integration

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// longHost is a valid DNS name of exactly n characters (n ≤ 253), made of
// labels of at most 63, starting with prefix.
func longHost(prefix string, n int) string {
	var labels []string
	rest := n - len(prefix)
	for rest > 0 {
		l := min(63, rest)
		if rest-l == 1 { // a label needs at least one character after the dot
			l--
		}
		labels = append(labels, strings.Repeat(string(rune('a'+len(labels))), l))
		rest -= l + 1
	}
	return prefix + strings.Join(labels, ".")
}

// Hosts of the greatest valid length, alone, sharing a server block with
// alike hosts and as wildcards, all go live, and an ordinary Ingress added
// afterwards follows within seconds: nginx's hash sizes follow the longest
// host and file names stay short whatever the host.
func TestMaximumLengthHostsDoNotBlockOthers(t *testing.T) {
	t.Parallel()
	web, other := startBackend(t, "web"), startBackend(t, "other")
	alone := longHost("", 253)
	shared := []string{longHost("x", 253), longHost("y", 253), longHost("z", 200)}
	wildcard := longHost("*.", 253)
	if len(alone) != 253 || len(wildcard) != 253 {
		t.Fatalf("test hosts of %d and %d characters", len(alone), len(wildcard))
	}
	var m strings.Builder
	m.WriteString(ingressClass + serviceYAML("default", "web", 80, web) + serviceYAML("default", "other", 80, other))
	// "alone" has a path of its own, so it does not share a block.
	m.WriteString(ingressYAML("default", "alone", alone, "Prefix / web", "Exact /only-here other"))
	for i, h := range shared {
		m.WriteString(ingressYAML("default", fmt.Sprintf("shared%d", i), h, "Prefix / web"))
	}
	m.WriteString(ingressYAML("default", "wild", wildcard, "Prefix / other"))
	c := startController(t, map[string]string{"long.yaml": m.String()})

	for _, tc := range []struct{ host, path, want string }{
		{alone, "/", "web"},
		{alone, "/only-here", "other"},
		{shared[0], "/", "web"},
		{shared[1], "/a", "web"},
		{shared[2], "/", "web"},
		{"q" + wildcard[1:], "/", "other"},
	} {
		if r := c.Get(tc.host, tc.path); r.Status != 200 || r.Reply.Service != tc.want {
			t.Errorf("%s…%s (%d chars): status %d from %q, want %s", tc.host[:10], tc.path, len(tc.host), r.Status, r.Reply.Service, tc.want)
		}
	}
	for _, f := range mustGlob(t, filepath.Join(c.StateDir, "servers", "*")) {
		if n := len(filepath.Base(f)); n > 100 {
			t.Errorf("server file name of %d bytes: %s", n, f)
		}
	}

	start := time.Now()
	c.WriteManifest("plain.yaml", ingressYAML("default", "plain", "plain.test", "Prefix / other"))
	eventually(t, 10*time.Second, func() error {
		if r := c.Get("plain.test", "/"); r.Reply.Service != "other" {
			return fmt.Errorf("status %d", r.Status)
		}
		return nil
	})
	t.Logf("an ordinary Ingress went live %s after long hosts", time.Since(start).Round(time.Millisecond))
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// readyz returns /readyz's status and body.
func (c *controller) readyz() (int, string) {
	c.t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", c.HealthPort))
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		b.WriteString(sc.Text())
	}
	return resp.StatusCode, b.String()
}

// A state directory damaged behind the controller's back is repaired:
// files deleted or altered are written again, a server file nobody wrote
// is removed, later changes go live, and nginx killed meanwhile comes back
// with the repaired files. While it cannot be repaired, /readyz is 503.
func TestDamagedStateDirHeals(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	c := startController(t, map[string]string{
		"app.yaml": ingressClass + serviceYAML("default", "web", 80, web) +
			ingressYAML("default", "app", "app.test", "Prefix / web") +
			tlsSecretYAML(t, "default", "tls", "secure.test", 2048) +
			`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: secure, namespace: default}
spec:
  ingressClassName: causeway
  tls: [{hosts: [secure.test], secretName: tls}]
  rules:
  - host: secure.test
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
`,
	}, "--heal-interval", "500ms")

	// Damage: every server file and secret gone, the Lua modules gone, a
	// stray server file that nginx would include.
	for _, dir := range []string{"servers", "secrets", "lua"} {
		for _, f := range mustGlob(t, filepath.Join(c.StateDir, dir, "*")) {
			os.RemoveAll(f)
		}
	}
	os.WriteFile(filepath.Join(c.StateDir, "servers", "stray.conf"), []byte("this is not nginx syntax\n"), 0o644)

	// A change after the damage goes live.
	c.WriteManifest("new.yaml", ingressYAML("default", "new", "new.test", "Prefix / web"))
	eventually(t, 10*time.Second, func() error {
		if r := c.Get("new.test", "/"); r.Reply.Service != "web" {
			return fmt.Errorf("new.test: status %d", r.Status)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(c.StateDir, "servers", "stray.conf")); !os.IsNotExist(err) {
		t.Error("the stray server file survived")
	}
	if r := c.GetTLS("secure.test", "/"); r.Reply.Service != "web" {
		t.Errorf("TLS host after repair: status %d", r.Status)
	}

	// Damage again, then kill nginx: it must come back serving.
	for _, f := range mustGlob(t, filepath.Join(c.StateDir, "servers", "*")) {
		os.Remove(f)
	}
	pid := c.nginxMasterPID()
	syscall.Kill(-pid, syscall.SIGKILL)
	eventually(t, 15*time.Second, func() error {
		if p := c.nginxMasterPID(); p == pid || p == 0 {
			return fmt.Errorf("nginx not restarted")
		}
		for _, h := range []string{"app.test", "new.test"} {
			if r, err := c.get("http", h, "/"); err != nil || r.Reply.Service != "web" {
				return fmt.Errorf("%s: %v %d", h, err, r.Status)
			}
		}
		return nil
	})

	// Beyond repair (a file where a directory must be): not ready, with
	// the reason; repairable again: ready.
	run := filepath.Join(c.StateDir, "sockets")
	os.RemoveAll(run)
	os.WriteFile(run, []byte("in the way"), 0o644)
	eventually(t, 10*time.Second, func() error {
		if code, body := c.readyz(); code != 503 || !strings.Contains(body, "state dir") {
			return fmt.Errorf("readyz %d %q", code, body)
		}
		return nil
	})
	os.Remove(run)
	eventually(t, 10*time.Second, func() error {
		if code, body := c.readyz(); code != 200 {
			return fmt.Errorf("readyz %d %q", code, body)
		}
		return nil
	})
	if r := c.Get("app.test", "/"); r.Reply.Service != "web" {
		t.Errorf("after the repair: status %d", r.Status)
	}
}

// nginx's workers run as an unprivileged user. A state directory they
// cannot reach makes the controller unready, naming the path, instead of
// failing handshakes and request bodies silently; once reachable, ready.
func TestUnreachableStateDirFailsReadiness(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("workers run as another user only when the controller is root")
	}
	web := startBackend(t, "web")
	parent, err := os.MkdirTemp("", "causeway-private-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	os.Chmod(parent, 0o700)
	c := launchController(t, map[string]string{
		"app.yaml": ingressClass + serviceYAML("default", "web", 80, web) + ingressYAML("default", "app", "app.test", "Prefix / web"),
	}, launch{base: parent}, "--heal-interval", "500ms")
	eventually(t, 15*time.Second, func() error {
		code, body := c.readyz()
		if code != 503 || !strings.Contains(body, "cannot enter "+parent) {
			return fmt.Errorf("readyz %d %q", code, body)
		}
		return nil
	})
	os.Chmod(parent, 0o755)
	c.WaitReady(10 * time.Second)
	// A body larger than the in-memory buffer goes through a temp file.
	body := strings.Repeat("x", 64<<10)
	req, _ := http.NewRequest("POST", fmt.Sprintf("http://%s/", net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort))), strings.NewReader(body))
	req.Host = "app.test"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("large body: status %d", resp.StatusCode)
	}
}

// With its stderr a plain file, nothing the controller or nginx logs is
// lost: nginx's logs reach the file through the controller, one whole line
// at a time, instead of nginx reopening the file at its own offset.
func TestLogsSurviveStderrOnAPlainFile(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	out, err := os.Create(filepath.Join(t.TempDir(), "controller.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	c := launchController(t, map[string]string{
		"app.yaml": ingressClass + serviceYAML("default", "web", 80, web) + ingressYAML("default", "app", "app.test", "Prefix / web"),
	}, launch{output: out})
	c.WaitReady(15 * time.Second)
	const n = 200
	for i := range n {
		if r := c.Get("app.test", fmt.Sprintf("/req-%d", i)); r.Status != 200 {
			t.Fatalf("request %d: %d", i, r.Status)
		}
		if i%50 == 0 { // the controller logs in between
			c.WriteManifest(fmt.Sprintf("x%d.yaml", i), ingressYAML("default", fmt.Sprintf("x%d", i), fmt.Sprintf("x%d.test", i), "Prefix / web"))
		}
	}
	c.Stop()
	data, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	log := string(data)
	if strings.ContainsRune(log, 0) {
		t.Error("the log holds NUL bytes: lines were overwritten")
	}
	for i := range n {
		if !strings.Contains(log, fmt.Sprintf(`"GET /req-%d HTTP/1.1" 200`, i)) {
			t.Errorf("access log line of request %d missing", i)
		}
	}
	for _, want := range []string{"starting causeway controller", "configuration live", "stopped"} {
		if !strings.Contains(log, want) {
			t.Errorf("controller line %q missing", want)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		if !strings.HasPrefix(line, "time=") && !strings.Contains(line, `"GET /`) && !strings.Contains(line, "[notice]") &&
			!strings.Contains(line, "[warn]") && !strings.Contains(line, "[error]") && !strings.Contains(line, "[info]") {
			t.Errorf("garbled line: %.200q", line)
		}
	}
}

// nginx does not outlive a controller killed by a signal it cannot catch:
// the kernel's parent-death signal asks it to quit, and the ports are free.
func TestNginxQuitsWhenTheControllerIsKilled(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	c := startController(t, map[string]string{
		"app.yaml": ingressClass + serviceYAML("default", "web", 80, web) + ingressYAML("default", "app", "app.test", "Prefix / web"),
	})
	pid := c.nginxMasterPID()
	if pid == 0 {
		t.Fatal("no nginx pid")
	}
	c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
	eventually(t, 10*time.Second, func() error {
		if groupRunning(pid) {
			return fmt.Errorf("nginx process group %d still running", pid)
		}
		return nil
	})
	l, err := net.Listen("tcp", net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort)))
	if err != nil {
		t.Fatalf("the HTTP port is still held: %v", err)
	}
	l.Close()

	// The next controller on the same state directory starts cleanly.
	again := launchController(t, nil, launch{after: c})
	again.WaitReady(15 * time.Second)
	if r := again.Get("app.test", "/"); r.Reply.Service != "web" {
		t.Fatalf("after restart: %d", r.Status)
	}
}

// A ConfigMap value that passes Causeway's grammar but that nginx refuses
// (a cipher name OpenSSL does not know) must not freeze the controller:
// the ConfigMap's defaults serve, with a Problem, and Ingresses go live.
func TestRefusedConfigMapValueDoesNotFreeze(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	c := startController(t, map[string]string{
		"app.yaml":    ingressClass + serviceYAML("default", "web", 80, web) + ingressYAML("default", "web", "app.test", "Prefix / web"),
		"config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: config, namespace: causeway}\ndata: {ssl-ciphers: \"NOSUCHCIPHER\"}\n",
	})
	if r := c.Get("app.test", "/"); r.Status != 200 || r.Reply.Service != "web" {
		t.Fatalf("status %d from %q, want 200 from web", r.Status, r.Reply.Service)
	}
	eventually(t, 5*time.Second, func() error {
		if !strings.Contains(c.log.String(), "defaults are used") {
			return fmt.Errorf("no Problem saying the ConfigMap's defaults are used")
		}
		return nil
	})
}

// A running nginx is reloaded without nginx -t first: the master checks
// the files itself and keeps the old ones when it cannot use them. Its
// complaint must be noticed at once, not after the reload timeout, and
// the culprit found as before: here a ConfigMap value nginx refuses,
// written while traffic flows.
func TestRefusedReloadIsNoticedAtOnce(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	c := startController(t, map[string]string{
		"app.yaml": ingressClass + serviceYAML("default", "web", 80, web) + ingressYAML("default", "web", "app.test", "Prefix / web"),
	}, "--reload-timeout", "60s")
	failed := c.Metric("causeway_nginx_reloads_total", `result="failure"`)
	start := time.Now()
	c.WriteManifest("config.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: config, namespace: causeway}\ndata: {ssl-ciphers: \"NOSUCHCIPHER\"}\n")
	eventually(t, 10*time.Second, func() error {
		if c.Metric("causeway_nginx_reloads_total", `result="failure"`) <= failed {
			return fmt.Errorf("no failed reload recorded yet")
		}
		if !strings.Contains(c.log.String(), "defaults are used") {
			return fmt.Errorf("no Problem saying the ConfigMap's defaults are used")
		}
		return nil
	})
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the refused reload took %s to notice; the reload timeout is 60s", took)
	}
	if r := c.Get("app.test", "/"); r.Status != 200 || r.Reply.Service != "web" {
		t.Fatalf("status %d from %q, want 200 from web", r.Status, r.Reply.Service)
	}
	if !strings.Contains(c.log.String(), "NOSUCHCIPHER") {
		t.Fatal("nginx's reason must be logged")
	}
	// Later changes keep applying.
	c.ChangesStillApply("web")
}
