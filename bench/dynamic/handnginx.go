package main

import (
	"context"
	"fmt"
	"net"
	"os"
	osuser "os/user"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
)

// handNginx is nginx running the hand-written minimal proxy configuration
// that the generated one is compared with.
type handNginx struct {
	IP                  string
	HTTPPort, HTTPSPort int
	// HeadersPort serves the same proxy with the generated config's
	// forwarding headers added, to tell their cost from the Lua balancer's.
	HeadersPort int
	// UnbufferedPort adds proxy_buffering off (ingress-nginx's default,
	// at http level in the generated config) to HeadersPort's proxy.
	UnbufferedPort int
	// FloorPort adds a minimal Lua balancer to UnbufferedPort's proxy.
	FloorPort int
	// HTTPSUnbufferedPort and HTTPSFloorPort serve the first certificate's
	// host over TLS (with HTTP/2 when asked) as UnbufferedPort and
	// FloorPort do over plain HTTP; zero unless handOptions.tlsSteps.
	HTTPSUnbufferedPort, HTTPSFloorPort int
	dir                                 string
	proc                                *process
}

// handConf is the baseline: one worker, a plain upstream with keepalive,
// and a server per TLS host with a static certificate. Its http-level
// settings match the generated config's where they affect speed (sendfile,
// tcp_nodelay, keepalive, ssl_protocols, session cache); access logs are
// off in both.
const handConf = `# Hand-written minimal nginx proxy: the baseline for Causeway's
# generated configuration. The Lua module serves only the (e) host that
# loads its certificate with ssl_certificate_by_lua and the (d) floor.
load_module /usr/lib/nginx/modules/ndk_http_module.so;
load_module /usr/lib/nginx/modules/ngx_http_lua_module.so;
daemon off;
master_process on;
worker_processes 1;
%[1]s
pid %[2]s/nginx.pid;
error_log %[2]s/error.log notice;

events {
    worker_connections 16384;
}

http {
    access_log off;
    sendfile on;
    tcp_nodelay on;
    keepalive_timeout 75s;
%[10]s    client_body_temp_path %[2]s/tmp/client-body;
    proxy_temp_path %[2]s/tmp/proxy;
    fastcgi_temp_path %[2]s/tmp/fastcgi;
    uwsgi_temp_path %[2]s/tmp/uwsgi;
    scgi_temp_path %[2]s/tmp/scgi;

    upstream backends {
%[3]s        keepalive 320;
    }

    proxy_http_version 1.1;
    proxy_set_header Connection "";

    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:baseline_ssl:10m;
    ssl_session_timeout 10m;
    # Always empty: appended to a certificate path it makes nginx load the
    # certificate at each handshake, as the generated config does.
    map $ssl_server_name $baseline_cert_reload {
        default "";
    }

    server {
        listen %[4]s default_server;
        location / {
            proxy_pass http://backends;
        }
    }

    # The generated config's proxy settings, without its Lua balancer:
    # the same maps behind the same headers.
    map $http_upgrade $baseline_connection {
        default upgrade;
        ''      '';
    }
    map $http_x_request_id $baseline_request_id {
        default $http_x_request_id;
        ""      $request_id;
    }
    map $scheme $baseline_forwarded_proto {
        default $scheme;
    }
    map $host $baseline_forwarded_host {
        default $host;
    }
    map $server_port $baseline_forwarded_port {
        default $server_port;
    }
    map $remote_addr $baseline_forwarded_for {
        default $remote_addr;
    }
    map $https $baseline_hsts {
        default "";
        on "max-age=31536000; includeSubDomains";
    }
    server {
        listen %[6]s default_server;
%[9]s        location / {
            proxy_pass http://backends;
        }
    }
    # The same with ingress-nginx's default of unbuffered responses, which
    # the generated config sets at http level.
    server {
        listen %[11]s default_server;
%[9]s        proxy_buffering off;
        location / {
            proxy_pass http://backends;
        }
    }

    # The floor of a Lua-balanced config: the same headers and unbuffered
    # responses, a key set per location and read by a balancer that does
    # the least any such balancer does (read the key, rotate over fixed
    # peers, grant a retry). Generated minus this is what Causeway's own
    # Lua costs.
    upstream lua_floor {
        server 0.0.0.1:1;
        balancer_by_lua_block {
            local st = package.loaded.bench_floor
            if not st then
                st = { i = 0, peers = { %[8]s } }
                package.loaded.bench_floor = st
            end
            local key = ngx.var.bench_backend
            local b = require("ngx.balancer")
            local n = #st.peers
            st.i = st.i %% n + 1
            local p = st.peers[st.i]
            assert(b.set_current_peer(p[1], p[2]))
            if n > 1 then
                b.set_more_tries(1)
            end
        }
        keepalive 320;
    }
    server {
        listen %[7]s default_server;
%[9]s        proxy_buffering off;
        location / {
            set $bench_backend "bench/web/80";
            proxy_pass http://lua_floor;
        }
    }
%[5]s}
`

// generatedHeaders are the generated config's forwarding headers (with
// X-Forwarded-Port, X-Request-ID and the HTTPS-only Strict-Transport-
// Security since 2026-11-23) and retry settings, for the baseline servers
// that add them.
const generatedHeaders = `        proxy_set_header Host $host;
        proxy_set_header Connection $baseline_connection;
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header X-Real-IP $remote_addr;
        proxy_set_header X-Forwarded-For $baseline_forwarded_for;
        proxy_set_header X-Forwarded-Host $baseline_forwarded_host;
        proxy_set_header X-Forwarded-Port $baseline_forwarded_port;
        proxy_set_header X-Forwarded-Proto $baseline_forwarded_proto;
        proxy_set_header X-Request-ID $baseline_request_id;
        proxy_next_upstream error timeout;
        proxy_next_upstream_tries 6;
        add_header Strict-Transport-Security $baseline_hsts always;
`

// handTLSServer is one HTTPS host with its certificate loaded at start,
// and a second host with the same certificate loaded at each handshake.
const handTLSServer = `
    server {
        listen %[1]s ssl%[6]s;
        server_name %[2]s;
        ssl_certificate %[4]s;
        ssl_certificate_key %[4]s;
        location / {
            proxy_pass http://backends;
        }
    }

    server {
        listen %[1]s ssl%[6]s;
        server_name %[3]s;
        ssl_certificate %[4]s$baseline_cert_reload;
        ssl_certificate_key %[4]s$baseline_cert_reload;
        location / {
            proxy_pass http://backends;
        }
    }

    server {
        listen %[1]s ssl%[6]s;
        server_name %[5]s;
        # A placeholder nginx requires; the Lua handler replaces it.
        ssl_certificate %[4]s;
        ssl_certificate_key %[4]s;
        # The alternative to a variable path: read and parse the
        # certificate once per worker, then hand nginx the parsed objects
        # at each handshake. A real implementation adds one shared-dict
        # read to notice renewals.
        ssl_certificate_by_lua_block {
            local ssl = require("ngx.ssl")
            local cache = package.loaded.bench_cert_cache
            if not cache then
                cache = {}
                package.loaded.bench_cert_cache = cache
            end
            local path = "%[4]s"
            local e = cache[path]
            if not e then
                local f = assert(io.open(path, "rb"))
                local pem = f:read("*a")
                f:close()
                e = { cert = assert(ssl.parse_pem_cert(pem)), key = assert(ssl.parse_pem_priv_key(pem)) }
                cache[path] = e
            end
            assert(ssl.clear_certs())
            assert(ssl.set_cert(e.cert))
            assert(ssl.set_priv_key(e.key))
        }
        location / {
            proxy_pass http://backends;
        }
    }
`

// handTLSStep is one host over TLS with a static certificate, the
// generated config's headers, unbuffered responses and a location body:
// the TLS counterpart of the unbuffered and floor servers, for (g).
const handTLSStep = `
    server {
        listen %[1]s ssl%[4]s;
        server_name %[2]s;
        ssl_certificate %[3]s;
        ssl_certificate_key %[3]s;
%[5]s        proxy_buffering off;
        location / {
            %[6]s
        }
    }
`

// handOptions adapts the baseline to a section; the zero value is (d) and
// (e)'s.
type handOptions struct {
	// http2 offers HTTP/2 on the TLS listener, as the generated config
	// does by default (use-http2).
	http2 bool
	// keepaliveRequests, when positive, sets keepalive_requests (else
	// nginx's default, 1000, as the generated config's).
	keepaliveRequests int
	// tlsSteps adds the headers-and-unbuffered and the floor servers on
	// TLS ports of their own, for the first certificate's host.
	tlsSteps bool
}

// startHandNginx writes the baseline configuration for backends and certs
// and starts nginx on it.
func (e *env) startHandNginx(ctx context.Context, name string, backends []*backend, certs []*certificate, opt handOptions) (*handNginx, error) {
	h := &handNginx{IP: e.nextIP(listenNet), dir: filepath.Join(e.dir, name)}
	for _, d := range []string{h.dir, filepath.Join(h.dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("hand-written nginx directory: %w", err)
		}
	}
	var err error
	if h.HTTPPort, err = freePort(h.IP); err != nil {
		return nil, err
	}
	if h.HTTPSPort, err = freePort(h.IP); err != nil {
		return nil, err
	}
	if h.HeadersPort, err = freePort(h.IP); err != nil {
		return nil, err
	}
	if h.FloorPort, err = freePort(h.IP); err != nil {
		return nil, err
	}
	if h.UnbufferedPort, err = freePort(h.IP); err != nil {
		return nil, err
	}
	if opt.tlsSteps {
		if h.HTTPSUnbufferedPort, err = freePort(h.IP); err != nil {
			return nil, err
		}
		if h.HTTPSFloorPort, err = freePort(h.IP); err != nil {
			return nil, err
		}
	}
	var upstream, servers strings.Builder
	var luaPeers []string
	for _, b := range backends {
		fmt.Fprintf(&upstream, "        server %s;\n", b.Addr)
		host, port, _ := net.SplitHostPort(b.Addr)
		luaPeers = append(luaPeers, fmt.Sprintf("{ %q, %s }", host, port))
	}
	for _, c := range certs {
		path := filepath.Join(h.dir, c.host+".pem")
		// Readable by the workers, which load it per handshake for the
		// variable-path host; it is a throwaway self-signed key.
		if err := os.WriteFile(path, c.pem, 0o644); err != nil {
			return nil, fmt.Errorf("write certificate: %w", err)
		}
		http2 := ""
		if opt.http2 {
			http2 = " http2"
		}
		fmt.Fprintf(&servers, handTLSServer, h.HTTPSAddr(), c.host, c.varHost, path, c.luaHost, http2)
		if opt.tlsSteps && c == certs[0] {
			fmt.Fprintf(&servers, handTLSStep, h.HTTPSUnbufferedAddr(), c.host, path, http2, generatedHeaders, "proxy_pass http://backends;")
			fmt.Fprintf(&servers, handTLSStep, h.HTTPSFloorAddr(), c.host, path, http2, generatedHeaders,
				"set $bench_backend \"bench/web/80\";\n            proxy_pass http://lua_floor;")
		}
	}
	httpExtra := ""
	if opt.keepaliveRequests > 0 {
		httpExtra = fmt.Sprintf("    keepalive_requests %d;\n", opt.keepaliveRequests)
	}
	conf := filepath.Join(h.dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(handConf, workerUser(), h.dir, upstream.String(), h.HTTPAddr(), servers.String(), h.HeadersAddr(), h.FloorAddr(), strings.Join(luaPeers, ", "), generatedHeaders, httpExtra, h.UnbufferedAddr())), 0o644); err != nil {
		return nil, fmt.Errorf("write hand-written config: %w", err)
	}
	if h.proc, err = e.runNginx(ctx, "hand-written", h.dir, conf, h.HTTPAddr()); err != nil {
		return nil, err
	}
	return h, nil
}

// HTTPAddr is where the baseline serves plain HTTP.
func (h *handNginx) HTTPAddr() string { return net.JoinHostPort(h.IP, strconv.Itoa(h.HTTPPort)) }

// HeadersAddr is where the baseline with the generated headers serves.
func (h *handNginx) HeadersAddr() string { return net.JoinHostPort(h.IP, strconv.Itoa(h.HeadersPort)) }

// UnbufferedAddr is where the baseline with the generated headers and
// proxy_buffering off serves.
func (h *handNginx) UnbufferedAddr() string {
	return net.JoinHostPort(h.IP, strconv.Itoa(h.UnbufferedPort))
}

// FloorAddr is where the baseline with the headers, proxy_buffering off
// and a minimal Lua balancer serves.
func (h *handNginx) FloorAddr() string { return net.JoinHostPort(h.IP, strconv.Itoa(h.FloorPort)) }

// HTTPSUnbufferedAddr is UnbufferedAddr's proxy over TLS (tlsSteps).
func (h *handNginx) HTTPSUnbufferedAddr() string {
	return net.JoinHostPort(h.IP, strconv.Itoa(h.HTTPSUnbufferedPort))
}

// HTTPSFloorAddr is FloorAddr's proxy over TLS (tlsSteps).
func (h *handNginx) HTTPSFloorAddr() string {
	return net.JoinHostPort(h.IP, strconv.Itoa(h.HTTPSFloorPort))
}

// HTTPSAddr is where the baseline serves HTTPS.
func (h *handNginx) HTTPSAddr() string { return net.JoinHostPort(h.IP, strconv.Itoa(h.HTTPSPort)) }

// masterPID is the nginx master (started with daemon off, so our child).
func (h *handNginx) masterPID() int { return h.proc.cmd.Process.Pid }

// handForwarding is the forwarding headers ingress-nginx (and the
// generated config) sends, as the hand-written configs of (f), (i) and (j)
// write them in their http block.
const handForwarding = `    map $http_upgrade $connection_upgrade {
        default upgrade;
        ''      '';
    }
    map $http_x_request_id $req_id {
        default $http_x_request_id;
        ""      $request_id;
    }
    proxy_http_version 1.1;
    proxy_set_header Host $host;
    proxy_set_header Connection $connection_upgrade;
    proxy_set_header Upgrade $http_upgrade;
    proxy_set_header X-Real-IP $remote_addr;
    proxy_set_header X-Forwarded-For $remote_addr;
    proxy_set_header X-Forwarded-Host $host;
    proxy_set_header X-Forwarded-Port $server_port;
    proxy_set_header X-Forwarded-Proto $scheme;
    proxy_set_header X-Request-ID $req_id;
`

// handAnnotatedConf is (f)'s baseline: the annotated Ingress written by
// hand in idiomatic nginx. Its http-level settings are the generated
// config's where they change what a request costs or what the backend
// and the client see (forwarding headers, retries, body buffer, server
// tokens). Each server listens on a port of its own next to a default
// server answering 404, as the generated config's host server does.
var handAnnotatedConf = template.Must(template.New("annotated").Parse(`# Hand-written nginx for (f): the annotated Ingress of bench/dynamic/
# annotated.go, as one would write it for nginx directly. The Lua module
# serves only the floor server.
load_module /usr/lib/nginx/modules/ndk_http_module.so;
load_module /usr/lib/nginx/modules/ngx_http_lua_module.so;
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
    client_max_body_size 1m;
    client_body_buffer_size 8k;
    client_body_temp_path {{.Dir}}/tmp/client-body;
    proxy_temp_path {{.Dir}}/tmp/proxy;
    fastcgi_temp_path {{.Dir}}/tmp/fastcgi;
    uwsgi_temp_path {{.Dir}}/tmp/uwsgi;
    scgi_temp_path {{.Dir}}/tmp/scgi;

    upstream backends {
{{range .Peers}}        server {{.}};
{{end}}        keepalive 320;
    }

    # The forwarding headers ingress-nginx (and the generated config)
    # sends: the client's address alone in X-Forwarded-For, and the
    # client's X-Request-ID or a fresh one.
` + handForwarding + `    proxy_next_upstream error timeout;
    proxy_next_upstream_tries 6;

    # CORS: an allowed Origin is echoed back; any other leaves the
    # variables empty, and add_header sends no header for an empty value.
    map $http_origin $cors_origin {
        default "";
        "~*^https://app\.example\.com$"     $http_origin;
        "~*^https://[a-z0-9-]+\.bench\.test$" $http_origin;
    }
    map $cors_origin $cors_credentials {
        ""      "";
        default "true";
    }
    # A preflight from an allowed origin is answered here; other OPTIONS
    # requests go to the backend.
    map "$request_method:$cors_credentials" $cors_preflight {
        default        0;
        "OPTIONS:true" 1;
    }
{{range .Servers}}
    server {
        listen {{.Listen}} default_server;
        server_name _;
        location / {
            return 404;
        }
    }
{{.Body}}{{end}}
    # The floor of a Lua-balanced config, as in (d): a key set per
    # location, read by a balancer that rotates over fixed peers.
    upstream lua_floor {
        server 0.0.0.1:1;
        balancer_by_lua_block {
            local st = package.loaded.bench_floor
            if not st then
                st = { i = 0, peers = { {{.LuaPeers}} } }
                package.loaded.bench_floor = st
            end
            local key = ngx.var.bench_backend
            local b = require("ngx.balancer")
            local n = #st.peers
            st.i = st.i % n + 1
            local p = st.peers[st.i]
            assert(b.set_current_peer(p[1], p[2]))
            if n > 1 then
                b.set_more_tries(1)
            end
        }
        keepalive 320;
    }
}
`))

// handAnnotatedServer is the annotated Ingress's host written by hand:
// a case-insensitive regex location with the rewrite, the CORS headers
// from the maps above, the proxy settings and the custom headers.
var handAnnotatedServer = template.Must(template.New("server").Parse(`
    server {
        listen {{.Listen}};
        server_name {{.Host}};

        location ~* "^/api(/|$)(.*)" {
{{- if .LuaKey}}
            set $bench_backend "{{.LuaKey}}";
{{- end}}
            if ($cors_preflight) {
                add_header Access-Control-Allow-Origin $cors_origin always;
                add_header Access-Control-Allow-Credentials true always;
                add_header Access-Control-Allow-Methods "GET, PUT, POST, DELETE, PATCH, OPTIONS" always;
                add_header Access-Control-Allow-Headers "DNT, Keep-Alive, User-Agent, X-Requested-With, If-Modified-Since, Cache-Control, Content-Type, Range, Authorization" always;
                add_header Access-Control-Max-Age 1728000 always;
                add_header Content-Type "text/plain charset=UTF-8" always;
                add_header Content-Length 0 always;
                add_header X-Content-Type-Options nosniff always;
                add_header X-Frame-Options DENY always;
                return 204;
            }
            rewrite "(?i)^/api(/|$)(.*)" /$2 break;

            proxy_connect_timeout 5s;
            proxy_send_timeout 30s;
            proxy_read_timeout 30s;
            proxy_buffering on;
            proxy_buffer_size 16k;
            proxy_buffers 4 16k;
            client_max_body_size 8m;

            add_header Access-Control-Allow-Origin $cors_origin always;
            add_header Access-Control-Allow-Credentials $cors_credentials always;
            add_header X-Content-Type-Options nosniff always;
            add_header X-Frame-Options DENY always;
            proxy_pass http://{{.Upstream}};
        }

        location / {
            return 404;
        }
    }
`))

// handAnnotated is nginx running (f)'s hand-written configs: the idiomatic
// one (HTTPAddr) and the same with a minimal Lua balancer (FloorAddr).
type handAnnotated struct {
	HTTPAddr, FloorAddr string
	proc                *process
}

// annotatedServer is one listener of handAnnotatedConf: a default server
// and the host's server.
type annotatedServer struct {
	Listen, Body string
}

// startHandAnnotated writes (f)'s hand-written configuration for backends
// and starts nginx on it.
func (e *env) startHandAnnotated(ctx context.Context, name string, backends []*backend) (*handAnnotated, error) {
	dir := filepath.Join(e.dir, name)
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		return nil, fmt.Errorf("hand-written nginx directory: %w", err)
	}
	ip := e.nextIP(listenNet)
	h := &handAnnotated{}
	for _, a := range []*string{&h.HTTPAddr, &h.FloorAddr} {
		port, err := freePort(ip)
		if err != nil {
			return nil, err
		}
		*a = net.JoinHostPort(ip, strconv.Itoa(port))
	}
	var peers, luaPeers []string
	for _, b := range backends {
		peers = append(peers, b.Addr)
		host, port, _ := net.SplitHostPort(b.Addr)
		luaPeers = append(luaPeers, fmt.Sprintf("{ %q, %s }", host, port))
	}
	var servers []annotatedServer
	for _, s := range []struct{ listen, upstream, key string }{
		{h.HTTPAddr, "backends", ""},
		{h.FloorAddr, "lua_floor", ns + "/" + service + "/80"},
	} {
		var b strings.Builder
		if err := handAnnotatedServer.Execute(&b, map[string]string{"Listen": s.listen, "Host": annotatedHost, "Upstream": s.upstream, "LuaKey": s.key}); err != nil {
			return nil, err
		}
		servers = append(servers, annotatedServer{Listen: s.listen, Body: b.String()})
	}
	var conf strings.Builder
	if err := handAnnotatedConf.Execute(&conf, map[string]any{"User": workerUser(), "Dir": dir, "Peers": peers,
		"LuaPeers": strings.Join(luaPeers, ", "), "Servers": servers}); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf.String()), 0o644); err != nil {
		return nil, fmt.Errorf("write hand-written config: %w", err)
	}
	var err error
	if h.proc, err = e.runNginx(ctx, "hand-written (f)", dir, path, h.HTTPAddr, h.FloorAddr); err != nil {
		return nil, err
	}
	return h, nil
}

// workerUser is the user directive for nginx started as root: the one the
// controller picks for its workers.
func workerUser() string {
	if os.Geteuid() != 0 {
		return ""
	}
	if _, err := osuser.Lookup("www-data"); err != nil {
		return "user nobody;"
	}
	return "user www-data;"
}

// masterPID is the nginx master (started with daemon off, so our child).
func (h *handAnnotated) masterPID() int { return h.proc.cmd.Process.Pid }
