package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Backend kinds for (d). The Go echo servers are what the other sections
// use; nginx answering `return 200` costs a fraction of a Go HTTP server's
// CPU per request, so behind it the front nginx, the thing compared, is
// the bottleneck.
const (
	goBackends    = "go"
	nginxBackends = "nginx"
)

// backendNginxConf is one nginx worker serving every backend address with a
// fixed answer shaped like the echo server's: the X-Echo-Endpoint header
// names the address, which is all checkSide and poll read.
const backendNginxConf = `# Benchmark backends: one server per "pod" address, answering at once.
daemon off;
master_process on;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log notice;

events {
    worker_connections 16384;
}

http {
    access_log off;
    keepalive_timeout 75s;
    # nginx closes an upstream keep-alive connection after this many
    # requests by default (1000); the Go backends have no such limit.
    keepalive_requests 1000000;
    client_body_temp_path %[1]s/tmp/client-body;
    proxy_temp_path %[1]s/tmp/proxy;
    fastcgi_temp_path %[1]s/tmp/fastcgi;
    uwsgi_temp_path %[1]s/tmp/uwsgi;
    scgi_temp_path %[1]s/tmp/scgi;
%[2]s}
`

// backendNginxServer is one backend address. %[3]s holds extra
// directives, such as add_header lines for (f)'s checks.
const backendNginxServer = `
    server {
        listen %[1]s;
        location / {
            default_type application/json;
            add_header X-Echo-Endpoint %[1]s;
%[3]s            return 200 '{"service":"%[2]s","endpoint":"%[1]s"}\n';
        }
    }
`

// echoURIHeader makes a backend nginx report the request target it
// received, so that (f) can check the rewrite behind nginx backends too,
// and accept any request body, so that only the nginx under test limits
// its size.
const echoURIHeader = "            add_header X-Echo-URI $request_uri;\n            client_max_body_size 0;\n"

// startNginxBackends runs n backends in one nginx on fresh addresses
// sharing the pool's port, and returns them and the nginx master's pid.
// extra is added to every backend's location (see backendNginxServer).
// They live until the environment closes.
func (p *pool) startNginxBackends(ctx context.Context, n int, extra string) ([]*backend, int, error) {
	// One directory per pool: (d) and (f) each start their own.
	dir := filepath.Join(p.e.dir, fmt.Sprintf("backend-nginx-%d", p.port))
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		return nil, 0, fmt.Errorf("backend nginx directory: %w", err)
	}
	var bs []*backend
	var servers strings.Builder
	for range n {
		ip := p.e.nextIP(backendNet)
		b := &backend{IP: ip, Addr: net.JoinHostPort(ip, strconv.Itoa(p.port))}
		bs = append(bs, b)
		fmt.Fprintf(&servers, backendNginxServer, b.Addr, service, extra)
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(backendNginxConf, dir, servers.String())), 0o644); err != nil {
		return nil, 0, fmt.Errorf("write backend nginx config: %w", err)
	}
	addrs := make([]string, len(bs))
	for i, b := range bs {
		addrs[i] = b.Addr
	}
	proc, err := p.e.runBinary(ctx, "nginx", "backend", dir, conf, addrs...)
	if err != nil {
		return nil, 0, err
	}
	return bs, proc.cmd.Process.Pid, nil
}

// newKindPool reserves a port and runs n backends of kind on it: Go echo
// servers, or nginx backends with extra in every location (see
// startNginxBackends). The pid is the backend nginx's master, 0 for Go
// backends. The caller closes the pool.
func newKindPool(ctx context.Context, e *env, kind string, n int, extra string) (*pool, []*backend, int, error) {
	p, err := newPool(e)
	if err != nil {
		return nil, nil, 0, err
	}
	var bs []*backend
	master := 0
	if kind == nginxBackends {
		bs, master, err = p.startNginxBackends(ctx, n, extra)
	} else {
		bs, err = p.startN(n)
	}
	if err != nil {
		p.close()
		return nil, nil, 0, err
	}
	return p, bs, master, nil
}
