package integration

import (
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestIngressNginxFlags runs the controller with the arguments of an
// ingress-nginx Deployment: it starts, serves /healthz, /readyz and
// /metrics on one port (--healthz-port, ingress-nginx's layout), routes
// traffic, and names at start the flag it ignores.
func TestIngressNginxFlags(t *testing.T) {
	t.Parallel()
	app := startBackend(t, "app")
	port := freePort(t, "127.0.0.1")
	c := startController(t, map[string]string{
		"svc.yaml": ingressClass + serviceYAML("default", "app", 80, app),
		"ing.yaml": ingressYAML("default", "app", "app.test", "Prefix / app"),
	}, "--healthz-port", strconv.Itoa(port), "--election-id=ingress-nginx-leader", "--controller-class=causeway.io/ingress-controller",
		"--enable-topology-aware-routing", "--profiling=false", "--v=2", "--update-status-on-shutdown=false")
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", port, path))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s on --healthz-port: %d", path, resp.StatusCode)
		}
	}
	if r := c.Get("app.test", "/"); r.Reply.Service != "app" {
		t.Errorf("app.test served by %q (%d)", r.Reply.Service, r.Status)
	}
	if v := c.Metric("causeway_ignored_flags", `flag="--enable-topology-aware-routing"`); v != 1 {
		t.Errorf("causeway_ignored_flags for --enable-topology-aware-routing = %v", v)
	}
	if log := c.log.String(); !strings.Contains(log, `msg="ingress-nginx flag not supported: ignored" flag=--enable-topology-aware-routing value=true`) {
		t.Errorf("no warning about --enable-topology-aware-routing:\n%s", log)
	}
}

// TestUnknownFlagStops: a flag that is neither Causeway's nor
// ingress-nginx's stops the controller at once, naming it.
func TestUnknownFlagStops(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(binary, "controller", "--manifests", t.TempDir(), "--publish-servce=a/b").CombinedOutput()
	if code := exitCode(err); code != 1 || !strings.Contains(string(out), "unknown flag --publish-servce: neither Causeway nor ingress-nginx has it (did you mean --publish-service?)") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func exitCode(err error) int {
	if e, ok := err.(*exec.ExitError); ok {
		return e.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
