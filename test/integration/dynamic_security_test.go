package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// foreignState is a full state that sends default/web/80 to to, with the
// largest generation the channel accepts: what a stale nginx state, or one
// pushed by someone other than the controller, looks like.
func foreignState(to *backend) string {
	return fmt.Sprintf(`{"version":1,"generation":9007199254740991,"backends":[{"key":"default/web/80","endpoints":[{"address":%q,"port":%d,"ready":true}]}]}`, to.IP, to.Port)
}

func (c *controller) dynamicSocket() string { return filepath.Join(c.StateDir, "run", "dynamic.sock") }

// putState sends a full state on the dynamic socket as the test's own
// user (root) and returns the status.
func (c *controller) putState(body string) int {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPut, "http://causeway/v1/state", strings.NewReader(body))
	resp, err := unixClient(c.dynamicSocket()).Do(req)
	if err != nil {
		c.t.Fatalf("PUT /v1/state: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// nginxState returns the endpoints ("ip:port", sorted by nginx) of each
// backend nginx serves, read over the dynamic socket.
func (c *controller) nginxState() map[string][]string {
	c.t.Helper()
	resp, err := unixClient(c.dynamicSocket()).Get("http://causeway/v1/state")
	if err != nil {
		c.t.Fatalf("GET /v1/state: %v", err)
	}
	defer resp.Body.Close()
	var st struct {
		Backends []struct {
			Key       string
			Endpoints []struct {
				Address string
				Port    int
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		c.t.Fatalf("GET /v1/state: %v", err)
	}
	out := map[string][]string{}
	for _, b := range st.Backends {
		eps := []string{}
		for _, e := range b.Endpoints {
			eps = append(eps, fmt.Sprintf("%s:%d", e.Address, e.Port))
		}
		out[b.Key] = eps
	}
	return out
}

// TestDynamicSocketRefusesOtherUsers tries to reroute traffic as an
// unprivileged local user: connecting to the dynamic socket must fail,
// and traffic and nginx's state stay as the controller pushed them.
func TestDynamicSocketRefusesOtherUsers(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a command as nobody")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv not installed")
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl not installed")
	}
	web, evil := startBackend(t, "web"), startBackend(t, "evil")
	c := startController(t, map[string]string{"a.yaml": ingressClass + serviceYAML("default", "web", 80, web) + ingressYAML("default", "a", "a.test", "Prefix / web")})
	payload := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(payload, []byte(foreignState(evil)), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Dir(payload), 0o755)
	for _, args := range [][]string{
		{"-X", "PUT", "--data-binary", "@" + payload, "http://causeway/v1/state"},
		{"-X", "POST", "--data-binary", "@" + payload, "http://causeway/v1/backends"},
		{"http://causeway/v1/state"},
	} {
		cmd := exec.Command(setpriv, append([]string{"--reuid=nobody", "--regid=nogroup", "--clear-groups", curl,
			"-sS", "--max-time", "5", "-o", "/dev/null", "-w", "%{http_code}", "--unix-socket", c.dynamicSocket()}, args...)...)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err == nil || !errors.As(err, &exit) || exit.ExitCode() != 7 { // 7: could not connect
			t.Errorf("curl %s as nobody: %v, output %q; want a refused connection (exit 7)", args[len(args)-1], err, out)
		}
	}
	if got := keys(servedBy(c, "a.test", 6)); got != addr(web) {
		t.Fatalf("after the attempts: served by %s, want %s", got, addr(web))
	}
	if st := c.nginxState(); strings.Join(st["default/web/80"], ",") != addr(web) {
		t.Fatalf("nginx state changed: %v", st)
	}
}

// TestForeignStateIsOverwritten simulates a stale or foreign state pushed
// with the largest generation (as root, directly on the socket). The
// controller owns the state: its next push replaces it without a single
// 409, with or without an endpoint change, and so does a reload of nginx
// (which loads the controller's state file).
func TestForeignStateIsOverwritten(t *testing.T) {
	t.Parallel()
	web, evil := startBackend(t, "web"), startBackend(t, "evil")
	api := startBackends(t, "api", 2)
	c := startController(t, map[string]string{
		"web.yaml":   ingressClass + serviceYAML("default", "web", 80, web) + ingressYAML("default", "a", "a.test", "Prefix / web"),
		"api.yaml":   svcOnlyYAML("default", "api") + ingressYAML("default", "api", "api.test", "Prefix / api"),
		"slice.yaml": sliceYAML("default", "api", addr(api[0])),
	})
	reroute := func() {
		t.Helper()
		if status := c.putState(foreignState(evil)); status != 200 {
			t.Fatalf("foreign PUT: status %d", status)
		}
		if got := keys(servedBy(c, "a.test", 4)); got != addr(evil) {
			t.Fatalf("the foreign state did not take: served by %s", got)
		}
	}
	restored := func(what string) {
		t.Helper()
		eventually(t, 5*time.Second, func() error {
			if got := keys(servedBy(c, "a.test", 6)); got != addr(web) {
				return fmt.Errorf("%s: a.test served by %s, want %s", what, got, addr(web))
			}
			return nil
		})
	}

	// 1. An unrelated endpoint change: the controller's next push
	// replaces the whole foreign state, and the change goes live.
	reroute()
	c.WriteManifest("slice.yaml", sliceYAML("default", "api", addr(api[1])))
	eventually(t, 5*time.Second, func() error {
		if got := keys(servedBy(c, "api.test", 4)); got != addr(api[1]) {
			return fmt.Errorf("api.test served by %s", got)
		}
		return nil
	})
	restored("after the next push")

	// 2. No endpoint change at all: any sync notices that nginx serves a
	// generation it did not push, and pushes again.
	reroute()
	c.WriteManifest("unrelated.yaml", svcOnlyYAML("default", "unused"))
	restored("after a sync without changes")

	// 3. A reload of nginx alone (not asked for by the controller) loads
	// the controller's state file over the foreign state.
	reroute()
	if err := syscall.Kill(c.nginxMasterPID(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	restored("after a reload")

	if log := c.log.String(); strings.Contains(log, "HTTP 409") || strings.Contains(log, "pushing endpoints to nginx failed") {
		t.Fatalf("a push was refused:\n%s", log)
	}
}
