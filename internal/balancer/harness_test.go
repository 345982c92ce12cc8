package balancer_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/render"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The integration tests run a real nginx with the Lua module (Debian:
// nginx, libnginx-mod-http-lua, lua-resty-core). Without it they skip,
// unless CAUSEWAY_REQUIRE_NGINX=1, where they fail. CAUSEWAY_NGINX and
// CAUSEWAY_NGINX_MODULES override the binary and the module directory.

type nginxSetup struct {
	bin        string
	loadModule string // load_module lines, or "" when Lua is built in
	err        error
}

var (
	setupOnce sync.Once
	setup     nginxSetup
)

func findNginx() nginxSetup {
	bin := os.Getenv("CAUSEWAY_NGINX")
	if bin == "" {
		if p, err := exec.LookPath("nginx"); err == nil {
			bin = p
		} else {
			bin = "/usr/sbin/nginx"
		}
	}
	if _, err := os.Stat(bin); err != nil {
		return nginxSetup{err: fmt.Errorf("nginx binary: %w", err)}
	}
	mods := os.Getenv("CAUSEWAY_NGINX_MODULES")
	if mods == "" {
		mods = "/usr/lib/nginx/modules"
	}
	var load string
	lua := filepath.Join(mods, "ngx_http_lua_module.so")
	if _, err := os.Stat(lua); err == nil {
		ndk := filepath.Join(mods, "ndk_http_module.so")
		if _, err := os.Stat(ndk); err == nil {
			load = "load_module " + ndk + ";\n"
		}
		load += "load_module " + lua + ";\n"
	}
	// Prove the Lua module and lua-resty-core actually load.
	dir, err := os.MkdirTemp("", "cwprobe")
	if err != nil {
		return nginxSetup{err: err}
	}
	defer os.RemoveAll(dir)
	conf := load + "pid " + dir + "/nginx.pid;\nerror_log " + dir + "/error.log;\nevents {}\nhttp {\n" +
		"    init_by_lua_block { require(\"resty.core\"); require(\"ngx.balancer\") }\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644); err != nil {
		return nginxSetup{err: err}
	}
	out, err := exec.Command(bin, "-t", "-p", dir, "-c", filepath.Join(dir, "nginx.conf")).CombinedOutput()
	if err != nil {
		return nginxSetup{err: fmt.Errorf("nginx with the Lua module is not usable: %v: %s", err, out)}
	}
	return nginxSetup{bin: bin, loadModule: load}
}

// requireNginx skips (or, with CAUSEWAY_REQUIRE_NGINX=1, fails) the test
// when nginx with the Lua module is unavailable.
func requireNginx(t testing.TB) nginxSetup {
	t.Helper()
	setupOnce.Do(func() { setup = findNginx() })
	if setup.err != nil {
		if os.Getenv("CAUSEWAY_REQUIRE_NGINX") == "1" {
			t.Fatalf("CAUSEWAY_REQUIRE_NGINX=1 but %v", setup.err)
		}
		t.Skipf("skipping: %v (set CAUSEWAY_REQUIRE_NGINX=1 to fail instead)", setup.err)
	}
	return setup
}

// testNginx is one nginx master with its workers, configured from our
// snippets. Location i ("/<i>/") proxies to backend key keys[i].
type testNginx struct {
	t      testing.TB
	dir    string
	port   int
	keys   []string
	conf   string
	cmd    *exec.Cmd
	done   chan struct{}
	stderr *syncBuffer
	client *balancer.Client
	http   *http.Client // keep-alive client for traffic
}

type nginxOptions struct {
	workers  int      // default 2
	keys     []string // backend keys, one location each
	dictSize string   // lua_shared_dict size, default 8m
	// stateFile, if set, is loaded at every (re)start (SnippetOptions.StateFile).
	stateFile string
	// editConf, if set, rewrites the generated nginx.conf.
	editConf func(string) string
	// fallbacks maps a key's location to the fallback backend it names
	// ($causeway_fallback).
	fallbacks map[string]string
	// locationConf maps a key's location to more of its directives;
	// httpConf is more of the http block's.
	locationConf map[string]string
	httpConf     string
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func startNginx(t testing.TB, o nginxOptions) *testNginx {
	t.Helper()
	ng := requireNginx(t)
	if o.workers == 0 {
		o.workers = 2
	}
	// A short directory: unix socket paths are limited to 107 bytes.
	dir, err := os.MkdirTemp("", "cwlb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// Workers may run as an unprivileged user (nginx started as root).
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	luaDir := filepath.Join(dir, "lua")
	if err := balancer.WriteLua(luaDir); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "dynamic.sock")
	if o.dictSize == "" {
		o.dictSize = "8m"
	}
	// CAUSEWAY_LUA_PACKAGE_PATH: where lua-resty-core is for another
	// binary (Angie built by make angie), as in the integration tier.
	pkgPath, err := render.ParseLuaPackagePath(os.Getenv("CAUSEWAY_LUA_PACKAGE_PATH"))
	if err != nil {
		t.Fatal(err)
	}
	sn, err := render.NginxSnippets(render.SnippetOptions{LuaDir: luaDir, PackagePath: pkgPath, SocketPath: sock, UnavailableSocket: filepath.Join(dir, "unavailable.sock"),
		NoLiveSocket: filepath.Join(dir, "nolive.sock"),
		Keepalive:    16, StateDictSize: o.dictSize, StateFile: o.stateFile})
	if err != nil {
		t.Fatal(err)
	}

	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		n := &testNginx{t: t, dir: dir, port: freePort(t), keys: o.keys, stderr: &syncBuffer{}, done: make(chan struct{})}
		var locs strings.Builder
		for i, k := range o.keys {
			set, err := render.BackendDirective(k)
			if err != nil {
				t.Fatal(err)
			}
			if fb := o.fallbacks[k]; fb != "" {
				set += fmt.Sprintf("set $causeway_fallback %q;\n", fb)
			}
			set += o.locationConf[k]
			fmt.Fprintf(&locs, "        location /%d/ {\n%s%s        }\n", i, indent(set, 12), indent(sn.Location, 12))
		}
		n.conf = fmt.Sprintf(`%sworker_processes %d;
pid %s/nginx.pid;
error_log %s/error.log info;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path %s/tmp/client;
    proxy_temp_path %s/tmp/proxy;
    fastcgi_temp_path %s/tmp/fastcgi;
    uwsgi_temp_path %s/tmp/uwsgi;
    scgi_temp_path %s/tmp/scgi;
%s%s%s%s
    server {
        # reuseport gives each worker its own socket, so that new
        # connections spread over all workers.
        listen 127.0.0.1:%d reuseport;
        add_header X-Worker $pid always;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_connect_timeout 2s;
        proxy_read_timeout 10s;
%s    }
}
`, ng.loadModule, o.workers, dir, dir, dir, dir, dir, dir, dir,
			indent(sn.HTTP, 4), indent(o.httpConf, 4), indent(sn.Upstream, 4), indent(sn.DynamicServer+sn.UnavailableServer, 4), n.port, locs.String())
		if o.editConf != nil {
			n.conf = o.editConf(n.conf)
		}
		if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
			t.Fatal(err)
		}
		confPath := filepath.Join(dir, "nginx.conf")
		if err := os.WriteFile(confPath, []byte(n.conf), 0o644); err != nil {
			t.Fatal(err)
		}
		n.cmd = exec.Command(ng.bin, "-p", dir, "-c", confPath, "-g", "daemon off;")
		n.cmd.Stdout = n.stderr
		n.cmd.Stderr = n.stderr
		if err := n.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { n.cmd.Wait(); close(n.done) }()
		n.client = balancer.NewClient(sock)
		if lastErr = n.waitReady(); lastErr == nil {
			n.http = &http.Client{
				Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true},
				Timeout:   15 * time.Second,
			}
			t.Cleanup(n.stop)
			return n
		}
		n.stop()
		if !strings.Contains(n.logs(), "Address already in use") {
			break // not a port race: do not retry
		}
	}
	t.Fatalf("nginx did not start: %v", lastErr)
	return nil
}

func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" && l != "\n" {
			b.WriteString(pad)
		}
		b.WriteString(l)
	}
	return b.String()
}

// waitReady polls the dynamic socket until nginx answers, at most 10 s.
func (n *testNginx) waitReady() error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-n.done:
			return fmt.Errorf("nginx exited: %s", n.logs())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		_, err := n.client.Generation(ctx)
		cancel()
		if err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("no answer on the dynamic socket within 10s: %s", n.logs())
}

// reload sends SIGHUP and waits until none of the old workers is left
// among the master's children.
func (n *testNginx) reload(t *testing.T) {
	t.Helper()
	old := n.workerPIDs()
	if err := n.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		cur := n.workerPIDs()
		if len(cur) > 0 && !slices.ContainsFunc(cur, func(p int) bool { return slices.Contains(old, p) }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("workers %v not replaced after reload:\n%s", old, n.logs())
		}
		// Old workers exit once their idle keepalive connections are
		// gone; close ours so a slow machine does not keep them.
		n.http.CloseIdleConnections()
		n.client.Close()
		time.Sleep(20 * time.Millisecond)
	}
	n.http.CloseIdleConnections() // old connections belong to old workers
	n.client.Close()
}

// workerPIDs returns the pids of the master's current children.
func (n *testNginx) workerPIDs() []int {
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// "pid (comm) state ppid ..."; comm may contain spaces.
		s := string(data)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(n.cmd.Process.Pid) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			pids = append(pids, pid)
		}
	}
	return pids
}

func (n *testNginx) logs() string {
	data, _ := os.ReadFile(filepath.Join(n.dir, "error.log"))
	return n.stderr.String() + string(data)
}

func (n *testNginx) stop() {
	if n.http != nil {
		n.http.CloseIdleConnections()
	}
	n.client.Close()
	if n.cmd.Process != nil {
		n.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-n.done:
		case <-time.After(5 * time.Second):
			n.cmd.Process.Kill()
			<-n.done
		}
	}
	if n.t.Failed() {
		logs := n.logs()
		if len(logs) > 8000 {
			logs = "..." + logs[len(logs)-8000:]
		}
		n.t.Logf("nginx logs:\n%s", logs)
	}
}

// url returns the URL of location i (backend key keys[i]).
func (n *testNginx) url(i int, path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d/%d/%s", n.port, i, strings.TrimPrefix(path, "/"))
}

// reply is what the tests look at in a response.
type reply struct {
	status  int
	backend string // X-balancer.Backend, "" if no backend answered
	worker  string // X-Worker: the nginx worker's pid
	header  http.Header
}

func (n *testNginx) get(t testing.TB, c *http.Client, url string, hdr map[string]string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return reply{status: resp.StatusCode, backend: resp.Header.Get("X-Backend"), worker: resp.Header.Get("X-Worker"), header: resp.Header}
}

func (n *testNginx) replace(t *testing.T, st balancer.State) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.client.Replace(ctx, st); err != nil {
		t.Fatal(err)
	}
}

// testBackend is a Go HTTP server on 127.0.0.x that names itself in
// X-Backend and can be slowed down.
type testBackend struct {
	name  string
	ip    string
	port  int
	delay atomic.Int64 // nanoseconds
	hits  atomic.Int64
	conns atomic.Int64 // TCP connections accepted
	srv   *http.Server
}

func startBackend(t testing.TB, ip, name string) *testBackend {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatalf("listen on %s: %v", ip, err)
	}
	b := &testBackend{name: name, ip: ip, port: ln.Addr().(*net.TCPAddr).Port}
	b.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b.hits.Add(1)
			if d := time.Duration(b.delay.Load()); d > 0 {
				time.Sleep(d)
			}
			w.Header().Set("X-Backend", b.name)
			io.WriteString(w, b.name)
		}),
		ReadHeaderTimeout: 5 * time.Second,
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				b.conns.Add(1)
			}
		},
	}
	go b.srv.Serve(ln)
	t.Cleanup(func() { b.srv.Close() })
	return b
}

func (b *testBackend) endpoint() balancer.Endpoint {
	return balancer.Endpoint{Address: b.ip, Port: b.port, Ready: true}
}

// deadEndpoint returns an endpoint on which nothing listens, so
// connecting is refused at once.
func deadEndpoint(t *testing.T, ip string) balancer.Endpoint {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return balancer.Endpoint{Address: ip, Port: port, Ready: true}
}

// counts sends n requests to url with the given concurrency and tallies
// them by X-Backend (status other than 200 counts as "status <code>").
func (n *testNginx) counts(t *testing.T, url string, total, concurrency int, hdr func(i int) map[string]string) map[string]int {
	t.Helper()
	var (
		mu   sync.Mutex
		out  = map[string]int{}
		next atomic.Int64
		wg   sync.WaitGroup
		errs = make(chan error, concurrency)
	)
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= total {
					return
				}
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				if hdr != nil {
					for k, v := range hdr(i) {
						req.Header.Set(k, v)
					}
				}
				resp, err := n.http.Do(req)
				if err != nil {
					errs <- err
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				key := resp.Header.Get("X-Backend")
				if resp.StatusCode != http.StatusOK {
					key = "status " + strconv.Itoa(resp.StatusCode)
				}
				mu.Lock()
				out[key]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return out
}

func isAPIError(err error, status int) bool {
	var ae *balancer.APIError
	return errors.As(err, &ae) && ae.StatusCode == status
}
