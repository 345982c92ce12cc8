package integration

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/test/spec"
)

// TestNewHostsWithoutReload adds hosts of shapes nginx already serves: each
// row of the path table has two hosts (one shared server, with its hop
// server), and a third host of each row, with Services of its own, goes
// live by the hosts table alone. The path table, exact hosts over a
// wildcard, TLS by SNI, the client's address and the 404 of unknown
// hosts hold for them as for hosts in the files; removing them needs no
// reload either, and the next reload takes them into the files.
func TestNewHostsWithoutReload(t *testing.T) {
	t.Parallel()
	var svcs strings.Builder
	svcs.WriteString(ingressClass)
	for _, n := range []string{"p0", "p1", "p2", "q0", "q1", "q2", "r0", "r1", "r2", "wild"} {
		svcs.WriteString(serviceYAML("default", n, 80, startBackend(t, n)))
	}
	svcs.WriteString(tlsSecretYAML(t, "default", "shared", "shared.tls.test", 0))
	svcs.WriteString(ingressYAML("default", "wild", "*.paths.test", "Prefix / wild"))
	rows := func(suffix, svc string) string {
		var b strings.Builder
		for i, tc := range spec.PathTable {
			var paths []string
			for j, p := range tc.Paths {
				paths = append(paths, fmt.Sprintf("%s %s %s%d", p.Type, p.Path, svc, j))
			}
			b.WriteString(ingressYAML("default", fmt.Sprintf("row%d-%s", i, suffix), fmt.Sprintf("row%d-%s.paths.test", i, suffix), paths...))
		}
		return b.String()
	}
	// The two hosts of a shape have Services of their own, so that
	// their shared server takes them from maps (values all its hosts
	// share are written as they are, and a host that differs in one
	// reloads).
	base := svcs.String() + rows("a", "p") + rows("b", "q") +
		tlsIngressYAML("default", "tls-a", "a.tls.test", "shared", "p0") + tlsIngressYAML("default", "tls-b", "b.tls.test", "shared", "q0")
	added := rows("new", "r") + tlsIngressYAML("default", "tls-c", "c.tls.test", "shared", "r0")
	c := startController(t, map[string]string{"hosts.yaml": base})
	reloads := c.Metric("causeway_nginx_reloads_total")
	if got := c.Get("row0-new.paths.test", "/"); got.Reply.Service != "wild" {
		t.Fatalf("before it is added, row0-new is the wildcard's: %d from %q", got.Status, got.Reply.Service)
	}

	checkRows := func(host func(i int) string, svc string) error {
		for i, tc := range spec.PathTable {
			r, err := c.get("http", host(i), tc.Request)
			if err != nil {
				return err
			}
			if tc.Want < 0 {
				if r.Status != 404 {
					return fmt.Errorf("%s: %s%s: %d from %q, want 404", tc.Name, host(i), tc.Request, r.Status, r.Reply.Service)
				}
				continue
			}
			want := fmt.Sprintf("%s%d", svc, tc.Want)
			if r.Status != 200 || r.Reply.Service != want || r.Reply.Path != tc.Request {
				return fmt.Errorf("%s: %s%s: %d from %q (path %q), want %s", tc.Name, host(i), tc.Request, r.Status, r.Reply.Service, r.Reply.Path, want)
			}
		}
		return nil
	}
	newHost := func(i int) string { return fmt.Sprintf("row%d-new.paths.test", i) }
	c.WriteManifest("hosts.yaml", base+added)
	start := time.Now()
	eventually(t, 10*time.Second, func() error { return checkRows(newHost, "r") })
	t.Logf("%d hosts live in %s", len(spec.PathTable)+1, time.Since(start).Round(time.Millisecond))
	if got := c.Metric("causeway_nginx_reloads_total"); got != reloads {
		t.Fatalf("adding hosts of existing shapes reloaded nginx: %v -> %v reloads", reloads, got)
	}
	if c.Metric("causeway_dynamic_updates_total", `kind="hosts"`, `result="success"`) < 1 {
		t.Fatal("no hosts update counted")
	}
	// Counted once, under their own Ingress and Service: the hop
	// server's access log, not the catch-all's.
	eventually(t, 5*time.Second, func() error {
		if got := c.Metric("nginx_ingress_controller_requests", `host="row0-new.paths.test"`, `ingress="row0-new"`, `service="r0"`, `status="200"`); got < 1 {
			return fmt.Errorf("requests to row0-new counted: %v", got)
		}
		return nil
	})
	if got := c.Metric("nginx_ingress_controller_requests", `host="row0-new.paths.test"`, `service=""`); got != 0 {
		t.Errorf("requests to row0-new counted without their Service: %v", got)
	}
	// The hosts in the files are unchanged.
	if err := checkRows(func(i int) string { return fmt.Sprintf("row%d-a.paths.test", i) }, "p"); err != nil {
		t.Fatal(err)
	}

	// TLS by SNI: the shape's certificate for the new host, the default
	// one for a name nobody serves; the connection's part rides along.
	tlsNew := c.GetTLS("c.tls.test", "/")
	if tlsNew.Status != 200 || tlsNew.Reply.Service != "r0" || tlsNew.PeerCN != "shared.tls.test" {
		t.Fatalf("https://c.tls.test/: %d from %q with certificate %q", tlsNew.Status, tlsNew.Reply.Service, tlsNew.PeerCN)
	}
	if tlsNew.Reply.ForwardedProto != "https" {
		t.Errorf("X-Forwarded-Proto over the hop = %q, want https", tlsNew.Reply.ForwardedProto)
	}
	if other := c.GetTLS("nobody.tls.test", "/"); other.Status != 404 || other.PeerCN == "shared.tls.test" {
		t.Errorf("https://nobody.tls.test/: %d with certificate %q, want 404 with the default", other.Status, other.PeerCN)
	}
	plain, static := c.Get("c.tls.test", "/x?y=1"), c.Get("a.tls.test", "/x?y=1")
	if plain.Status != 308 || plain.Status != static.Status || plain.Location != strings.Replace(static.Location, "a.tls.test", "c.tls.test", 1) {
		t.Errorf("http://c.tls.test/x?y=1: %d to %q, want the shape's redirect (%d to %q for a.tls.test)", plain.Status, plain.Location, static.Status, static.Location)
	}
	inFiles, hopped := c.Get("row0-a.paths.test", "/"), c.Get("row0-new.paths.test", "/")
	if hopped.Reply.ForwardedFor == "" || hopped.Reply.ForwardedFor != inFiles.Reply.ForwardedFor ||
		hopped.Reply.Headers["X-Real-IP"] != inFiles.Reply.Headers["X-Real-IP"] {
		t.Errorf("client address over the hop: X-Forwarded-For %q, X-Real-IP %q; in the files %q, %q",
			hopped.Reply.ForwardedFor, hopped.Reply.Headers["X-Real-IP"], inFiles.Reply.ForwardedFor, inFiles.Reply.Headers["X-Real-IP"])
	}
	for name := range hopped.Reply.Headers {
		if strings.HasPrefix(name, "X-Causeway-Hop") {
			t.Errorf("the backend saw %s", name)
		}
	}
	if got := c.Get("nobody.other.test", "/"); got.Status != 404 {
		t.Errorf("an unknown host: %d, want the default 404", got.Status)
	}

	// Removed: the wildcard's again, or 404, without a reload.
	c.WriteManifest("hosts.yaml", base)
	eventually(t, 10*time.Second, func() error {
		if got := c.Get("row0-new.paths.test", "/"); got.Reply.Service != "wild" {
			return fmt.Errorf("removed row0-new: %d from %q, want the wildcard's", got.Status, got.Reply.Service)
		}
		if got := c.GetTLS("c.tls.test", "/"); got.Status != 404 {
			return fmt.Errorf("removed c.tls.test: %d from %q, want 404", got.Status, got.Reply.Service)
		}
		return nil
	})
	if got := c.Metric("causeway_nginx_reloads_total"); got != reloads {
		t.Fatalf("removing hosts served from the table reloaded nginx: %v -> %v reloads", reloads, got)
	}

	// A change that reloads takes the table's hosts into the files; a
	// client asking all along is never refused, though nginx's old
	// workers know them by the table only until the new ones take over.
	c.WriteManifest("hosts.yaml", base+added)
	eventually(t, 10*time.Second, func() error { return checkRows(newHost, "r") })
	reloads = c.Metric("causeway_nginx_reloads_total")
	stop, refused := make(chan struct{}), make(chan string, 1)
	asked := make(chan int)
	go func() {
		n := 0
		defer func() { asked <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			n++
			if r, err := c.get("http", "row0-new.paths.test", "/"); err == nil && r.Reply.Service != "r0" {
				select {
				case refused <- fmt.Sprintf("%d from %q", r.Status, r.Reply.Service):
				default:
				}
			}
		}
	}()
	c.WriteManifest("hosts.yaml", base+added+ingressYAML("default", "odd", "odd.test", "Exact /odd p0"))
	eventually(t, 10*time.Second, func() error {
		if c.Metric("causeway_nginx_reloads_total") == reloads {
			return fmt.Errorf("no reload yet")
		}
		return checkRows(newHost, "r")
	})
	time.Sleep(200 * time.Millisecond)
	close(stop)
	t.Logf("%d requests to row0-new across the reload", <-asked)
	select {
	case r := <-refused:
		t.Errorf("across the reload that took row0-new into the files, it answered %s", r)
	default:
	}
	if got := c.GetTLS("c.tls.test", "/"); got.Reply.Service != "r0" || got.PeerCN != "shared.tls.test" {
		t.Errorf("after the reload, https://c.tls.test/: %d from %q with %q", got.Status, got.Reply.Service, got.PeerCN)
	}
}

// TestNewHostsKeepTheClient: through the hop, the backend is told what it
// would be told of a host in the files (X-Real-IP, X-Forwarded-*), for
// trusted and untrusted peers, spoofed headers or none, and the access
// log shows the same client once.
func TestNewHostsKeepTheClient(t *testing.T) {
	t.Parallel()
	p, q, r := startBackend(t, "p"), startBackend(t, "q"), startBackend(t, "r")
	base := ingressClass + serviceYAML("default", "p", 80, p) + serviceYAML("default", "q", 80, q) + serviceYAML("default", "r", 80, r) +
		ingressYAML("default", "a", "a.fw.test", "Prefix / p") + ingressYAML("default", "b", "b.fw.test", "Prefix / q")
	c := startController(t, map[string]string{"app.yaml": base,
		"config.yaml": realIPConfigMap(`use-forwarded-headers: "true", proxy-real-ip-cidr: "10.0.0.0/8,127.0.0.2"`)})
	reloads := c.Metric("causeway_nginx_reloads_total")
	c.WriteManifest("app.yaml", base+ingressYAML("default", "c", "c.fw.test", "Prefix / r"))
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort))
	eventually(t, 10*time.Second, func() error {
		if got := c.Get("c.fw.test", "/"); got.Reply.Service != "r" {
			return fmt.Errorf("c.fw.test: %d from %q", got.Status, got.Reply.Service)
		}
		return nil
	})
	if got := c.Metric("causeway_nginx_reloads_total"); got != reloads {
		t.Fatalf("c.fw.test reloaded nginx: %v -> %v", reloads, got)
	}
	const trusted, untrusted = "127.0.0.2", "127.0.0.3"
	for _, from := range []string{trusted, untrusted} {
		for name, header := range map[string]map[string]string{"spoofed": spoofed, "none": nil} {
			inFiles, err := getFrom(from, addr, "a.fw.test", "/", header)
			if err != nil {
				t.Fatal(err)
			}
			hopped, err := getFrom(from, addr, "c.fw.test", "/hop-"+from+"-"+name, header)
			if err != nil {
				t.Fatal(err)
			}
			hopped.Host = strings.Replace(hopped.Host, "c.fw.test", "a.fw.test", 1)
			if hopped != inFiles {
				t.Errorf("from %s, headers %s: the backend of the new host saw %+v, of a host in the files %+v", from, name, hopped, inFiles)
			}
		}
	}
	eventually(t, 5*time.Second, func() error {
		var lines []string
		for line := range strings.Lines(c.log.String()) {
			if strings.Contains(line, `"GET /hop-`+trusted+`-spoofed HTTP/1.1"`) {
				lines = append(lines, line)
			}
		}
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "203.0.113.9 ") {
			return fmt.Errorf("access log of the trusted hopped request: %q", lines)
		}
		return nil
	})
}

// TestAnnotationTableThroughTheHop runs the annotation behaviour table
// against hosts added after nginx started: every row twice in the files
// (so that its layout is shared and has a hop server when it may), then,
// one change per row, a third copy of the row, whose request must get the
// row's answer, whether the copy went live by the hosts table or, for a
// layout without a hop server, by a reload (which also takes the copies
// before it into the files).
func TestAnnotationTableThroughTheHop(t *testing.T) {
	t.Parallel()
	runTableThroughTheHop(t, spec.AnnotationTable)
}

// TestSnippetTableThroughTheHop is the same for the snippet table.
func TestSnippetTableThroughTheHop(t *testing.T) {
	t.Parallel()
	runTableThroughTheHop(t, rowsForDataPlane(t, spec.SnippetTable))
}

func runTableThroughTheHop(t *testing.T, table []spec.AnnotationCase) {
	var base strings.Builder
	base.WriteString(ingressClass)
	rows := make([]spec.AnnotationCase, len(table))
	copies := make([]string, len(table))
	for i, tc := range table {
		writeRow(t, &base, tc, fmt.Sprintf("a%02d", i))
		writeRow(t, &base, tc, fmt.Sprintf("b%02d", i))
		var b strings.Builder
		rows[i] = writeRow(t, &b, tc, fmt.Sprintf("c%02d", i))
		copies[i] = b.String()
	}
	cfg := ""
	if u := spec.UnionConfig(rows); len(u) > 0 {
		cfg = spec.ConfigMapYAML("causeway", "config", u)
	}
	c := startController(t, map[string]string{"annotations.yaml": base.String() + cfg})
	manifest := base.String() + cfg
	byTable := 0
	for i, tc := range rows {
		t.Run(table[i].Name, func(t *testing.T) {
			reloads := c.Metric("causeway_nginx_reloads_total")
			manifest += copies[i]
			c.WriteManifest("annotations.yaml", manifest)
			eventually(t, 10*time.Second, func() error {
				if d := askRow(c, tc); d != "" {
					return errors.New(d)
				}
				return nil
			})
			if c.Metric("causeway_nginx_reloads_total") == reloads {
				byTable++
			}
		})
	}
	t.Logf("%d of %d copies went live by the hosts table", byTable, len(rows))
	if byTable < len(rows)/2 {
		t.Errorf("only %d of %d copies went live by the hosts table", byTable, len(rows))
	}
}
