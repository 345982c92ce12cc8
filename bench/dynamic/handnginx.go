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
)

// handNginx is nginx running the hand-written minimal proxy configuration
// that the generated one is compared with.
type handNginx struct {
	IP                  string
	HTTPPort, HTTPSPort int
	// HeadersPort serves the same proxy with the generated config's
	// forwarding headers added, to tell their cost from the Lua balancer's.
	HeadersPort int
	// FloorPort adds a minimal Lua balancer to HeadersPort's proxy.
	FloorPort int
	dir       string
	proc      *process
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
    client_body_temp_path %[2]s/tmp/client-body;
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

    # The generated config's proxy settings, without its Lua balancer.
    map $http_upgrade $baseline_connection {
        default upgrade;
        ''      '';
    }
    server {
        listen %[6]s default_server;
%[9]s        location / {
            proxy_pass http://backends;
        }
    }

    # The floor of a Lua-balanced config: the same headers, a key set per
    # location and read by a balancer that does the least any such
    # balancer does (read the key, rotate over fixed peers, grant a
    # retry). Generated minus this is what Causeway's own Lua costs.
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
%[9]s        location / {
            set $bench_backend "bench/web/80";
            proxy_pass http://lua_floor;
        }
    }
%[5]s}
`

// generatedHeaders are the generated config's forwarding headers and
// retry settings, for the baseline servers that add them.
const generatedHeaders = `        proxy_set_header Host $host;
        proxy_set_header Connection $baseline_connection;
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header X-Real-IP $remote_addr;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Host $host;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_next_upstream error timeout;
        proxy_next_upstream_tries 6;
`

// handTLSServer is one HTTPS host with its certificate loaded at start,
// and a second host with the same certificate loaded at each handshake.
const handTLSServer = `
    server {
        listen %[1]s ssl;
        server_name %[2]s;
        ssl_certificate %[4]s;
        ssl_certificate_key %[4]s;
        location / {
            proxy_pass http://backends;
        }
    }

    server {
        listen %[1]s ssl;
        server_name %[3]s;
        ssl_certificate %[4]s$baseline_cert_reload;
        ssl_certificate_key %[4]s$baseline_cert_reload;
        location / {
            proxy_pass http://backends;
        }
    }

    server {
        listen %[1]s ssl;
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

// startHandNginx writes the baseline configuration for backends and certs
// and starts nginx on it.
func (e *env) startHandNginx(ctx context.Context, name string, backends []*backend, certs []*certificate) (*handNginx, error) {
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
		fmt.Fprintf(&servers, handTLSServer, h.HTTPSAddr(), c.host, c.varHost, path, c.luaHost)
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user www-data;" // as the controller picks for its workers
		if _, err := osuser.Lookup("www-data"); err != nil {
			user = "user nobody;"
		}
	}
	conf := filepath.Join(h.dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(handConf, user, h.dir, upstream.String(), h.HTTPAddr(), servers.String(), h.HeadersAddr(), h.FloorAddr(), strings.Join(luaPeers, ", "), generatedHeaders)), 0o644); err != nil {
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

// FloorAddr is where the baseline with the headers and a minimal Lua
// balancer serves.
func (h *handNginx) FloorAddr() string { return net.JoinHostPort(h.IP, strconv.Itoa(h.FloorPort)) }

// HTTPSAddr is where the baseline serves HTTPS.
func (h *handNginx) HTTPSAddr() string { return net.JoinHostPort(h.IP, strconv.Itoa(h.HTTPSPort)) }

// masterPID is the nginx master (started with daemon off, so our child).
func (h *handNginx) masterPID() int { return h.proc.cmd.Process.Pid }
