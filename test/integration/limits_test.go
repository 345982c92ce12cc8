package integration

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/test/spec"
)

// TestLimitTableAgainstNginx sends every row of the limit behaviour table
// to a real nginx, from the row's client address, each row in its own
// namespace and host; rows with the same ConfigMap share a controller.
// Back-to-back rows allow spec.LimitCase.Tolerance more served requests,
// for the rate's refill while they are sent.
func TestLimitTableAgainstNginx(t *testing.T) {
	t.Parallel()
	groups := map[string][]int{}
	var order []string
	for i, tc := range spec.LimitTable {
		key := fmt.Sprint(tc.Config) // fmt prints maps sorted
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], i)
	}
	for _, key := range order {
		var m strings.Builder
		m.WriteString(ingressClass)
		rows := map[int]spec.AnnotationCase{}
		for _, i := range groups[key] {
			rows[i] = writeRow(t, &m, spec.LimitTable[i].AsAnnotationCase(), fmt.Sprintf("l%02d", i))
		}
		if cfg := spec.LimitTable[groups[key][0]].Config; len(cfg) > 0 {
			m.WriteString(spec.ConfigMapYAML("causeway", "config", cfg)) // the harness's --configmap
		}
		c := startController(t, map[string]string{"limits.yaml": m.String()})
		addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort))
		for _, i := range groups[key] {
			tc := spec.LimitTable[i]
			host := rows[i].Ingresses[0].Host
			t.Run(tc.Name, func(t *testing.T) {
				statuses, elapsed := sendLimitRow(t, tc, addr, host)
				t.Logf("from %s in %v: %v", tc.From, elapsed.Round(time.Millisecond), statuses)
				served := 0
				for _, s := range statuses {
					switch s {
					case 200:
						served++
					case tc.Refused:
					default:
						t.Fatalf("statuses %v: want only 200 and %d", statuses, tc.Refused)
					}
				}
				switch {
				case tc.Concurrent && served != tc.Served:
					t.Fatalf("statuses %v: %d served at once, want %d", statuses, served, tc.Served)
				case !tc.Concurrent && slices.Contains(statuses[:tc.Served], tc.Refused):
					t.Fatalf("statuses %v: the first %d must be served", statuses, tc.Served)
				case !tc.Concurrent && served > tc.Served+tc.Tolerance(elapsed.Seconds()) && tc.Refused != 0:
					t.Fatalf("statuses %v in %v: %d served, want at most %d", statuses, elapsed, served, tc.Served+tc.Tolerance(elapsed.Seconds()))
				case tc.Refused != 0 && served == len(statuses):
					t.Fatalf("statuses %v: none refused", statuses)
				}
			})
		}
	}
}

// sendLimitRow sends a row's requests, one after the other or all at
// once, and returns their statuses in the order sent.
func sendLimitRow(t *testing.T, tc spec.LimitCase, addr, host string) ([]int, time.Duration) {
	statuses := make([]int, tc.Count)
	errs := make([]error, tc.Count)
	start := time.Now()
	if tc.Concurrent {
		var wg sync.WaitGroup
		for j := range tc.Count {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := getFrom(tc.From, addr, host, tc.Path, nil)
				statuses[j], errs[j] = s.Status, err
			}()
		}
		wg.Wait()
	} else {
		for j := range tc.Count {
			s, err := getFrom(tc.From, addr, host, tc.Path, nil)
			statuses[j], errs[j] = s.Status, err
		}
	}
	elapsed := time.Since(start)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return statuses, elapsed
}

// TestLimitsSurviveReloads: a change of rate, and a change of the number of
// zones (which resizes them), reloads nginx and applies the new limits.
// nginx refuses a reload that gives a zone name another key; every zone
// here has the same key, and its name follows the rate.
func TestLimitsSurviveReloads(t *testing.T) {
	t.Parallel()
	b := startBackend(t, "app")
	eps := map[string]spec.Endpoint{"app": {IP: b.IP, Port: b.Port}}
	manifests := func(rps string, others int) string {
		row := spec.AnnotationCase{Ingresses: []spec.Ingress{{Name: "web", Host: "reload.test",
			Paths:       []spec.Route{{Path: "/", Type: "Prefix", Service: "app"}},
			Annotations: map[string]string{"limit-rps": rps, "limit-burst-multiplier": "1", "limit-connections": "10"}}}}
		for i := range others {
			row.Ingresses = append(row.Ingresses, spec.Ingress{Name: fmt.Sprintf("other-%d", i), Host: fmt.Sprintf("o%d.test", i),
				Paths:       []spec.Route{{Path: "/", Type: "Prefix", Service: "app"}},
				Annotations: map[string]string{"limit-rpm": strconv.Itoa(100 + i), "limit-connections": "10"}})
		}
		return ingressClass + row.Manifests("nginx.ingress.kubernetes.io", eps)
	}
	c := startController(t, map[string]string{"limits.yaml": manifests("1", 0)})
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort))
	burst := func(from string) []int {
		statuses, _ := sendLimitRow(t, spec.LimitCase{From: from, Path: "/", Count: 6}, addr, "reload.test")
		return statuses
	}
	// waitServed sends bursts from fresh addresses until one has want
	// 200s before its first 503.
	waitServed := func(want int, step string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		var last []int
		for n := 40; time.Now().Before(deadline); n++ {
			last = burst(fmt.Sprintf("127.0.1.%d", n))
			if served := slices.Index(append(last, 503), 503); served == want {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("%s: last burst %v, want %d served\n%s", step, last, want, c.log.String())
	}
	waitServed(2, "limit-rps 1")
	// 20 more zones: each shrinks (causeway_conn keeps its name with
	// another size), and the rps zone is renamed.
	c.WriteManifest("limits.yaml", manifests("50", 20))
	waitServed(6, "limit-rps 50 with 20 more rates")
	c.WriteManifest("limits.yaml", manifests("1", 0))
	waitServed(2, "back to limit-rps 1")
}

// TestLimitRateSlowsResponses: limit-rate (kilobytes per second) slows a
// response of about 7k down to seconds; limit-rate-after lets that much
// through at full speed. Both need proxy-buffering on: nginx does not slow
// unbuffered responses (the parser refuses them without it).
func TestLimitRateSlowsResponses(t *testing.T) {
	t.Parallel()
	b := startBackend(t, "app")
	eps := map[string]spec.Endpoint{"app": {IP: b.IP, Port: b.Port}}
	ing := func(name, host string, a map[string]string) spec.Ingress {
		return spec.Ingress{Name: name, Host: host, Paths: []spec.Route{{Path: "/", Type: "Prefix", Service: "app"}}, Annotations: a}
	}
	row := spec.AnnotationCase{Ingresses: []spec.Ingress{
		ing("slow", "slow.test", map[string]string{"limit-rate": "2", "proxy-buffering": "on"}),
		ing("after", "after.test", map[string]string{"limit-rate": "2", "limit-rate-after": "16", "proxy-buffering": "on"}),
	}}
	c := startController(t, map[string]string{"limits.yaml": ingressClass + row.Manifests("nginx.ingress.kubernetes.io", eps)})
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort))
	path := "/?pad=" + strings.Repeat("x", 7000) // the echo's reply repeats the URI
	timed := func(host string) time.Duration {
		start := time.Now()
		s, err := getFrom("127.0.0.1", addr, host, path, nil)
		if err != nil || s.Status != 200 {
			t.Fatalf("%s: status %d, %v", host, s.Status, err)
		}
		return time.Since(start)
	}
	// 2k in the first second, then 2k a second: about 2.5s for 7k.
	if d := timed("slow.test"); d < 1500*time.Millisecond {
		t.Errorf("limit-rate 2: about 7k in %v, want at least 1.5s", d)
	}
	if d := timed("after.test"); d > time.Second {
		t.Errorf("limit-rate-after 16: about 7k in %v, want under 1s", d)
	}
}
