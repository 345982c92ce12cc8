package main

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Section (i): what basic auth and source-address lists cost nginx per
// request, through the generated configuration and written by hand.
// Each side serves two hosts on one listener: an open one and a guarded
// one (auth-type basic and allow/deny lists). The cost of the access
// control is the guarded host's nginx CPU per request minus the open
// host's, measured in the same round on the same nginx, so what the two
// configurations share (the Lua balancer, the forwarding headers) cancels.
const (
	accessOpenHost    = "open.bench.test"
	accessGuardedHost = "guarded.bench.test"
	accessUser        = "bench"
	accessPassword    = "bench-secret"
)

// accessAllow and accessDeny are the lists of the guarded host. The load
// comes from 127.0.0.1, which the last allow prefix admits, so nginx walks
// the whole deny list and every allow line before it.
var (
	accessDeny  = []string{"127.255.0.0/16", "198.51.100.0/24"}
	accessAllow = []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "127.0.0.0/8"}
)

// accessHtpasswd is the password file: {SHA}, the cheapest hash the
// htpasswd grammar accepts, so that what is compared is the config and
// not the hash (both sides run the same hash on the same file).
func accessHtpasswd() string {
	sum := sha1.Sum([]byte(accessPassword))
	return accessUser + ":{SHA}" + base64.StdEncoding.EncodeToString(sum[:]) + "\n"
}

func accessAuthorization() string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(accessUser+":"+accessPassword))
}

// accessYAML is the Service, the password Secret and the two Ingresses.
func accessYAML() string {
	var b strings.Builder
	b.WriteString(serviceYAML())
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Secret\nmetadata: {name: users, namespace: %s}\ntype: Opaque\ndata:\n  auth: %s\n---\n",
		ns, base64.StdEncoding.EncodeToString([]byte(accessHtpasswd())))
	b.WriteString(ingressYAML("open", accessOpenHost))
	b.WriteString(annotatedIngressYAML("guarded", accessGuardedHost, service, accessAnnotations()...))
	return b.String()
}

func accessAnnotations() [][2]string {
	return [][2]string{
		{"auth-type", "basic"},
		{"auth-secret", "users"},
		{"auth-realm", "Bench"},
		{"allowlist-source-range", strings.Join(accessAllow, ",")},
		{"denylist-source-range", strings.Join(accessDeny, ",")},
	}
}

// handAccessServers is the two hosts written by hand: the guarded one with
// the access module's lines and auth_basic, as one writes them for nginx.
func handAccessServers(listen, htpasswd string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "    server {\n        listen %s;\n        server_name %s;\n        location / {\n            proxy_pass http://backends;\n        }\n    }\n", listen, accessOpenHost)
	fmt.Fprintf(&b, "    server {\n        listen %s;\n        server_name %s;\n        location / {\n", listen, accessGuardedHost)
	for _, p := range accessDeny {
		fmt.Fprintf(&b, "            deny %s;\n", p)
	}
	for _, p := range accessAllow {
		fmt.Fprintf(&b, "            allow %s;\n", p)
	}
	fmt.Fprintf(&b, "            deny all;\n            auth_basic \"Bench\";\n            auth_basic_user_file %s;\n            proxy_pass http://backends;\n        }\n    }\n", htpasswd)
	return b.String()
}

// startHandAccess runs (i)'s hand-written nginx: (f)'s http block (the
// same forwarding headers and upstreams) with the two hosts.
func (e *env) startHandAccess(ctx context.Context, name string, backends []*backend) (string, *process, error) {
	dir := filepath.Join(e.dir, name)
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		return "", nil, err
	}
	htpasswd := filepath.Join(dir, "htpasswd")
	if err := os.WriteFile(htpasswd, []byte(accessHtpasswd()), 0o644); err != nil {
		return "", nil, err
	}
	ip := e.nextIP(listenNet)
	port, err := freePort(ip)
	if err != nil {
		return "", nil, err
	}
	addr := fmt.Sprintf("%s:%d", ip, port)
	var peers, luaPeers []string
	for _, b := range backends {
		peers = append(peers, b.Addr)
		luaPeers = append(luaPeers, fmt.Sprintf("{ %q, %s }", strings.Split(b.Addr, ":")[0], strings.Split(b.Addr, ":")[1]))
	}
	var conf strings.Builder
	if err := handAnnotatedConf.Execute(&conf, map[string]any{"User": workerUser(), "Dir": dir, "Peers": peers,
		"LuaPeers": strings.Join(luaPeers, ", "), "Servers": []annotatedServer{{Listen: addr, Body: handAccessServers(addr, htpasswd)}}}); err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf.String()), 0o644); err != nil {
		return "", nil, err
	}
	proc, err := e.runNginx(ctx, "hand-written (i)", dir, path, addr)
	if err != nil {
		return "", nil, err
	}
	return addr, proc, nil
}

// runAccess runs section (i) behind backends of one kind.
func runAccess(ctx context.Context, e *env, c *config, rep *report, kind string) error {
	p, bs, backendMaster, err := newKindPool(ctx, e, kind, c.tputBackends, echoURIHeader)
	if err != nil {
		return err
	}
	defer p.close()
	app := ingressClassYAML + configMapYAML(map[string]string{"worker-processes": "1", "disable-access-log": "true"}) + accessYAML()
	gen, err := e.startController(ctx, "access-generated-"+kind, map[string]string{"app.yaml": app, "slice.yaml": sliceYAML(p.port, ips(bs)...)}, c)
	if err != nil {
		return err
	}
	defer gen.stop()
	handAddr, hand, err := e.startHandAccess(ctx, "access-handwritten-"+kind, bs)
	if err != nil {
		return err
	}
	handMaster := func() int { return hand.cmd.Process.Pid }
	sides := []side{
		{name: "generated, open host", httpAddr: gen.HTTPAddr(), host: accessOpenHost, master: gen.nginxPID},
		{name: "generated, guarded host", httpAddr: gen.HTTPAddr(), host: accessGuardedHost, master: gen.nginxPID},
		{name: "hand-written, open host", httpAddr: handAddr, host: accessOpenHost, master: handMaster},
		{name: "hand-written, guarded host", httpAddr: handAddr, host: accessGuardedHost, master: handMaster},
	}
	for _, sd := range sides {
		if err := oneWorker(sd); err != nil {
			return err
		}
		if err := checkAccess(ctx, sd); err != nil {
			return fmt.Errorf("(i) %s: %w", sd.name, err)
		}
	}
	pin := planPinning(c, kind, c.resolvedLoader())
	if err := pin.apply([]int{gen.nginxPID(), hand.cmd.Process.Pid}, backendMaster); err != nil {
		return err
	}
	return measureAccess(ctx, c, kind, pin, sides, rep)
}

// checkAccess asks one side what the guarded host must refuse and what
// both hosts must serve, until the controller has pushed the endpoints
// (for at most 10 s).
func checkAccess(ctx context.Context, sd side) error {
	client := httpClient(sd.httpAddr, false)
	guarded := sd.host == accessGuardedHost
	status := func(auth string) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+sd.httpAddr+"/x", nil)
		if err != nil {
			return 0, err
		}
		req.Host = sd.host
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := status(accessAuthorization())
		if err == nil && got == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("with credentials: status %d, %v", got, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !guarded {
		return nil
	}
	for _, a := range []struct {
		auth string
		want int
	}{
		{"", http.StatusUnauthorized},
		{"Basic " + base64.StdEncoding.EncodeToString([]byte(accessUser+":wrong")), http.StatusUnauthorized},
	} {
		if got, err := status(a.auth); err != nil || got != a.want {
			return fmt.Errorf("authorization %q: status %d (%v), want %d", a.auth, got, err, a.want)
		}
	}
	return nil
}

// measureAccess loads every side in alternating rounds and reports the
// access control's cost per request on each configuration.
func measureAccess(ctx context.Context, c *config, kind string, pin pinning, sides []side, rep *report) error {
	loader := c.resolvedLoader()
	fmt.Fprintf(os.Stderr, "(i) basic auth and allow lists behind %s backends: %s, %d connections, %d rounds of %s per side ...\n", kind, loader, c.conns, c.rounds, c.tputDuration)
	load := closedLoop(ctx, c, pin, "/x", []string{"Authorization: " + accessAuthorization()})
	res, err := abRounds(ctx, c.rounds, sides, time.Second, c.tputDuration, load)
	if err != nil {
		return fmt.Errorf("(i) access control: %w", err)
	}
	t := &table{title: fmt.Sprintf("(i) Basic auth and allow lists behind %s backends: generated vs hand-written", kind), header: []string{"config"}}
	compareTable(t, "req", sides, res, 3, func(int) []string { return nil })
	// cost is the median over rounds of the guarded host's CPU per
	// request minus the open host's in the same round.
	cost := func(open, guarded int) time.Duration {
		var ds []time.Duration
		for k := range min(len(res[open]), len(res[guarded])) {
			ds = append(ds, res[guarded][k].cpuPer()-res[open][k].cpuPer())
		}
		return percentile(sortedCopy(ds), 50)
	}
	genCost, handCost := cost(0, 1), cost(2, 3)
	t.note("Hosts: `%s` (one Prefix path `/`, no annotations) and `%s` (the same with `auth-type: basic`, `auth-secret` of one {SHA} user, `auth-realm`, `allowlist-source-range: %s`, `denylist-source-range: %s`). The load (from 127.0.0.1, admitted by the last allow prefix) sends valid credentials to both.",
		accessOpenHost, accessGuardedHost, strings.Join(accessAllow, ","), strings.Join(accessDeny, ","))
	t.note("Hand-written: (f)'s http block (the same forwarding headers) with a plain `upstream` (keepalive 320); the guarded location has the same `deny`/`allow` lines, `deny all`, `auth_basic` and `auth_basic_user_file` on the same file. Generated: the controller with one worker, access log off, metrics on (its defaults otherwise).")
	t.note("Access-control cost per request (guarded host minus open host, nginx worker CPU, median over rounds of the difference within a round): generated %s, hand-written %s. Before timing, each side answered 200 with the credentials and, on the guarded host, 401 without them or with a wrong password.", genCost, handCost)
	t.note("%s", failureNote(res))
	if pin.on {
		t.note("CPUs: each nginx under test pinned to CPU %d, wrk and the backend nginx to CPU %d.", frontCPU, loadCPU)
	} else {
		t.note("CPUs: not pinned (%s).", pin.why)
	}
	rep.addTable(t)
	// The target: the access control costs no more than 10% over the same
	// written by hand. A difference under one CPU tick per ~1000 requests
	// is within the measurement's noise, so it is reported as absolute
	// times too.
	over := float64(genCost-handCost) / float64(max(handCost, time.Nanosecond))
	rep.target(fmt.Sprintf("(i) basic auth + allow lists, nginx CPU per request added, generated vs hand-written, %s backends", kind),
		"≤ +10%", fmt.Sprintf("%s vs %s (%+.0f%%)", genCost, handCost, 100*over), pass(genCost <= handCost+handCost/10))
	rep.target(fmt.Sprintf("(i) guarded host, nginx CPU per request, generated / hand-written, %s backends", kind), "informational",
		fmt.Sprintf("%.2f×", roundRatio(res[1], res[3], sample.cpuPerValue)), nil)
	return nil
}
