package integration

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestManifestChangeAppliesWithoutRestart(t *testing.T) {
	t.Parallel()
	one, two := startBackend(t, "one"), startBackend(t, "two")
	c := startController(t, map[string]string{
		"svc.yaml": ingressClass + serviceYAML("default", "one", 80, one) + serviceYAML("default", "two", 80, two),
		"ing.yaml": ingressYAML("default", "app", "app.test", "Prefix / one"),
	})
	pid := c.cmd.Process.Pid
	if r := c.Get("app.test", "/new"); r.Reply.Service != "one" {
		t.Fatalf("before: served by %q", r.Reply.Service)
	}
	reloads := c.Metric("causeway_nginx_reloads_total", `result="success"`)

	c.WriteManifest("ing.yaml", ingressYAML("default", "app", "app.test", "Prefix / one", "Prefix /new two"))
	eventually(t, 5*time.Second, func() error {
		if r := c.Get("app.test", "/new"); r.Reply.Service != "two" {
			return fmt.Errorf("served by %q", r.Reply.Service)
		}
		return nil
	})
	if c.cmd.Process.Pid != pid {
		t.Fatal("the controller restarted")
	}
	// New workers serve before the controller has verified them and
	// counted the reload, so the count is awaited too.
	eventually(t, 5*time.Second, func() error {
		if after := c.Metric("causeway_nginx_reloads_total", `result="success"`); after != reloads+1 {
			return fmt.Errorf("reloads went from %v to %v, want exactly one more", reloads, after)
		}
		return nil
	})
	if c.Metric("causeway_nginx_last_reload_seconds") <= 0 {
		t.Fatal("causeway_nginx_last_reload_seconds must be set")
	}

	// Deleting the file removes the Ingress.
	c.WriteManifest("ing.yaml", "# emptied\n")
	eventually(t, 5*time.Second, func() error {
		if r := c.Get("app.test", "/"); r.Status != 404 {
			return fmt.Errorf("status %d", r.Status)
		}
		return nil
	})
}

func TestInvalidObjectExcludedOthersKeepWorking(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	c := startController(t, map[string]string{
		"good.yaml": ingressClass + serviceYAML("default", "web", 80, web) + ingressYAML("default", "good", "good.test", "Prefix / web"),
	})
	c.WriteManifest("bad.yaml", ingressYAML("default", "bad", "bad.test", `Prefix /x;return web`)+
		"this is: [not valid yaml\n")
	c.WriteManifest("good2.yaml", ingressYAML("default", "good2", "good2.test", "Prefix / web"))
	eventually(t, 5*time.Second, func() error {
		if r := c.Get("good2.test", "/"); r.Reply.Service != "web" {
			return fmt.Errorf("good2 not served yet: %d", r.Status)
		}
		return nil
	})
	if r := c.Get("good.test", "/"); r.Reply.Service != "web" {
		t.Fatalf("good Ingress broken: %d", r.Status)
	}
	if r := c.Get("bad.test", "/x;return"); r.Status != 404 {
		t.Fatalf("bad Ingress must not be served: %d", r.Status)
	}
	log := c.log.String()
	if !strings.Contains(log, "default/bad") || !strings.Contains(log, "bad.yaml") {
		t.Fatalf("the rejected Ingress and the unparsable file must be logged by name:\n%s", log)
	}
}

func TestNginxKilledRespawns(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	c := startController(t, map[string]string{
		"a.yaml": ingressClass + serviceYAML("default", "web", 80, web) + ingressYAML("default", "a", "a.test", "Prefix / web"),
	})
	old := c.nginxMasterPID()
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	eventually(t, 2*time.Second, func() error {
		// Orphaned workers of the killed master may answer for a moment;
		// only a new master serving counts.
		if c.nginxMasterPID() == old {
			return fmt.Errorf("no new nginx master yet")
		}
		r, err := c.get("http", "a.test", "/")
		if err != nil {
			return err
		}
		if r.Reply.Service != "web" {
			return fmt.Errorf("status %d", r.Status)
		}
		return nil
	})
	t.Logf("serving again %s after kill -9", time.Since(killed).Round(time.Millisecond))
}

// TestRejectedConfigIsRolledBack makes nginx -t fail with an object the
// model accepts (a 1024-bit RSA certificate: Go parses it, OpenSSL's
// default security level refuses it) while traffic flows, and checks that
// no request fails, the last good configuration keeps serving, the
// offending secret falls back to the default certificate, and later
// changes still apply.
func TestRejectedConfigIsRolledBack(t *testing.T) {
	t.Parallel()
	web, two := startBackend(t, "web"), startBackend(t, "two")
	c := startController(t, map[string]string{
		"a.yaml": ingressClass + serviceYAML("default", "web", 80, web) + serviceYAML("default", "two", 80, two) +
			ingressYAML("default", "a", "a.test", "Prefix / web"),
	})

	var failures, requests atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // a bounded load loop: stops on signal or after 30 s
		defer wg.Done()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			select {
			case <-stop:
				return
			default:
			}
			r, err := c.get("http", "a.test", "/")
			requests.Add(1)
			if err != nil || r.Status != 200 {
				failures.Add(1)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()

	failed := c.Metric("causeway_nginx_reloads_total", `result="failure"`)
	c.WriteManifest("weak.yaml", tlsSecretYAML(t, "default", "weak-tls", "weak.test", 1024)+
		tlsIngressYAML("default", "weak", "weak.test", "weak-tls", "web"))
	eventually(t, 10*time.Second, func() error {
		if c.Metric("causeway_nginx_reloads_total", `result="failure"`) <= failed {
			return fmt.Errorf("no failed reload recorded yet")
		}
		if r := c.GetTLS("weak.test", "/"); r.PeerCN != "Causeway Default Certificate" || r.Status != 200 {
			return fmt.Errorf("weak.test: CN %q status %d", r.PeerCN, r.Status)
		}
		return nil
	})
	// Later changes keep applying.
	c.ChangesStillApply("two")
	close(stop)
	wg.Wait()
	if failures.Load() != 0 || requests.Load() < 10 {
		t.Fatalf("%d of %d requests failed during the rejected reload", failures.Load(), requests.Load())
	}
	if !strings.Contains(c.log.String(), "ee key too small") {
		t.Fatal("nginx's error must be logged")
	}
}
