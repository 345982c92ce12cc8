package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"text/template"
	"time"
)

// Section (j): external authentication with a cached answer
// (auth-url, auth-cache-key, auth-cache-duration) through the generated
// config vs nginx's auth_request with proxy_cache written by hand, by
// nginx CPU per request. Each nginx also serves a host without
// authentication, so the table shows what the check itself costs on
// each side.
const (
	authHost  = "auth.bench.test"
	plainHost = "plain.bench.test"
	// authToken is what the load sends; the service lets it in without
	// a cookie, so the answer is cached.
	authToken = "Bearer bench"
)

// authBenchService is the authentication service: 200 for authToken,
// 401 otherwise, counting its requests.
type authBenchService struct {
	addr  string
	calls atomic.Int64
}

func startAuthBenchService(e *env) (*authBenchService, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(e.nextIP(backendNet), "0"))
	if err != nil {
		return nil, err
	}
	a := &authBenchService{addr: l.Addr().String()}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.calls.Add(1)
		if r.Header.Get("Authorization") == authToken {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
	})}
	go srv.Serve(l)
	e.onClose(func() { srv.Close() })
	return a, nil
}

// extAuthYAML is the two Ingresses: authHost asks the service and caches
// its answers per Authorization header for 5 minutes; plainHost does not
// ask.
func extAuthYAML(auth string) string {
	return serviceYAML() + ingressYAML("plain", plainHost) + annotatedIngressYAML("auth", authHost, service,
		[2]string{"auth-url", "http://" + auth + "/check"}, [2]string{"auth-cache-key", "$http_authorization"},
		[2]string{"auth-cache-duration", "200 401 5m"})
}

// handExtAuthConf is the same written by hand: (f)'s http settings and
// forwarding headers, a plain upstream with keepalive, and auth_request
// to an internal location that proxies to the service through
// proxy_cache, keyed by the Authorization header.
var handExtAuthConf = template.Must(template.New("extauth").Parse(`# Hand-written nginx for (j): external authentication with a cached
# answer (bench/dynamic/extauth.go).
daemon off;
master_process on;
worker_processes 1;
{{.User}}
pid {{.Dir}}/nginx.pid;
error_log {{.Dir}}/error.log notice;

events {
    worker_connections 16384;
}

http {
    access_log off;
    server_tokens off;
    sendfile on;
    tcp_nodelay on;
    keepalive_timeout 75s;
    client_body_temp_path {{.Dir}}/tmp/client-body;
    proxy_temp_path {{.Dir}}/tmp/proxy;
    fastcgi_temp_path {{.Dir}}/tmp/fastcgi;
    uwsgi_temp_path {{.Dir}}/tmp/uwsgi;
    scgi_temp_path {{.Dir}}/tmp/scgi;
    proxy_cache_path {{.Dir}}/tmp/auth-cache levels=1:2 keys_zone=auth:10m max_size=128m inactive=30m use_temp_path=off;

    upstream backends {
{{range .Peers}}        server {{.}};
{{end}}        keepalive 320;
    }
` + handForwarding + `
    server {
        listen {{.Listen}} default_server;
        server_name _;
        location / {
            return 404;
        }
    }

    server {
        listen {{.Listen}};
        server_name {{.PlainHost}};
        location / {
            proxy_pass http://backends;
        }
    }

    server {
        listen {{.Listen}};
        server_name {{.AuthHost}};
        location / {
            auth_request /_auth;
            proxy_pass http://backends;
        }
        location = /_auth {
            internal;
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
            proxy_set_header X-Original-URL $scheme://$http_host$request_uri;
            proxy_cache auth;
            proxy_cache_key $http_authorization;
            proxy_cache_valid 200 401 5m;
            proxy_pass http://{{.Auth}}/check;
        }
    }
}
`))

// startHandExtAuth runs the hand-written nginx and returns its address.
func (e *env) startHandExtAuth(ctx context.Context, name, auth string, backends []*backend) (string, *process, error) {
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
	var conf strings.Builder
	if err := handExtAuthConf.Execute(&conf, map[string]any{"User": workerUser(), "Dir": dir, "Peers": addrs(backends),
		"Listen": addr, "PlainHost": plainHost, "AuthHost": authHost, "Auth": auth}); err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf.String()), 0o644); err != nil {
		return "", nil, err
	}
	proc, err := e.runNginx(ctx, "hand-written (j)", dir, path, addr)
	if err != nil {
		return "", nil, err
	}
	return addr, proc, nil
}

func addrs(bs []*backend) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Addr
	}
	return out
}

// runExtAuth starts backends of one kind, the service, a controller with
// the two Ingresses and the hand-written nginx, checks that both answer
// alike (200 with the token from the cache, 401 without), and measures.
func runExtAuth(ctx context.Context, e *env, c *config, rep *report, kind string) error {
	p, bs, backendMaster, err := newKindPool(ctx, e, kind, c.tputBackends, "")
	if err != nil {
		return err
	}
	defer p.close()
	auth, err := startAuthBenchService(e)
	if err != nil {
		return err
	}
	app := ingressClassYAML + configMapYAML(map[string]string{"worker-processes": "1", "disable-access-log": "true"}) + extAuthYAML(auth.addr)
	gen, err := e.startController(ctx, "extauth-generated-"+kind, map[string]string{"app.yaml": app, "slice.yaml": sliceYAML(p.port, ips(bs)...)}, c)
	if err != nil {
		return err
	}
	defer gen.stop()
	handAddr, hand, err := e.startHandExtAuth(ctx, "extauth-handwritten-"+kind, auth.addr, bs)
	if err != nil {
		return err
	}
	handMaster := hand.cmd.Process.Pid
	sides := []side{
		{name: "generated, external auth", httpAddr: gen.HTTPAddr(), host: authHost, master: gen.nginxPID},
		{name: "hand-written, auth_request + proxy_cache", httpAddr: handAddr, host: authHost, master: func() int { return handMaster }},
		{name: "generated, no auth", httpAddr: gen.HTTPAddr(), host: plainHost, master: gen.nginxPID},
		{name: "hand-written, no auth", httpAddr: handAddr, host: plainHost, master: func() int { return handMaster }},
	}
	// One worker each, beside the cache manager and loader that
	// proxy_cache_path starts on both sides (their CPU is counted too).
	for _, sd := range sides {
		if n, _, err := nginxWorkers(sd.master()); err != nil || n < 1 || n > 3 {
			return fmt.Errorf("%s nginx: want 1 worker and the cache processes, have %d processes (%v)", sd.name, n, err)
		}
	}
	if err := checkExtAuth(ctx, sides, auth); err != nil {
		return err
	}
	pin := planPinning(c, kind, c.resolvedLoader())
	if err := pin.apply([]int{gen.nginxPID(), handMaster}, backendMaster); err != nil {
		return err
	}
	before := auth.calls.Load()
	loader := c.resolvedLoader()
	fmt.Fprintf(os.Stderr, "(j) external auth behind %s backends: %s, %d connections, %d rounds of %s per side ...\n", kind, loader, c.conns, c.rounds, c.tputDuration)
	cpu := -1
	if pin.on {
		cpu = loadCPU
	}
	headers := []string{"Authorization: " + authToken}
	load := func(sd side, d time.Duration) (sample, error) {
		url := "http://" + sd.httpAddr + "/"
		if loader == "wrk" {
			return wrkLoad(ctx, url, sd.host, headers, c.conns, d, cpu)
		}
		return vegetaLoad(ctx, url, sd.host, headers, c.conns, d)
	}
	res, err := abRounds(ctx, c.rounds, sides, time.Second, c.tputDuration, load)
	if err != nil {
		return fmt.Errorf("(j) external auth: %w", err)
	}
	calls := auth.calls.Load() - before
	const ref = 1
	t := &table{title: fmt.Sprintf("(j) External auth with a cached answer behind %s backends: generated vs hand-written", kind), header: []string{"config"}}
	_, cpuRatios := compareTable(t, "req", sides, res, ref, func(int) []string { return nil })
	// The check's own cost on each side: CPU per request with auth
	// minus without, median over rounds.
	extra := func(with, without int) float64 {
		var ds []float64
		for k := range res[with] {
			if a, b := res[with][k], res[without][k]; a.count > 0 && b.count > 0 {
				ds = append(ds, a.cpuPerValue()-b.cpuPerValue())
			}
		}
		return median(ds)
	}
	genExtra, handExtra := extra(0, 2), extra(1, 3)
	t.note("Generated: an Ingress on `%s` with `auth-url: http://<service>/check`, `auth-cache-key: $http_authorization`, `auth-cache-duration: 200 401 5m`, and one on `%s` without annotations; ConfigMap `worker-processes: \"1\"`, `disable-access-log: \"true\"`. Hand-written: one nginx, one worker, the forwarding headers of (f), a plain `upstream` with `keepalive 320`; `%s` has `auth_request /_auth` and `location = /_auth` with `proxy_pass_request_body off`, `proxy_cache` keyed by `$http_authorization`, `proxy_cache_valid 200 401 5m`; `%s` proxies alone.", authHost, plainHost, authHost, plainHost)
	t.note("Load: `wrk -t1 -c%d` (or vegeta), keep-alive on, `GET /` with `Authorization: %s`; the service (a Go server in the benchmark) answers 200 without a cookie, so after the first request both sides answer from the cache: it was asked %d times during the timed runs.", c.conns, authToken, calls)
	t.note("The check's own cost, nginx CPU per request with auth minus without (median over rounds): generated %s, hand-written %s.", us(time.Duration(genExtra)), us(time.Duration(handExtra)))
	if pin.on {
		t.note("CPUs: each nginx under test pinned to CPU %d, wrk and the backends to CPU %d.", frontCPU, loadCPU)
	} else {
		t.note("CPUs: not pinned (%s).", pin.why)
	}
	t.note("nginx CPU/req is the user+system CPU of the master's children per request: the worker, and on both sides the cache manager and loader (from /proc/PID/stat, 10 ms ticks), on a machine of %d CPUs shared with wrk and the backends.", runtime.NumCPU())
	t.note("%s", failureNote(res))
	rep.addTable(t)
	ratio := 1 / cpuRatios[0] // requests per CPU: generated / hand-written
	rep.target(fmt.Sprintf("(j) external auth with auth-cache-duration, nginx CPU per request, generated / hand-written auth_request + proxy_cache, %s backends", kind),
		"≤ 110%", pct(cpuRatios[0]), pass(cpuRatios[0] <= 1.10))
	rep.target(fmt.Sprintf("(j) the same, requests per nginx CPU-second, generated / hand-written, %s backends", kind), "informational", pct(ratio), nil)
	rep.target(fmt.Sprintf("(j) nginx CPU per request, generated / hand-written, both without auth, %s backends", kind), "informational", pct(roundRatio(res[2], res[3], sample.cpuPerValue)), nil)
	return nil
}

// checkExtAuth requires both sides to answer 200 with the token and 401
// without it, on the protected host, and the cache to answer a repeated
// request without the service.
func checkExtAuth(ctx context.Context, sides []side, auth *authBenchService) error {
	for _, sd := range sides[:2] {
		client := httpClient(sd.httpAddr, false)
		get := func(authz string) (int, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+sd.host+"/", nil)
			if err != nil {
				return 0, err
			}
			if authz != "" {
				req.Header.Set("Authorization", authz)
			}
			resp, err := client.Do(req)
			if err != nil {
				return 0, err
			}
			resp.Body.Close()
			return resp.StatusCode, nil
		}
		for _, pr := range []struct {
			authz string
			want  int
		}{{authToken, 200}, {"", 401}, {authToken, 200}} {
			st, err := get(pr.authz)
			if err != nil || st != pr.want {
				return fmt.Errorf("(j) %s: Authorization %q: status %d (%v), want %d", sd.name, pr.authz, st, err, pr.want)
			}
		}
		n := auth.calls.Load()
		if st, err := get(authToken); err != nil || st != 200 || auth.calls.Load() != n {
			return fmt.Errorf("(j) %s: a repeated request: status %d (%v), service asked %d more times; want 200 from the cache", sd.name, st, err, auth.calls.Load()-n)
		}
		client.CloseIdleConnections()
	}
	return nil
}
