package node

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/causeway/causeway/test/cluster"
	"github.com/causeway/causeway/test/harness"
)

// TestInstall: helm install of the chart with only the image values
// changed brings the controller up as documented.
func TestInstall(t *testing.T) {
	cw := ensureInstalled(t)
	c := node(t)
	ctx := t.Context()

	// Ready through the probes the chart declares.
	pods, err := cw.Pods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 2 {
		t.Fatalf("%d controller pods, want the chart's 2 replicas", len(pods))
	}
	for _, p := range pods {
		ctr := p.Spec.Containers[0]
		if ctr.ReadinessProbe == nil || ctr.ReadinessProbe.HTTPGet == nil || ctr.ReadinessProbe.HTTPGet.Path != "/readyz" {
			t.Errorf("pod %s: readiness probe %+v, want GET /readyz", p.Name, ctr.ReadinessProbe)
		}
		if !podReady(&p) {
			t.Errorf("pod %s is not Ready: %+v", p.Name, p.Status.Conditions)
		}
	}

	// The IngressClass.
	ic, err := cw.Client.NetworkingV1().IngressClasses().Get(ctx, "causeway", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("IngressClass causeway: %v", err)
	}
	if ic.Spec.Controller != "causeway.io/ingress-controller" {
		t.Errorf("IngressClass causeway: controller %q", ic.Spec.Controller)
	}

	// The webhook answers through its Service: kubectl apply of an
	// Ingress that would raise a Problem is refused, a good one is not.
	bad := `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: typo
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/rewrite-targt: /}
spec:
  ingressClassName: causeway
  rules: [{host: typo.causeway.test, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
`
	var out string
	err = wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		// Until the controller has written its CA into the webhook
		// configuration, the API server cannot call it.
		out, err = c.KubectlApply(ctx, bad)
		return err != nil && strings.Contains(out, "denied the request"), nil
	})
	if err != nil {
		t.Fatalf("kubectl apply of an Ingress with an unknown annotation: want a refusal by the webhook, got:\n%s", out)
	}
	for _, want := range []string{`admission webhook "validate.ingress.causeway.io" denied the request`, "nginx.ingress.kubernetes.io/rewrite-targt"} {
		if !strings.Contains(out, want) {
			t.Errorf("refusal lacks %q:\n%s", want, out)
		}
	}
	if _, err := cw.Client.NetworkingV1().Ingresses("default").Get(ctx, "typo", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused Ingress exists (%v)", err)
	}

	// Metrics are scraped from the Pods' metrics port.
	for _, p := range pods {
		url := "http://" + net.JoinHostPort(p.Status.PodIP, "9113") + "/metrics"
		if v, err := harness.Metric(url, "nginx_ingress_controller_config_last_reload_successful"); err != nil || v != 1 {
			t.Errorf("pod %s: nginx_ingress_controller_config_last_reload_successful = %v (%v), want 1", p.Name, v, err)
		}
	}

	// Ingress status shows the controller Service's address.
	svc, err := cw.Client.CoreV1().Services(cw.Namespace).Get(ctx, cw.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(svc.Status.LoadBalancer.Ingress) == 0 {
		t.Fatalf("service %s/%s has no LoadBalancer address", cw.Namespace, cw.Name)
	}
	lbIP := svc.Status.LoadBalancer.Ingress[0].IP
	good := strings.ReplaceAll(strings.ReplaceAll(bad, "typo", "status"), "rewrite-targt", "rewrite-target")
	if out, err := c.KubectlApply(ctx, good); err != nil {
		t.Fatalf("kubectl apply of a good Ingress: %v\n%s", err, out)
	}
	var got []string
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		ing, err := cw.Client.NetworkingV1().Ingresses("default").Get(ctx, "status", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = got[:0]
		for _, lb := range ing.Status.LoadBalancer.Ingress {
			got = append(got, lb.IP)
		}
		return slices.Equal(got, []string{lbIP}), nil
	})
	if err != nil {
		t.Errorf("Ingress status: %v, want the Service's address %s", got, lbIP)
	}
	cw.Client.NetworkingV1().Ingresses("default").Delete(ctx, "status", metav1.DeleteOptions{})
}

// TestBackends: three echo Pods behind a Service, an Ingress with TLS and
// ingress-nginx annotations and a VirtualServer, reached as clients reach
// them: the NodePorts on the node's address, the ClusterIP from the node,
// and the LoadBalancer address; every Pod answers.
func TestBackends(t *testing.T) {
	cw := ensureInstalled(t)
	ensureBackends(t, cw)
	ctx := t.Context()
	httpPort, httpsPort, err := cw.NodePorts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := cw.Client.CoreV1().Services(cw.Namespace).Get(ctx, cw.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lbIP := svc.Status.LoadBalancer.Ingress[0].IP
	pods, err := podNames(ctx, cw)
	if err != nil {
		t.Fatal(err)
	}
	routes := []struct {
		name, addr, scheme, host, path string
	}{
		{"Ingress, HTTPS NodePort", net.JoinHostPort(cw.NodeIP, strconv.Itoa(httpsPort)), "https", echoHost, "/api/hello"},
		{"Ingress, HTTPS ClusterIP", net.JoinHostPort(svc.Spec.ClusterIP, "443"), "https", echoHost, "/api/hello"},
		{"Ingress, HTTPS LoadBalancer", net.JoinHostPort(lbIP, "443"), "https", echoHost, "/api/hello"},
		{"VirtualServer, HTTP NodePort", net.JoinHostPort(cw.NodeIP, strconv.Itoa(httpPort)), "http", echoVSHost, "/hello"},
		{"VirtualServer, HTTP ClusterIP", net.JoinHostPort(svc.Spec.ClusterIP, "80"), "http", echoVSHost, "/hello"},
	}
	for _, r := range routes {
		t.Run(r.name, func(t *testing.T) {
			var seen map[string]int
			// The controller applies the new objects within a sync.
			err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
				r, err := harness.Get(r.scheme, r.addr, r.host, r.path)
				return err == nil && r.Status == http.StatusOK, nil
			})
			if err != nil {
				t.Fatalf("%s://%s%s via %s never answered 200", r.scheme, r.host, r.path, r.addr)
			}
			seen = endpointsAnswering(t, r.addr, r.scheme, r.host, r.path, echoReplicas)
			for ep := range seen {
				if !pods[ep] {
					t.Errorf("answered by %q, not one of the echo pods %v", ep, pods)
				}
			}
		})
	}

	// The annotations: the rewrite, CORS and the body size limit.
	httpsAddr := net.JoinHostPort(cw.NodeIP, strconv.Itoa(httpsPort))
	r, err := harness.Get("https", httpsAddr, echoHost, "/api/hello?x=1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Reply.Path != "/hello" {
		t.Errorf("rewrite-target: the backend saw path %q, want /hello", r.Reply.Path)
	}
	if got := r.Header.Get("Access-Control-Allow-Origin"); got != "*" {
		t.Errorf("enable-cors: Access-Control-Allow-Origin %q, want *", got)
	}
	big, err := harness.Do(httpsAddr, harness.Request{Method: http.MethodPost, Scheme: "https", Host: echoHost, Path: "/api/upload", Body: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if big.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("proxy-body-size 1k: a 4 KiB body got %d, want 413", big.Status)
	}
	// Plain HTTP to the TLS host is redirected, as ssl-redirect defaults.
	if r, err := harness.Get("http", net.JoinHostPort(cw.NodeIP, strconv.Itoa(httpPort)), echoHost, "/api/hello"); err != nil || r.Status != http.StatusPermanentRedirect {
		t.Errorf("http://%s/api/hello: %d %v, want 308 to https", echoHost, r.Status, err)
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

var _ = fmt.Sprint
var _ cluster.Causeway

// reloads sums nginx_ingress_controller_success (reloads, and the first
// start, that made a configuration live) over the controller Pods.
func reloads(t *testing.T, cw *cluster.Causeway) (float64, map[string]float64) {
	t.Helper()
	pods, err := cw.Pods(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]float64{}
	var sum float64
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.PodIP == "" {
			continue
		}
		v, err := harness.Metric("http://"+net.JoinHostPort(p.Status.PodIP, "9113")+"/metrics", "nginx_ingress_controller_success")
		if err != nil {
			t.Fatalf("pod %s: %v", p.Name, err)
		}
		per[p.Name] = v
		sum += v
	}
	return sum, per
}

// TestChurnUnderLoad: under a steady load through the controller's
// NodePort, the backend scales 3→10→1→3 and rolls out anew: no request
// fails and nginx never reloads. Then it scales to zero (503 while empty)
// and back, served again within a second of the first ready Pod.
func TestChurnUnderLoad(t *testing.T) {
	cw := ensureInstalled(t)
	ensureBackends(t, cw)
	ctx := t.Context()
	c := node(t)
	httpPort, _, err := cw.NodePorts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort(cw.NodeIP, strconv.Itoa(httpPort))
	before, perBefore := reloads(t, cw)

	const rate, duration = 200, 60 * time.Second
	start := time.Now()
	l := startLoad(t, addr, echoVSHost, "/churn", rate, duration)
	for _, n := range []int{10, 1, 3} {
		if err := scaleEcho(ctx, cw, n); err != nil {
			t.Fatal(err)
		}
		t.Logf("%5.1fs: echo at %d ready replicas", time.Since(start).Seconds(), n)
	}
	if out, err := c.Kubectl(ctx, "rollout", "restart", "deployment/echo", "-n", echoNS); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := c.Kubectl(ctx, "rollout", "status", "deployment/echo", "-n", echoNS, "--timeout=3m"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := waitEcho(ctx, cw, echoReplicas); err != nil {
		t.Fatal(err)
	}
	t.Logf("%5.1fs: rollout restart done", time.Since(start).Seconds())
	<-l.done
	sent, failed, summary := l.result()
	after, perAfter := reloads(t, cw)
	t.Logf("churn under load (%d req/s for %s): %s; reloads %v → %v", rate, duration, summary, perBefore, perAfter)
	if failed != 0 {
		t.Errorf("%d of %d requests failed during the churn: %s", failed, sent, summary)
	}
	if sent < rate*int(duration/time.Second)*3/4 {
		t.Errorf("only %d requests sent in %s at %d/s", sent, duration, rate)
	}
	if after != before {
		t.Errorf("nginx reloaded during the churn: %v → %v", perBefore, perAfter)
	}

	// Scale to zero: 503 while there is no endpoint.
	if err := scaleEcho(ctx, cw, 0); err != nil {
		t.Fatal(err)
	}
	var status int
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		r, err := harness.Get("http", addr, echoVSHost, "/empty")
		if err == nil {
			status = r.Status
		}
		return status == http.StatusServiceUnavailable, nil
	})
	if err != nil {
		t.Fatalf("with no endpoint: %d, want 503", status)
	}
	// And back: the time from the first ready endpoint (as the test sees
	// it in the EndpointSlice) to the first 2xx.
	if err := setEchoReplicas(ctx, cw, 1); err != nil {
		t.Fatal(err)
	}
	var readyAt time.Time
	err = wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		ready, err := readyEndpoints(ctx, cw)
		readyAt = time.Now()
		return err == nil && len(ready) > 0, nil
	})
	if err != nil {
		t.Fatal("no ready endpoint after scaling to 1")
	}
	var servedAt time.Time
	for time.Since(readyAt) < 10*time.Second {
		r, err := harness.Get("http", addr, echoVSHost, "/back")
		if err == nil && r.Status == http.StatusOK {
			servedAt = time.Now()
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if servedAt.IsZero() {
		t.Fatal("not served within 10 s of the first ready endpoint")
	}
	back := servedAt.Sub(readyAt)
	t.Logf("scale from zero: first 2xx %s after the first ready endpoint", back.Round(time.Millisecond))
	report(t, "churn", fmt.Sprintf("%d/s for %s while scaling 3→10→1→3 and a rollout restart: %d non-2xx or failed (%s), %v reloads; "+
		"scale from zero: 503 while empty, first 2xx %s after the first ready endpoint", rate, duration, failed, summary, after-before, back.Round(time.Millisecond)))
	if back > time.Second {
		t.Errorf("served again %s after the first ready endpoint, want within 1 s", back)
	}
	if err := scaleEcho(ctx, cw, echoReplicas); err != nil {
		t.Fatal(err)
	}
}

// report records a result the docs quote (docs/install.md): printed with
// -v, and appended to $CAUSEWAY_TIER5_REPORT, which make test-cluster
// prints after the tier.
func report(t *testing.T, name, line string) {
	t.Helper()
	if err := reportLine(name, line); err != nil {
		t.Errorf("report: %v", err)
	}
}

func reportLine(name, line string) error {
	text := fmt.Sprintf("%s %s: %s\n", time.Now().Format("2006-01-02"), name, line)
	fmt.Print("TIER5 " + text)
	path := os.Getenv("CAUSEWAY_TIER5_REPORT")
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(text)
	return err
}

// leaderSampler scrapes causeway_leader from every controller Pod with an
// address (terminating ones included, until they are gone) every 250 ms,
// all at once, and remembers the most Pods that said they lead at one
// moment. A round counts as a moment only if every answer came within
// momentWindow of its start: a slow scrape reads its Pod later than the
// others, and across a handover that read an old and a new leader apart
// as two at once (TestUpgradeUnderLoad, 2026-11-30); such rounds are
// counted as skipped.
type leaderSampler struct {
	stop    chan struct{}
	done    chan struct{}
	samples int
	skipped int
	most    int
	holders []string // the Lease's holders, in the order seen
}

// momentWindow is how far apart a round's reads may be.
const momentWindow = 250 * time.Millisecond

func sampleLeaders(t *testing.T, cw *cluster.Causeway, electionID string) *leaderSampler {
	s := &leaderSampler{stop: make(chan struct{}), done: make(chan struct{})}
	ctx := t.Context()
	leading := func(ip string) bool {
		v, err := harness.MetricWithin(time.Second, "http://"+net.JoinHostPort(ip, "9113")+"/metrics", "causeway_leader")
		return err == nil && v == 1
	}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
			pods, err := cw.Pods(ctx)
			if err != nil {
				continue
			}
			var leaders atomic.Int32
			var wg sync.WaitGroup
			start := time.Now()
			for _, p := range pods {
				if p.Status.PodIP == "" {
					continue
				}
				wg.Go(func() {
					if leading(p.Status.PodIP) {
						leaders.Add(1)
					}
				})
			}
			wg.Wait()
			if time.Since(start) > momentWindow {
				s.skipped++
			} else {
				s.samples++
				s.most = max(s.most, int(leaders.Load()))
			}
			if lease, err := cw.Client.CoordinationV1().Leases(cw.Namespace).Get(ctx, electionID, metav1.GetOptions{}); err == nil && lease.Spec.HolderIdentity != nil {
				if h := *lease.Spec.HolderIdentity; h != "" && (len(s.holders) == 0 || s.holders[len(s.holders)-1] != h) {
					s.holders = append(s.holders, h)
				}
			}
		}
	}()
	t.Cleanup(s.end)
	return s
}

func (s *leaderSampler) end() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}

// TestUpgradeUnderLoad: with two replicas under load, a rollout restart
// of Causeway and a helm upgrade that changes a ConfigMap key fail no
// request. The leader Lease moves to a new Pod, and at no sampled moment
// do two replicas lead (write status).
func TestUpgradeUnderLoad(t *testing.T) {
	cw := ensureInstalled(t)
	ensureBackends(t, cw)
	ctx := t.Context()
	c := node(t)
	httpPort, httpsPort, err := cw.NodePorts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leaders := sampleLeaders(t, cw, "causeway-leader")
	const rate = 200
	start := time.Now()
	l := startLoad(t, net.JoinHostPort(cw.NodeIP, strconv.Itoa(httpPort)), echoVSHost, "/upgrade", rate, 5*time.Minute)

	time.Sleep(2 * time.Second)
	if out, err := c.Kubectl(ctx, "rollout", "restart", "deployment/"+cw.Name, "-n", cw.Namespace); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := c.Kubectl(ctx, "rollout", "status", "deployment/"+cw.Name, "-n", cw.Namespace, "--timeout=4m"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := waitControllers(ctx, cw, 2); err != nil {
		t.Fatal(err)
	}
	restarted := time.Since(start)
	t.Logf("%5.1fs: rollout restart of Causeway done", restarted.Seconds())

	// A ConfigMap key through helm upgrade: no restart, a reload.
	if err := cw.Upgrade(ctx, "controller.config.hsts-max-age=12345"); err != nil {
		t.Fatal(err)
	}
	httpsAddr := net.JoinHostPort(cw.NodeIP, strconv.Itoa(httpsPort))
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		// Both replicas must have applied it: ten answers in a row.
		for range 10 {
			r, err := harness.Get("https", httpsAddr, echoHost, "/api/hsts")
			if err != nil || !strings.Contains(r.Header.Get("Strict-Transport-Security"), "max-age=12345") {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Errorf("helm upgrade of hsts-max-age: not applied by both replicas within a minute")
	}
	time.Sleep(2 * time.Second)
	sent, failed, summary := l.result()
	leaders.end()
	t.Logf("upgrade under load: %s; leader samples %d (%d rounds too slow to be one moment), most leading at once %d, Lease holders %v", summary, leaders.samples, leaders.skipped, leaders.most, leaders.holders)
	report(t, "upgrade", fmt.Sprintf("%d/s through a rollout restart of both replicas (%s) and a helm upgrade of a ConfigMap key: %d failed (%s); "+
		"Lease holders in turn %d, at most %d leading in %d samples", rate, restarted.Round(time.Second), failed, summary, len(leaders.holders), leaders.most, leaders.samples))
	if failed != 0 {
		t.Errorf("%d of %d requests failed during the upgrade: %s", failed, sent, summary)
	}
	if leaders.most > 1 {
		t.Errorf("%d replicas led at once", leaders.most)
	}
	if leaders.samples < 10 {
		t.Errorf("only %d leader samples were one moment (%d rounds too slow): too few to tell", leaders.samples, leaders.skipped)
	}
	pods, err := cw.Pods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(leaders.holders) < 2 {
		t.Errorf("the Lease did not move: holders %v", leaders.holders)
	} else if last := leaders.holders[len(leaders.holders)-1]; !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return strings.HasPrefix(last, p.Name) }) {
		t.Errorf("the Lease's holder %s is none of the current pods", last)
	}
}

// waitControllers waits for n Ready controller Pods and no other.
func waitControllers(ctx context.Context, cw *cluster.Causeway, n int) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := cw.Pods(ctx)
		if err != nil {
			return false, err
		}
		ready := 0
		for i := range pods {
			if podReady(&pods[i]) && pods[i].DeletionTimestamp == nil {
				ready++
			}
		}
		last = fmt.Sprintf("%d pods, %d ready", len(pods), ready)
		return len(pods) == n && ready == n, nil
	})
	if err != nil {
		return fmt.Errorf("controllers: %w (%s)", err, last)
	}
	return nil
}

// TestSecurityContext: the chart's security context holds in the running
// Pods (uid 101, read-only root, no capability, seccomp, writes only to
// the chart's emptyDirs); nginx killed inside a Pod is respawned by the
// controller without a container restart; a deleted Pod is replaced by
// one that serves.
func TestSecurityContext(t *testing.T) {
	cw := ensureInstalled(t)
	ensureBackends(t, cw)
	ctx := t.Context()
	c := node(t)
	pods, err := cw.Pods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pod := pods[0]
	ctr := pod.Spec.Containers[0]
	sc, psc := ctr.SecurityContext, pod.Spec.SecurityContext
	if psc == nil || psc.RunAsUser == nil || *psc.RunAsUser != 101 || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot ||
		psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context %+v: want uid 101, runAsNonRoot, seccomp RuntimeDefault", psc)
	}
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 {
		t.Errorf("container security context %+v: want a read-only root, no privilege escalation, every capability dropped", sc)
	}

	// What the kernel says of every process of the Pod but the sandbox's.
	procs, err := podProcesses(string(pod.UID))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range procs {
		if p.Cmdline == "/pause" {
			continue
		}
		names = append(names, p.Cmdline)
		if f := strings.Fields(p.UIDs); len(f) != 4 || f[0] != "101" || f[1] != "101" || f[2] != "101" || f[3] != "101" {
			t.Errorf("%d %q: uids %q, want 101 throughout", p.PID, p.Cmdline, p.UIDs)
		}
		if capMask(p.CapEff) != 0 || capMask(p.CapPrm) != 0 || capMask(p.CapBnd) != 0 {
			t.Errorf("%d %q: capabilities effective %s permitted %s bounding %s, want none", p.PID, p.Cmdline, p.CapEff, p.CapPrm, p.CapBnd)
		}
		if p.NoNewPrivs != "1" || p.Seccomp != "2" {
			t.Errorf("%d %q: NoNewPrivs %s Seccomp %s, want 1 and 2 (filter)", p.PID, p.Cmdline, p.NoNewPrivs, p.Seccomp)
		}
	}
	t.Logf("processes of pod %s: %q", pod.Name, names)
	if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "nginx: master process") }) ||
		!slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "causeway controller") }) {
		t.Errorf("no nginx master or causeway controller among %q", names)
	}

	// Writable: the chart's emptyDirs, nothing else.
	probe := `for d in / /etc /usr /usr/sbin /var /var/lib /var/lib/nginx /var/log /var/cache /run /home /var/lib/causeway /tmp; do
  if touch "$d/.causeway-probe" 2>/dev/null; then rm -f "$d/.causeway-probe"; echo "writable $d"; fi
done`
	out, err := c.Kubectl(ctx, "exec", "-n", cw.Namespace, pod.Name, "-c", "controller", "--", "sh", "-c", probe)
	if err != nil {
		t.Fatalf("kubectl exec: %v\n%s", err, out)
	}
	if got := strings.Fields(strings.ReplaceAll(out, "writable", "")); !slices.Equal(got, []string{"/var/lib/causeway", "/tmp"}) {
		t.Errorf("writable directories %v, want only the chart's emptyDirs [/var/lib/causeway /tmp]", got)
	}

	// Kill nginx's master: the controller starts it again, in the same
	// container, and the Pod serves on.
	podAddr := net.JoinHostPort(pod.Status.PodIP, "8080")
	master := 0
	for _, p := range procs {
		if strings.HasPrefix(p.Cmdline, "nginx: master process") {
			master = p.PID
		}
	}
	if err := syscallKill(master); err != nil {
		t.Fatalf("kill nginx master %d: %v", master, err)
	}
	var again int
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		procs, err := podProcesses(string(pod.UID))
		if err != nil {
			return false, nil
		}
		for _, p := range procs {
			if strings.HasPrefix(p.Cmdline, "nginx: master process") && p.PID != master {
				again = p.PID
			}
		}
		if again == 0 {
			return false, nil
		}
		r, err := harness.Get("http", podAddr, echoVSHost, "/respawned")
		return err == nil && r.Status == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("nginx was not respawned and serving within a minute of SIGKILL to its master (%d)", master)
	}
	after, err := cw.Client.CoreV1().Pods(cw.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := after.Status.ContainerStatuses[0].RestartCount; n != 0 {
		t.Errorf("the container restarted %d times: nginx's death must not cost the Pod", n)
	}
	t.Logf("nginx master %d killed; master %d serves", master, again)

	// Delete the Pod: its replacement serves.
	if err := cw.Client.CoreV1().Pods(cw.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := waitControllers(ctx, cw, 2); err != nil {
		t.Fatal(err)
	}
	pods, err = cw.Pods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if p.Name == pod.Name {
			t.Fatalf("pod %s still exists", pod.Name)
		}
		if r, err := harness.Get("http", net.JoinHostPort(p.Status.PodIP, "8080"), echoVSHost, "/replaced"); err != nil || r.Status != http.StatusOK {
			t.Errorf("pod %s: %d %v", p.Name, r.Status, err)
		}
	}
}

// TestDaemonSetHostNetwork: controller.kind DaemonSet on the host network,
// as ingress-nginx's chart offers it: the node answers on ports 80 and 443
// as uid 101. First it settles on this kubelet what binding a port below
// 1024 takes for uid 101 on the host network.
func TestDaemonSetHostNetwork(t *testing.T) {
	c := node(t)
	ctx := t.Context()
	// The Deployment installed by the tests before, or by an earlier run
	// against make cluster-up's cluster, goes first.
	if err := c.UninstallCauseway(ctx, "causeway", "causeway-system"); err != nil {
		t.Fatal(err)
	}
	release = nil
	t.Run("what binding a port below 1024 takes", func(t *testing.T) { bindProbes(t, c) })

	start := time.Now()
	cw, err := c.InstallCauseway(ctx, cluster.InstallOptions{Set: []string{
		"controller.kind=DaemonSet", "controller.hostNetwork=true", "controller.hostPort.enabled=true",
		"controller.dnsPolicy=ClusterFirstWithHostNet",
		// ingress-nginx's values for more environment and volumes.
		"controller.extraEnvs[0].name=CAUSEWAY_TIER5", "controller.extraEnvs[0].value=extra-env",
		"controller.extraVolumes[0].name=extra", "controller.extraVolumes[0].emptyDir.medium=Memory",
		"controller.extraVolumeMounts[0].name=extra", "controller.extraVolumeMounts[0].mountPath=/etc/causeway-extra"}})
	if err != nil {
		t.Fatalf("helm install: %v\n%s", err, logsOnFailure(c))
	}
	release = cw
	t.Logf("helm install of the DaemonSet took %s", time.Since(start).Round(100*time.Millisecond))
	ensureBackends(t, cw)
	pods, err := cw.Pods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 1 || !pods[0].Spec.HostNetwork {
		t.Fatalf("%d pods (host network %v), want one on the host network", len(pods), len(pods) == 1 && pods[0].Spec.HostNetwork)
	}
	for _, r := range []struct{ scheme, port, host, path string }{
		{"http", "80", echoVSHost, "/hostnet"},
		{"https", "443", echoHost, "/api/hostnet"},
	} {
		addr := net.JoinHostPort(cw.NodeIP, r.port)
		err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			res, err := harness.Get(r.scheme, addr, r.host, r.path)
			return err == nil && res.Status == http.StatusOK, nil
		})
		if err != nil {
			t.Errorf("%s://%s%s on the node's port %s: never 200", r.scheme, r.host, r.path, r.port)
		}
	}
	// The extra environment and volume reach the controller.
	for _, p := range procsOf(t, pods[0]) {
		if !strings.Contains(p.Cmdline, "causeway controller") || strings.HasPrefix(p.Cmdline, "/usr/bin/tini") {
			continue
		}
		env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.PID))
		mounts, _ := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", p.PID))
		if !strings.Contains(string(env), "CAUSEWAY_TIER5=extra-env\x00") || !strings.Contains(string(mounts), " /etc/causeway-extra ") {
			t.Errorf("controller %d: extraEnvs or extraVolumeMounts missing (environment has CAUSEWAY_TIER5: %v, /etc/causeway-extra mounted: %v)",
				p.PID, strings.Contains(string(env), "CAUSEWAY_TIER5="), strings.Contains(string(mounts), " /etc/causeway-extra "))
		}
	}
	// Only nginx (its master, the workers it forks, and an nginx -t the
	// controller runs, such as the certificate probe) holds a
	// capability, and only NET_BIND_SERVICE.
	procs, err := podProcesses(string(pods[0].UID))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		if p.Cmdline == "/pause" {
			continue
		}
		want := uint64(0)
		if isNginx(p.Cmdline) {
			want = capNetBindService
		}
		if capMask(p.CapEff) != want || strings.Fields(p.UIDs)[0] != "101" {
			t.Errorf("%d %q: uid %s, effective capabilities %s, want uid 101 and %#x", p.PID, p.Cmdline, p.UIDs, p.CapEff, want)
		}
	}
}

// bindProbes runs nginx on the host network as uid 101, binding a port
// below 1024 on the node's address, with each security context a chart
// could ship, and checks which of them binds. nginx runs as in the image:
// tini execs it, so like the controller it starts without the
// capabilities runc gives the container's first process.
func bindProbes(t *testing.T, c *cluster.Cluster) {
	ctx := t.Context()
	cfg := func(port int) string {
		return fmt.Sprintf(`pid /tmp/nginx.pid;
events {}
http {
  access_log off;
  client_body_temp_path /tmp;
  proxy_temp_path /tmp;
  server { listen %s:%d; return 204; }
}`, c.NodeIP, port)
	}
	probes := []struct {
		name, binary string
		add          []corev1.Capability
		escalate     bool
		binds        bool
	}{
		{"nginx, NET_BIND_SERVICE added", "/usr/sbin/nginx", []corev1.Capability{"NET_BIND_SERVICE"}, false, false},
		{"nginx-net-bind-service, NET_BIND_SERVICE added", "/usr/sbin/nginx-net-bind-service", []corev1.Capability{"NET_BIND_SERVICE"}, false, false},
		{"nginx-net-bind-service, NET_BIND_SERVICE added, escalation allowed", "/usr/sbin/nginx-net-bind-service", []corev1.Capability{"NET_BIND_SERVICE"}, true, true},
		{"nginx-net-bind-service, no capability, escalation allowed", "/usr/sbin/nginx-net-bind-service", nil, true, false},
	}
	for i, p := range probes {
		// A port of its own, in case the last probe's process is still
		// going away.
		name, port := fmt.Sprintf("bind-probe-%d", i), 81+i
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Data: map[string]string{"nginx.conf": cfg(port)}}
		release0(c).CoreV1().ConfigMaps("default").Delete(ctx, name, metav1.DeleteOptions{})
		if _, err := release0(c).CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		uid, no := int64(101), false
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: corev1.PodSpec{
				HostNetwork:   true,
				RestartPolicy: corev1.RestartPolicyNever,
				SecurityContext: &corev1.PodSecurityContext{RunAsUser: &uid, RunAsGroup: &uid, RunAsNonRoot: ptrTo(true),
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
				Containers: []corev1.Container{{
					Name: "nginx", Image: release0Image(t), ImagePullPolicy: corev1.PullNever,
					Command: []string{"/usr/bin/tini", "--", p.binary, "-e", "stderr", "-c", "/etc/probe/nginx.conf", "-g", "daemon off;"},
					SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &p.escalate, ReadOnlyRootFilesystem: &no,
						Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: p.add}},
					VolumeMounts: []corev1.VolumeMount{{Name: "cfg", MountPath: "/etc/probe"}},
				}},
				Volumes: []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: name}}}}},
			},
		}
		client := release0(c)
		if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var phase corev1.PodPhase
		var bound bool
		err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			got, err := client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			phase = got.Status.Phase
			if phase == corev1.PodFailed || phase == corev1.PodSucceeded {
				return true, nil
			}
			if phase == corev1.PodRunning {
				resp, err := http.Get("http://" + net.JoinHostPort(c.NodeIP, strconv.Itoa(port)) + "/")
				if err == nil {
					resp.Body.Close()
					bound = resp.StatusCode == http.StatusNoContent
					return bound, nil
				}
			}
			return false, nil
		})
		logs, _ := c.Kubectl(ctx, "logs", "-n", "default", name)
		t.Logf("%-70s phase %-9s binds port %d: %-5v %s", p.name, phase, port, bound, strings.TrimSpace(logs))
		if err != nil {
			t.Errorf("%s: %v", p.name, err)
		}
		if bound != p.binds {
			t.Errorf("%s: binds %v, want %v", p.name, bound, p.binds)
		}
		zero := int64(0)
		client.CoreV1().Pods("default").Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		client.CoreV1().ConfigMaps("default").Delete(ctx, name, metav1.DeleteOptions{})
		wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
	}
}

// TestUninstall: helm uninstall leaves no object of Causeway's behind but
// the CRDs (docs/install.md), and the Events it recorded, which expire.
func TestUninstall(t *testing.T) {
	cw := ensureInstalled(t)
	ctx := t.Context()
	c := node(t)
	if err := cw.Uninstall(ctx); err != nil {
		t.Fatal(err)
	}
	release = nil
	left, err := leftObjects(ctx, c, cw)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("left after helm uninstall:\n  %s", strings.Join(left, "\n  "))
	}
}
