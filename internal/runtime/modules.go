package runtime

import (
	"context"
	"errors"
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
	probe := render.Probe{Dir: dir.Path("tmp", "module-probe"), Check: render.ProbeLoad, Modules: []string{p}}
	if err := runProbe(ctx, binary, probe); err != nil {
		return "", refusal(err, "nginx cannot load "+p)
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
	if probe(ctx, binary, "stream-probe", render.ProbeStream, "", dir) == nil {
		return "", nil
	}
	return DetectModule(ctx, binary, modulesDir, StreamModule, dir)
}

// DetectStreamRealIP reports whether nginx's stream module (module, the
// path DetectStream returned) has the realip module, which TLS
// passthrough needs behind a load balancer sending the PROXY protocol.
// Debian's has it; Angie's build does not.
func DetectStreamRealIP(ctx context.Context, binary, module string, dir layout.Dir) bool {
	return probe(ctx, binary, "stream-probe", render.ProbeStreamRealIP, module, dir) == nil
}

// DetectGunzip reports whether nginx has the gunzip filter
// (--with-http_gunzip_module), which a VirtualServer's spec.gunzip needs.
// Debian's has it; Angie's vendored build does not.
func DetectGunzip(ctx context.Context, binary string, dir layout.Dir) bool {
	return probe(ctx, binary, "http-probe", render.ProbeGunzip, "", dir) == nil
}

// probe runs nginx -t on the probe configuration of check in directory
// name of dir's tmp, loading module first when set.
func probe(ctx context.Context, binary, name string, check render.ProbeCheck, module string, dir layout.Dir) error {
	p := render.Probe{Dir: dir.Path("tmp", name), Check: check}
	if module != "" {
		p.Modules = []string{module}
	}
	return runProbe(ctx, binary, p)
}

// runProbe writes p's configuration (render.ProbeConfig) into p.Dir and
// runs nginx -t on it. When nginx refuses it, the error is a *ConfigError
// holding what nginx said.
func runProbe(ctx context.Context, binary string, p render.Probe) error {
	if err := os.MkdirAll(p.Dir, 0o700); err != nil {
		return err
	}
	conf, err := render.ProbeConfig(p)
	if err != nil {
		return err
	}
	path := filepath.Join(p.Dir, "nginx.conf")
	if err := writeAtomic(path, conf, 0o600); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, binary, "-p", p.Dir+"/", "-e", "stderr", "-c", path, "-t", "-q").CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return &ConfigError{Output: msg}
	}
	return nil
}

// refusal says what, with nginx's words, when err is nginx refusing a
// probe; any other error (the probe could not be written) is returned as
// it is.
func refusal(err error, what string) error {
	var ce *ConfigError
	if errors.As(err, &ce) {
		return fmt.Errorf("%s: %s", what, ce.Output)
	}
	return err
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
