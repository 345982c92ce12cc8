package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/test/echo"
)

// Section (f): an Ingress whose location carries the common ingress-nginx
// annotations, through the generated config and through the same
// behaviour written by hand, compared by nginx CPU per request.
const (
	annotatedHost = "api.bench.test"
	// annotatedTarget is what the load asks for: the location's regex
	// matches, the rewrite keeps "/items?x=1".
	annotatedTarget = "/api/items?x=1"
	// allowedOrigin is in cors-allow-origin; the load sends it.
	allowedOrigin = "https://app.example.com"
)

// annotatedAnnotations are the Ingress's annotations (without the
// nginx.ingress.kubernetes.io/ prefix), in the order the table lists them.
var annotatedAnnotations = [][2]string{
	{"use-regex", "true"},
	{"rewrite-target", "/$2"},
	{"enable-cors", "true"},
	{"cors-allow-origin", allowedOrigin + ", https://*.bench.test"},
	{"proxy-connect-timeout", "5"},
	{"proxy-read-timeout", "30"},
	{"proxy-send-timeout", "30"},
	{"proxy-buffering", "on"},
	{"proxy-buffer-size", "16k"},
	{"proxy-body-size", "8m"},
	{"custom-headers", ns + "/extra-headers"},
}

// annotatedYAML is the Service, the custom-headers ConfigMap (two
// headers) and the annotated Ingress: one regex path with a capture group.
func annotatedYAML() string {
	var b strings.Builder
	b.WriteString(serviceYAML())
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra-headers, namespace: %s}\ndata:\n  X-Frame-Options: \"DENY\"\n  X-Content-Type-Options: \"nosniff\"\n---\n", ns)
	fmt.Fprintf(&b, "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: api\n  namespace: %s\n  annotations:\n", ns)
	for _, a := range annotatedAnnotations {
		fmt.Fprintf(&b, "    nginx.ingress.kubernetes.io/%s: %q\n", a[0], a[1])
	}
	fmt.Fprintf(&b, `spec:
  ingressClassName: causeway
  rules:
  - host: %q
    http:
      paths:
      - {path: "/api(/|$)(.*)", pathType: ImplementationSpecific, backend: {service: {name: %s, port: {number: 80}}}}
---
`, annotatedHost, service)
	return b.String()
}

// annotationList is the annotations as the table notes show them.
func annotationList() string {
	var out []string
	for _, a := range annotatedAnnotations {
		out = append(out, fmt.Sprintf("`%s: %q`", a[0], a[1]))
	}
	return strings.Join(out, ", ")
}

// startGeneratedPlain runs the generated configuration without its Lua
// balancer, in an nginx of its own: the http block of the controller's
// nginx.conf (its maps, proxy settings and headers; the Lua set-up, the
// includes and the control servers left out) and the generated server
// file of the annotated host, listening on one plain address with
// proxy_pass to a plain upstream (keepalive 320, as the Lua balancer's)
// instead of the Lua balancer, whose per-location key goes too. The rest
// of the Lua set-up stays (X-Request-ID, the metrics hook). It returns
// the address and the nginx master.
func (e *env) startGeneratedPlain(ctx context.Context, name, stateDir string, backends []*backend) (string, *process, error) {
	dir := filepath.Join(e.dir, name)
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		return "", nil, err
	}
	ip := e.nextIP(listenNet)
	port, err := freePort(ip)
	if err != nil {
		return "", nil, err
	}
	addr := net.JoinHostPort(ip, strconv.Itoa(port))
	main, err := os.ReadFile(filepath.Join(stateDir, "nginx.conf"))
	if err != nil {
		return "", nil, err
	}
	var http, modules []string
	in, skipping := false, false
	for _, line := range strings.Split(string(main), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case !in:
			// The modules stay: headers-more for server-tokens, and Lua
			// for the X-Request-ID and metrics hooks the server keeps.
			if strings.HasPrefix(t, "load_module ") {
				modules = append(modules, line)
			}
			in = line == "http {"
			continue
		case line == "}":
			in = false
			continue
		case skipping:
			skipping = line != "    }"
			continue
		case line == "    server {":
			skipping = true // the control and status servers on unix sockets
			continue
		case strings.HasPrefix(t, "include "):
			continue
		}
		if f := strings.Fields(t); len(f) > 0 && strings.HasSuffix(f[0], "_temp_path") {
			line = fmt.Sprintf("    %s %s/tmp/%s;", f[0], dir, strings.TrimSuffix(f[0], "_temp_path"))
		}
		http = append(http, line)
	}
	if len(http) == 0 {
		return "", nil, fmt.Errorf("no http block in the generated nginx.conf")
	}
	files, _ := filepath.Glob(filepath.Join(stateDir, "servers", annotatedHost+"-*.conf"))
	if len(files) != 1 {
		return "", nil, fmt.Errorf("want one generated server file for %s, found %d", annotatedHost, len(files))
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		return "", nil, err
	}
	var server []string
	listens, passes := 0, 0
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "listen "):
			if listens == 0 {
				server = append(server, "    listen "+addr+";")
			}
			listens++
			continue
		case strings.HasPrefix(t, "set $causeway_backend "):
			continue
		case t == "proxy_pass http://causeway_balancer;":
			line = strings.Replace(line, "causeway_balancer", "bench_plain", 1)
			passes++
		}
		server = append(server, line)
	}
	if listens == 0 || passes == 0 {
		return "", nil, fmt.Errorf("generated server file %s: %d listen lines, %d Lua-balanced proxy_pass lines", files[0], listens, passes)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# The generated configuration of %s without the Lua balancer (bench/dynamic/annotated.go).\n", annotatedHost)
	for _, m := range modules {
		b.WriteString(m + "\n")
	}
	fmt.Fprintf(&b, "daemon off;\nmaster_process on;\nworker_processes 1;\n%s\npid %s/nginx.pid;\nerror_log %s/error.log notice;\n\n", workerUser(), dir, dir)
	b.WriteString("events {\n    worker_connections 16384;\n}\n\nhttp {\n")
	b.WriteString(strings.Join(http, "\n") + "\n")
	b.WriteString("    upstream bench_plain {\n")
	for _, bk := range backends {
		fmt.Fprintf(&b, "        server %s;\n", bk.Addr)
	}
	b.WriteString("        keepalive 320;\n        keepalive_timeout 60s;\n    }\n\n")
	fmt.Fprintf(&b, "    server {\n        listen %s default_server;\n        server_name _;\n        location / {\n            return 404;\n        }\n    }\n\n", addr)
	b.WriteString(strings.Join(server, "\n") + "\n}\n")
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(b.String()), 0o644); err != nil {
		return "", nil, err
	}
	proc, err := e.runNginx(ctx, "generated without Lua", dir, conf, addr)
	if err != nil {
		return "", nil, err
	}
	return addr, proc, nil
}

// annotatedMetricsOff names (f)'s generated row without metrics.
const annotatedMetricsOff = "generated, metrics off"

// runAnnotated starts backends of one kind, a controller serving the
// annotated Ingress with one nginx worker, and the hand-written nginx,
// checks that every config behaves the same, and runs section (f).
func runAnnotated(ctx context.Context, e *env, c *config, rep *report, kind string) error {
	p, bs, backendMaster, err := newKindPool(ctx, e, kind, c.tputBackends, echoURIHeader)
	if err != nil {
		return err
	}
	defer p.close()
	// custom-headers sets only the headers the operator allows.
	app := ingressClassYAML + configMapYAML(map[string]string{"worker-processes": "1", "disable-access-log": "true",
		"global-allowed-response-headers": "X-Frame-Options, X-Content-Type-Options"}) + annotatedYAML()
	gen, err := e.startController(ctx, "annotated-generated-"+kind, map[string]string{"app.yaml": app, "slice.yaml": sliceYAML(p.port, ips(bs)...)}, c)
	if err != nil {
		return err
	}
	defer gen.stop()
	// Endpoints arrive over the dynamic channel after ready.
	if err := waitAnnotated(ctx, gen.HTTPAddr(), bs, 10*time.Second); err != nil {
		return fmt.Errorf("generated: %w", err)
	}
	// The same without metrics, which the hand-written config has no
	// counterpart of: the like-for-like row (metrics have a target of
	// their own, against this).
	genOff, err := e.startControllerWith(ctx, "annotated-generated-metrics-off-"+kind,
		map[string]string{"app.yaml": app, "slice.yaml": sliceYAML(p.port, ips(bs)...)}, c, controllerOptions{args: []string{"--enable-metrics=false"}})
	if err != nil {
		return err
	}
	defer genOff.stop()
	if err := gen.checkRendered("generated", []string{metricsHook}, nil); err != nil {
		return err
	}
	if err := genOff.checkRendered(annotatedMetricsOff, nil, []string{metricsHook}); err != nil {
		return err
	}
	if err := waitAnnotated(ctx, genOff.HTTPAddr(), bs, 10*time.Second); err != nil {
		return fmt.Errorf("generated, metrics off: %w", err)
	}
	hand, err := e.startHandAnnotated(ctx, "annotated-handwritten-"+kind, bs)
	if err != nil {
		return err
	}
	sides := []side{
		{name: "generated", httpAddr: gen.HTTPAddr(), host: annotatedHost, master: gen.nginxPID},
		{name: "hand-written", httpAddr: hand.HTTPAddr, host: annotatedHost, master: hand.masterPID},
		{name: annotatedMetricsOff, httpAddr: genOff.HTTPAddr(), host: annotatedHost, master: genOff.nginxPID},
	}
	masters := []int{gen.nginxPID(), hand.masterPID(), genOff.nginxPID()}
	// The generated configuration on a plain upstream: generated minus it
	// is the Lua balancer's cost, it minus hand-written what the rendering
	// of the annotations costs. Left out, with the reason, when the
	// generated files cannot be adapted (the renderer moves on).
	why := ""
	if addr, proc, err := e.startGeneratedPlain(ctx, "annotated-generated-plain-"+kind, gen.StateDir, bs); err != nil {
		why = err.Error()
		fmt.Fprintf(os.Stderr, "(f) leaving out the generated config on a plain upstream: %v\n", err)
	} else {
		master := proc.cmd.Process.Pid
		masters = append(masters, master)
		sides = append(sides, side{name: "generated on a plain upstream", httpAddr: addr, host: annotatedHost, master: func() int { return master }})
	}
	sides = append(sides, side{name: "hand-written + minimal Lua balancer", httpAddr: hand.FloorAddr, host: annotatedHost, master: hand.masterPID})
	for _, sd := range sides {
		if err := oneWorker(sd); err != nil {
			return err
		}
	}
	probes, err := checkAnnotated(ctx, kind, sides, bs)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "(f) annotated location: generated (%s) and hand-written (%s) answer %d probes alike, %s backends\n", gen.HTTPAddr(), hand.HTTPAddr, probes, kind)
	pin := planPinning(c, kind, c.resolvedLoader())
	if err := pin.apply(masters, backendMaster); err != nil {
		return err
	}
	return measureAnnotated(ctx, c, kind, pin, sides, probes, why, rep)
}

// waitAnnotated polls the annotated location until one of the backends
// answers, for at most timeout.
func waitAnnotated(ctx context.Context, addr string, bs []*backend, timeout time.Duration) error {
	client := httpClient(addr, false)
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		o, err := probeOnce(ctx, client, addr, annotatedProbe{method: http.MethodGet, path: annotatedTarget, origin: allowedOrigin})
		if err == nil && o.status == http.StatusOK {
			for _, b := range bs {
				if o.endpoint == b.Addr {
					return nil
				}
			}
		}
		last = fmt.Sprintf("%+v (%v)", o, err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s%s not served by a backend within %s (last: %s)", annotatedHost, annotatedTarget, timeout, last)
}

// annotatedProbe is one request of the behaviour check, with what the
// generated config must answer ("" and 0 are not checked; "-" means the
// header must be absent).
type annotatedProbe struct {
	what                   string
	method, path, origin   string
	preflight              bool
	body                   int // bytes of request body sent
	announce               int // Content-Length announced, no body sent (raw request)
	wantStatus             int
	wantURI, wantACAO      string
	wantCustomHeadersExist bool
}

var annotatedProbes = []annotatedProbe{
	{what: "GET, allowed origin", method: http.MethodGet, path: annotatedTarget, origin: allowedOrigin,
		wantStatus: 200, wantURI: "/items?x=1", wantACAO: allowedOrigin, wantCustomHeadersExist: true},
	{what: "GET, wildcard origin, upper-case path", method: http.MethodGet, path: "/API/v1/items", origin: "https://a1.bench.test",
		wantStatus: 200, wantURI: "/v1/items", wantACAO: "https://a1.bench.test", wantCustomHeadersExist: true},
	{what: "GET, another origin", method: http.MethodGet, path: "/api", origin: "https://evil.test",
		wantStatus: 200, wantURI: "/", wantACAO: "-", wantCustomHeadersExist: true},
	{what: "GET, no origin", method: http.MethodGet, path: "/api/", wantStatus: 200, wantURI: "/", wantACAO: "-"},
	{what: "GET outside the location", method: http.MethodGet, path: "/apix", origin: allowedOrigin, wantStatus: 404, wantACAO: "-"},
	{what: "preflight, allowed origin", method: http.MethodOptions, path: "/api/items", origin: allowedOrigin, preflight: true,
		wantStatus: 204, wantACAO: allowedOrigin, wantCustomHeadersExist: true},
	{what: "OPTIONS, another origin", method: http.MethodOptions, path: "/api/items", origin: "https://evil.test", preflight: true,
		wantStatus: 200, wantURI: "/items", wantACAO: "-"},
	{what: "POST of 2 MiB (over the default 1m, under proxy-body-size)", method: http.MethodPost, path: "/api/upload", origin: allowedOrigin, body: 2 << 20,
		wantStatus: 200, wantURI: "/upload", wantACAO: allowedOrigin},
	{what: "POST announcing 9 MiB (over proxy-body-size)", method: http.MethodPost, path: "/api/upload", announce: 9 << 20, wantStatus: 413},
}

// observedHeaders are the response headers the check compares.
var observedHeaders = []string{
	"Access-Control-Allow-Origin", "Access-Control-Allow-Credentials", "Access-Control-Allow-Methods",
	"Access-Control-Allow-Headers", "Access-Control-Max-Age", "X-Frame-Options", "X-Content-Type-Options",
}

// observed is what one probe saw: the status, the compared headers, and
// what the backend received (the URI, and behind the Go echo servers the
// Host and forwarding headers).
type observed struct {
	status   int
	headers  []string
	uri      string
	upstream string
	endpoint string // not compared: the balancers rotate
}

func (o observed) key() string {
	return fmt.Sprintf("%d %q uri=%q upstream=%s", o.status, o.headers, o.uri, o.upstream)
}

func (o observed) header(name string) string {
	i := slices.Index(observedHeaders, name)
	return strings.TrimPrefix(o.headers[i], name+": ")
}

// requestID is nginx's $request_id: 16 random bytes in hex.
var requestID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// probeOnce sends one probe to addr.
func probeOnce(ctx context.Context, client *http.Client, addr string, pr annotatedProbe) (observed, error) {
	var resp *http.Response
	if pr.announce > 0 {
		// A raw request: nginx answers 413 from the Content-Length alone.
		conn, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return observed{}, err
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", pr.method, pr.path, annotatedHost, pr.announce)
		if resp, err = http.ReadResponse(bufio.NewReader(conn), nil); err != nil {
			return observed{}, err
		}
	} else {
		var body io.Reader
		if pr.body > 0 {
			body = strings.NewReader(strings.Repeat("x", pr.body))
		}
		req, err := http.NewRequestWithContext(ctx, pr.method, "http://"+annotatedHost+pr.path, body)
		if err != nil {
			return observed{}, err
		}
		if pr.origin != "" {
			req.Header.Set("Origin", pr.origin)
		}
		if pr.preflight {
			req.Header.Set("Access-Control-Request-Method", "PUT")
		}
		if resp, err = client.Do(req); err != nil {
			return observed{}, err
		}
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	o := observed{status: resp.StatusCode, endpoint: resp.Header.Get("X-Echo-Endpoint")}
	for _, h := range observedHeaders {
		v := "-"
		if vs := resp.Header.Values(h); len(vs) > 0 {
			v = strings.Join(vs, " | ")
		}
		o.headers = append(o.headers, h+": "+v)
	}
	if o.endpoint != "" {
		o.uri = resp.Header.Get("X-Echo-URI") // nginx backends
		var r echo.Reply
		if json.Unmarshal(data, &r) == nil && r.URI != "" { // Go backends
			o.uri = r.URI
			// What differs between configs by design: each listens on
			// a port of its own, and request IDs are fresh.
			_, port, _ := net.SplitHostPort(addr)
			if r.Headers["X-Forwarded-Port"] == port {
				r.Headers["X-Forwarded-Port"] = "(the listener's port)"
			}
			if id := r.Headers["X-Request-ID"]; requestID.MatchString(id) {
				r.Headers["X-Request-ID"] = "(a fresh request ID)"
			}
			o.upstream = fmt.Sprintf("host=%q xff=%q proto=%q seen=%v", r.Host, r.ForwardedFor, r.ForwardedProto, r.Headers)
		}
	}
	return o, nil
}

// checkAnnotated sends every probe to every side and requires the same
// answers from all of them, and the expected ones from the generated
// config, so that (f) compares configs that behave alike. It returns the
// number of probes.
func checkAnnotated(ctx context.Context, kind string, sides []side, bs []*backend) (int, error) {
	want := map[string]bool{}
	for _, b := range bs {
		want[b.Addr] = true
	}
	for _, pr := range annotatedProbes {
		var ref observed
		for i, sd := range sides {
			client := httpClient(sd.httpAddr, false)
			o, err := probeOnce(ctx, client, sd.httpAddr, pr)
			client.CloseIdleConnections()
			if err != nil {
				return 0, fmt.Errorf("(f) %s: %s: %w", sd.name, pr.what, err)
			}
			if o.endpoint != "" && !want[o.endpoint] {
				return 0, fmt.Errorf("(f) %s: %s: answered by %q, not a benchmark backend", sd.name, pr.what, o.endpoint)
			}
			if i == 0 {
				ref = o
				if err := pr.verify(o, kind); err != nil {
					return 0, fmt.Errorf("(f) generated: %s: %w", pr.what, err)
				}
				continue
			}
			if o.key() != ref.key() {
				return 0, fmt.Errorf("(f) %s: %s: answered\n  %s\nbut generated answered\n  %s", sd.name, pr.what, o.key(), ref.key())
			}
		}
	}
	return len(annotatedProbes), nil
}

// verify checks the generated config's answer against the probe's wants.
func (pr annotatedProbe) verify(o observed, kind string) error {
	switch {
	case pr.wantStatus != 0 && o.status != pr.wantStatus:
		return fmt.Errorf("status %d, want %d (%s)", o.status, pr.wantStatus, o.key())
	case pr.wantURI != "" && o.uri != pr.wantURI:
		return fmt.Errorf("backend received %q, want %q", o.uri, pr.wantURI)
	case pr.wantACAO != "" && o.header("Access-Control-Allow-Origin") != pr.wantACAO:
		return fmt.Errorf("Access-Control-Allow-Origin %q, want %q", o.header("Access-Control-Allow-Origin"), pr.wantACAO)
	case pr.wantCustomHeadersExist && (o.header("X-Frame-Options") != "DENY" || o.header("X-Content-Type-Options") != "nosniff"):
		return fmt.Errorf("custom headers missing: %q", o.headers)
	case kind == goBackends && o.endpoint != "" && o.upstream == "":
		return fmt.Errorf("no echo reply from the Go backend")
	}
	return nil
}

// measureAnnotated runs the load against every side in alternating rounds
// and reports requests/s and requests per nginx CPU-second.
func measureAnnotated(ctx context.Context, c *config, kind string, pin pinning, sides []side, probes int, why string, rep *report) error {
	loader := c.resolvedLoader()
	fmt.Fprintf(os.Stderr, "(f) annotated location behind %s backends: %s, %d connections, %d rounds of %s per side ...\n", kind, loader, c.conns, c.rounds, c.tputDuration)
	load := closedLoop(ctx, c, pin, annotatedTarget, []string{"Origin: " + allowedOrigin})
	res, err := abRounds(ctx, c.rounds, sides, time.Second, c.tputDuration, load)
	if err != nil {
		return fmt.Errorf("(f) annotated location: %w", err)
	}
	const ref = 1
	t := &table{title: fmt.Sprintf("(f) Annotated location behind %s backends: generated vs hand-written config", kind), header: []string{"config"}}
	ratios, _ := compareTable(t, "req", sides, res, ref, func(int) []string { return nil })
	// Requests per nginx CPU-second, and its ratio to the reference in
	// the same round, inserted before the per-round column.
	// within is the median over rounds of side i's requests per CPU-second
	// over side j's in the same round.
	within := func(i, j int) float64 {
		var rs []float64
		for k, s := range res[i] {
			if r := perCPUSecond(s) / perCPUSecond(res[j][k]); finite(r) && r > 0 {
				rs = append(rs, r)
			}
		}
		return median(rs)
	}
	eff := make([]float64, len(sides))
	for i := range sides {
		var per []float64
		for _, s := range res[i] {
			per = append(per, perCPUSecond(s))
		}
		eff[i] = within(i, ref)
		row := t.rows[i]
		last := row[len(row)-1]
		t.rows[i] = append(row[:len(row)-1], num(median(per)), pct(eff[i]), last)
	}
	last := t.header[len(t.header)-1]
	t.header = append(t.header[:len(t.header)-1], "req per nginx CPU-s", "vs "+sides[ref].name, last)

	how := fmt.Sprintf("`wrk -t1 -c%d -d%s`", c.conns, wrkSeconds(c.tputDuration))
	if loader == "vegeta" {
		how = fmt.Sprintf("vegeta with %d workers and no rate limit (closed loop) for %s", c.conns, c.tputDuration)
	}
	t.note("Ingress: host `%s`, one path `/api(/|$)(.*)` (ImplementationSpecific), annotations %s; the custom-headers ConfigMap holds `X-Frame-Options: DENY` and `X-Content-Type-Options: nosniff`.", annotatedHost, annotationList())
	t.note("Load: %s, keep-alive on, `GET %s` with `Origin: %s` (allowed: the answer carries Access-Control-Allow-Origin and -Credentials and the two custom headers; the backend receives `/items?x=1`). Each round runs every config in turn, after a 1 s warm-up of each; \"vs\" columns are the median over rounds of the ratio within the same round.", how, annotatedTarget, allowedOrigin)
	backends := fmt.Sprintf("%d Go echo servers (the in-process `test/echo` handler)", c.tputBackends)
	if kind == nginxBackends {
		backends = fmt.Sprintf("%d `return 200` servers of one more nginx (one worker), which also send back the URI they received", c.tputBackends)
	}
	t.note("Backends: %s.", backends)
	if pin.on {
		t.note("CPUs: each nginx under test pinned to CPU %d, wrk and the backend nginx to CPU %d.", frontCPU, loadCPU)
	} else {
		t.note("CPUs: not pinned (%s).", pin.why)
	}
	t.note("Generated: ConfigMap `worker-processes: \"1\"`, `disable-access-log: \"true\"`, `global-allowed-response-headers: \"X-Frame-Options, X-Content-Type-Options\"` (custom-headers sets only allowed headers); the location as rendered (a case-insensitive regex location; CORS through a `map` of the allowed origins, a `set` and two `if` blocks on the result; the rewrite; the proxy settings; the custom headers as `add_header ... always`) and the Lua balancer; metrics on (a line per request to the metrics log). \"generated, metrics off\" is another controller with `--enable-metrics=false`: the hand-written config counts nothing, so this is the like-for-like row, and the target's. Hand-written: one nginx, one worker, the same http-level settings and forwarding headers, a plain `upstream` with `keepalive 320`; the location `~* \"^/api(/|$)(.*)\"` with `rewrite \"(?i)^/api(/|$)(.*)\" /$2 break`, CORS from `map $http_origin` (an allowed origin echoed, otherwise empty, and `add_header` of an empty value sends nothing) plus one `if` answering the preflight, the same timeouts, buffering, body size and `add_header` lines.")
	rows := "\"generated on a plain upstream\" is the generated configuration in an nginx of its own: the controller's http block (maps, proxy settings, headers, the Lua set-up) and modules, and the host's server file with `proxy_pass` to a plain upstream (keepalive 320) instead of the Lua balancer: generated minus it is the Lua balancer's cost, it minus hand-written the cost of how the annotations are rendered. "
	if why != "" {
		rows = fmt.Sprintf("The generated configuration could not be adapted to a plain upstream (%s), so that row is missing. ", why)
	}
	t.note("%s\"hand-written + minimal Lua balancer\" is the hand-written location with (d)'s floor balancer instead of the plain upstream.", rows)
	t.note("Before timing, %d probe requests (allowed, wildcard and other origins, no origin, a path outside the location, preflights, a 2 MiB body under proxy-body-size and a 9 MiB one over it) got the same status, CORS and custom headers and the same URI at the backend%s from every config.", probes,
		map[bool]string{true: " (and the same Host and forwarding headers)", false: ""}[kind == goBackends])
	t.note("nginx CPU/req is the worker's user+system CPU per request (from /proc/PID/stat, 10 ms ticks); req per nginx CPU-s is its inverse per round. wrk, the backends and nginx share the machine's %d CPUs: when \"nginx worker busy\" is well below 100%%, req/s understates nginx's own difference and the CPU columns are the ones to read.", runtime.NumCPU())
	t.note("%s", failureNote(res))
	rep.addTable(t)

	idx := func(name string) int {
		return slices.IndexFunc(sides, func(s side) bool { return s.name == name })
	}
	if o := idx(annotatedMetricsOff); o >= 0 {
		rep.target(fmt.Sprintf("(f) annotated location, requests per nginx CPU-second, generated (metrics off, as by hand) / hand-written, %s backends", kind), "≥ 95%", pct(eff[o]), pass(eff[o] >= 0.95))
		rep.target(fmt.Sprintf("(f) annotated location, req/s, generated (metrics off) / hand-written, %s backends", kind), "informational", pct(ratios[o]), nil)
	}
	rep.target(fmt.Sprintf("(f) annotated location, requests per nginx CPU-second, generated with metrics / hand-written, %s backends", kind), "informational", pct(eff[0]), nil)
	rep.target(fmt.Sprintf("(f) annotated location, req/s, generated with metrics / hand-written, %s backends", kind), "informational", pct(ratios[0]), nil)
	if p := idx("generated on a plain upstream"); p >= 0 {
		rep.target(fmt.Sprintf("(f) of which the Lua balancer: requests per CPU-s, generated / generated on a plain upstream, %s backends", kind), "informational", pct(within(0, p)), nil)
		rep.target(fmt.Sprintf("(f) of which the rendering: requests per CPU-s, generated on a plain upstream / hand-written, %s backends", kind), "informational", pct(eff[p]), nil)
	}
	if f := idx("hand-written + minimal Lua balancer"); f >= 0 {
		rep.target(fmt.Sprintf("(f) requests per CPU-s, generated / hand-written + minimal Lua balancer, %s backends", kind), "informational", pct(within(0, f)), nil)
	}
	return nil
}

// perCPUSecond is requests served per second of nginx worker CPU.
func perCPUSecond(s sample) float64 {
	if s.cpu <= 0 {
		return 0
	}
	return float64(s.count) / s.cpu.Seconds()
}
