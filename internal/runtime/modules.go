package runtime

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/render"
)

// BrotliModule is the file of nginx's brotli filter module (Debian's
// libnginx-mod-http-brotli-filter).
const BrotliModule = "ngx_http_brotli_filter_module.so"

// HeadersMoreModule is the file of the headers-more filter module
// (Debian's libnginx-mod-http-headers-more-filter), which removes the
// Server header when server-tokens is false, as ingress-nginx does.
const HeadersMoreModule = "ngx_http_headers_more_filter_module.so"

// DetectModule reports whether nginx can load the dynamic module file
// name of modulesDir, returning its path. Like DetectLua it does not trust
// the file's presence alone: a module built for another nginx is refused
// at load, so nginx loads it in a throw-away configuration.
func DetectModule(ctx context.Context, binary, modulesDir, name string, dir layout.Dir) (string, error) {
	p := filepath.Join(modulesDir, name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("module %s not found", p)
	}
	probeDir := dir.Path("tmp", "module-probe")
	if err := os.MkdirAll(probeDir, 0o700); err != nil {
		return "", err
	}
	mod, err := render.Quote(p)
	if err != nil {
		return "", err
	}
	pid, err := render.Quote(filepath.Join(probeDir, "nginx.pid"))
	if err != nil {
		return "", err
	}
	conf := fmt.Sprintf("load_module %s;\npid %s;\nerror_log stderr;\nevents {}\nhttp {\n  %s\n}\n", mod, pid, probeHTTP)
	path := filepath.Join(probeDir, "nginx.conf")
	if err := writeAtomic(path, []byte(conf), 0o600); err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, binary, "-p", probeDir+"/", "-e", "stderr", "-c", path, "-t", "-q").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("nginx cannot load %s: %s", p, strings.TrimSpace(string(out)))
	}
	return p, nil
}

// OpenFilesLimit is this process's hard limit on open files (0 when it
// cannot be read), which nginx's workers inherit.
func OpenFilesLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return r.Max
}

// StreamModule is the file of nginx's stream module (Debian's
// libnginx-mod-stream), which serves TransportServers.
const StreamModule = "ngx_stream_module.so"

// DetectStream reports whether nginx has the stream module: compiled in
// (Angie's build, and nginx built --with-stream), which returns "", or as
// the dynamic module of modulesDir, which returns its path to load. The
// compiled-in case is tried first: loading a module the binary already
// has fails.
func DetectStream(ctx context.Context, binary, modulesDir string, dir layout.Dir) (string, error) {
	if probeStream(ctx, binary, "", "", dir) == nil {
		return "", nil
	}
	return DetectModule(ctx, binary, modulesDir, StreamModule, dir)
}

// DetectStreamRealIP reports whether nginx's stream module (module, the
// path DetectStream returned) has the realip module, which TLS
// passthrough needs behind a load balancer sending the PROXY protocol.
// Debian's has it; Angie's build does not.
func DetectStreamRealIP(ctx context.Context, binary, module string, dir layout.Dir) bool {
	return probeStream(ctx, binary, module, "set_real_ip_from 127.0.0.1;", dir) == nil
}

// DetectGunzip reports whether nginx has the gunzip filter
// (--with-http_gunzip_module), which a VirtualServer's spec.gunzip needs.
// Debian's has it; Angie's vendored build does not.
func DetectGunzip(ctx context.Context, binary string, dir layout.Dir) bool {
	return probeBlock(ctx, binary, "", "http", "access_log off;\ngunzip on;", dir) == nil
}

// probeStream runs nginx -t on a configuration with a stream block
// holding body, loading module first when set.
func probeStream(ctx context.Context, binary, module, body string, dir layout.Dir) error {
	return probeBlock(ctx, binary, module, "stream", body, dir)
}

// probeBlock runs nginx -t on a configuration with a block (stream or
// http) holding body, loading module first when set.
func probeBlock(ctx context.Context, binary, module, block, body string, dir layout.Dir) error {
	probeDir := dir.Path("tmp", block+"-probe")
	if err := os.MkdirAll(probeDir, 0o700); err != nil {
		return err
	}
	pid, err := render.Quote(filepath.Join(probeDir, "nginx.pid"))
	if err != nil {
		return err
	}
	load := ""
	if module != "" {
		q, err := render.Quote(module)
		if err != nil {
			return err
		}
		load = "load_module " + q + ";\n"
	}
	conf := fmt.Sprintf("%spid %s;\nerror_log stderr;\nevents {}\n%s {\n%s\n}\n", load, pid, block, body)
	path := filepath.Join(probeDir, "nginx.conf")
	if err := writeAtomic(path, []byte(conf), 0o600); err != nil {
		return err
	}
	return exec.CommandContext(ctx, binary, "-p", probeDir+"/", "-e", "stderr", "-c", path, "-t", "-q").Run()
}

// ModSecurityModule is the file of the ModSecurity connector (Debian's
// libnginx-mod-http-modsecurity, which brings libmodsecurity3).
const ModSecurityModule = "ngx_http_modsecurity_module.so"

// DefaultCRSDir is where Debian's modsecurity-crs installs the OWASP Core
// Rule Set: its rules are rules/*.conf.
const DefaultCRSDir = "/usr/share/modsecurity-crs"

// unicodeMappings are where Debian's libnginx-mod-http-modsecurity puts
// ModSecurity's unicode.mapping, in the order tried.
var unicodeMappings = []string{"/etc/nginx/unicode.mapping", "/usr/share/nginx/docs/modsecurity/unicode.mapping"}

// DetectModSecurity reports what nginx can run of ModSecurity: the module
// (loaded in a throw-away configuration, as DetectModule does), the Core
// Rule Set's rules files under crsDir (nil when there are none, with
// crsErr saying why) and unicode.mapping ("" when missing). The module
// is loaded only when a location runs ModSecurity.
func DetectModSecurity(ctx context.Context, binary, modulesDir, crsDir string, dir layout.Dir) (ms *render.ModSecurity, crsErr, err error) {
	mod, err := DetectModule(ctx, binary, modulesDir, ModSecurityModule, dir)
	if err != nil {
		return nil, nil, err
	}
	ms = &render.ModSecurity{Module: mod}
	rules, _ := filepath.Glob(filepath.Join(crsDir, "rules", "*.conf"))
	sort.Strings(rules) // the CRS's files are numbered in their order
	if len(rules) == 0 {
		crsErr = fmt.Errorf("no rules in %s", filepath.Join(crsDir, "rules"))
	}
	ms.CRS = rules
	for _, p := range unicodeMappings {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			ms.UnicodeMapping = p
			break
		}
	}
	return ms, crsErr, nil
}
