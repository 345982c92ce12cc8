// Package render turns a model.Model into nginx configuration files. It is
// pure: the same Model and Params always give byte-identical Files. User
// strings reach the output only through Quote (or the few generators in
// escape.go that re-validate what they emit); templates print nothing but
// values prepared here.
package render

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/causeway/causeway/internal/flavour"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/template"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/spanlog"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

// onoff prints a flag as nginx's on or off.
func onoff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

var templates = template.Must(template.New("").Option("missingkey=error").Funcs(template.FuncMap{
	// backendVariable is the variable through which a location names its
	// backend to the Lua balancer.
	"backendVariable": func() string { return balancer.BackendVariable },
	"answerProbe":     func() string { return answerProbe },
	// triesVariable is the variable through which a location grants the
	// Lua balancer a Gateway API retry's tries.
	"triesVariable": func() string { return balancer.TriesVariable },
	// The log formats' names (metrics.go, tracing.go).
	"metricsLogFormat": func() string { return metricsLogFormat },
	"spanLogFormat":    func() string { return spanLogFormat },
	"onoff":            onoff,
	// Sizes and durations the model parsed, in nginx's syntax.
	"formatSize":     model.FormatSize,
	"formatDuration": model.FormatDuration,
}).ParseFS(templateFS, "templates/*.tmpl"))

// Params are the deployment facts the Model does not carry.
type Params struct {
	StateDir      layout.Dir
	ListenAddress string // "" means all addresses
	HTTPPort      int
	HTTPSPort     int
	// Dynamic selects the Lua-balanced data plane; nil renders plain
	// per-backend upstreams, which need a reload for endpoint changes.
	Dynamic *Dynamic
	// Hop is the running configuration's HopState: with it, new hosts of
	// shapes it has hop servers for are left to the table (hop.go); nil
	// renders every host into the files.
	Hop *HopState
	// User, when set, is the user nginx workers run as (the controller
	// sets it only when it runs as root).
	User string
	// BrotliModule is the absolute path of nginx's brotli filter module,
	// or "" when nginx cannot load it. It is loaded only when the
	// ConfigMap enables brotli.
	BrotliModule string
	// GeoIP2Module is the absolute path of nginx's geoip2 module
	// (Debian's libnginx-mod-http-geoip2), or "" when nginx cannot load
	// it; GeoIP2Databases the databases found in --geoip2-dir. Loaded
	// only when the ConfigMap's use-geoip2 is on.
	GeoIP2Module    string
	GeoIP2Databases []GeoIP2Database
	// HeadersMoreModule is the absolute path of the headers-more filter
	// module, or "" when nginx cannot load it. It is loaded only when
	// server-tokens is false, to remove the Server header.
	HeadersMoreModule string
	// StreamModule is the absolute path of nginx's stream module
	// (ngx_stream_module.so), loaded only when the Model has stream
	// servers; "" when the binary has it compiled in (Angie) or lacks it
	// (the builder then serves no TransportServer).
	StreamModule string
	// StreamRealIP says that the stream module has the realip module: the
	// inner passthrough servers then log and hash the client's address
	// from the PROXY header rather than the unix peer's.
	StreamRealIP bool
	// OpenFilesLimit is the controller's hard limit on open files (0 when
	// unknown), from which max-worker-open-files 0 derives nginx's
	// worker_rlimit_nofile.
	OpenFilesLimit uint64
	// Flavour is the binary's family and version (nginx, Angie); the zero
	// value renders what nginx 1.22 accepts.
	Flavour flavour.Flavour
	// Metrics, when set, counts requests per location (metrics.go), in
	// either data plane.
	Metrics *Metrics
	// ModSecurity is the ModSecurity module and rules nginx can load
	// (modsecurity.go); nil when it cannot. The module is loaded only
	// when a location runs ModSecurity.
	ModSecurity *ModSecurity
	// SystemCAFile is the data plane's bundle of well-known CAs, which
	// verifies backends whose UpstreamTLS asks for SystemCAs; "" is
	// DefaultSystemCAFile.
	SystemCAFile string
	// KnownSeries, when set, finds a metrics series key the collector
	// knows already, with its labels (metrics.Requests.KnownSeries). The
	// render's series then take that key string and those labels where
	// its own labels are equal, so an unchanged location's series is not
	// allocated again at each render: at 10,000 Ingresses that was 30,000
	// keys and labels, 6 MiB live beside the collector's own, at rest and
	// at every sync's peak. It changes no file; the memo's digest leaves
	// it out.
	KnownSeries func(key []byte) (string, *balancer.SeriesLabels, bool)
}

// DefaultSystemCAFile is where Debian's ca-certificates (in the image)
// keeps the bundle of well-known CAs.
const DefaultSystemCAFile = "/etc/ssl/certs/ca-certificates.crt"

// Dynamic configures the Lua-balanced data plane: one upstream whose peers
// come from the dynamic channel, so endpoint changes never touch a file.
type Dynamic struct {
	// Modules are absolute paths of the dynamic modules to load, in order
	// (the NDK, then the Lua module).
	Modules []string
	// LuaPackagePath is where lua-resty-core is found (see
	// SnippetOptions.PackagePath); "" is LuaJIT's default path.
	LuaPackagePath string
}

// Files maps paths relative to the state directory to their content.
type Files map[string][]byte

// Names returns the paths in sorted order.
func (f Files) Names() []string {
	names := make([]string, 0, len(f))
	for n := range f {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Output is what Render produces.
type Output struct {
	// Files are nginx.conf, upstreams.conf and the server files.
	Files Files
	// Version is a hash of everything else, which nginx.conf embeds so
	// the runtime can tell which configuration a worker runs.
	Version string
	// Sources maps each server file to the objects whose settings it
	// holds, sorted, so that a file nginx refuses can be traced back to
	// them.
	Sources map[string][]model.ObjectRef
	// Series maps the metrics series key of each counted location to
	// its labels (dynamic mode with metrics on; see metrics.go).
	Series map[string]*balancer.SeriesLabels
	// Spans maps the span key of each traced location to its labels
	// (tracing.go); nil when nothing is traced.
	Spans map[string]spanlog.Labels
	// Hosts are the hosts left to the table, served by their shapes' hop
	// servers, and HostSources the objects each of their names comes
	// from; Hop is this configuration's HopState, for the next render
	// (hop.go).
	Hosts       []balancer.Host
	HostSources map[string][]model.ObjectRef
	Hop         HopState
	// Memoized says that Memo handed out its last output again: the
	// configuration is the one last rendered, and Series is nil (the
	// last render's are as they were).
	Memoized bool
}

// Render produces nginx.conf, upstreams.conf and one file per server (or
// per shape of servers shared by several hosts).
func Render(m *model.Model, p Params) (*Output, error) {
	files, version, sources, keys, err := render(m, p)
	if errors.Is(err, errHopConflict) {
		p.Hop = nil
		return Render(m, p)
	}
	if err != nil {
		return nil, err
	}
	return &Output{Files: files, Version: version, Sources: sources, Series: keys.series, Spans: keys.spans, Hosts: keys.hosts, HostSources: keys.hostSources, Hop: keys.hop}, nil
}

func render(m *model.Model, p Params) (Files, string, map[string][]model.ObjectRef, *keyed, error) {
	files := Files{}
	lua, err := planLuaMode(m, p)
	if err != nil {
		return nil, "", nil, nil, err
	}
	ups, err := renderUpstreams(m, lua)
	if err != nil {
		return nil, "", nil, nil, err
	}
	files[layout.UpstreamsConf] = ups
	// Built once: per server it would cost servers x backends.
	backends := make(map[string]*model.Backend, len(m.Backends))
	for _, b := range m.Backends {
		backends[b.Key] = b
	}
	waf, err := planModSecurity(m, p)
	if err != nil {
		return nil, "", nil, nil, err
	}
	servers, sources, hashes, keys, err := serverFiles(m, backends, p, lua != nil, waf)
	if err != nil {
		return nil, "", nil, nil, err
	}
	maps.Copy(files, servers)
	if waf != nil {
		// The locations' rules files joined the plan as they were planned.
		maps.Copy(files, waf.files)
	}
	streams, streamSources, err := streamFiles(m, p)
	if err != nil {
		return nil, "", nil, nil, err
	}
	maps.Copy(files, streams)
	if len(streamSources) > 0 && sources == nil {
		sources = map[string][]model.ObjectRef{}
	}
	maps.Copy(sources, streamSources)
	countLogVariables(&hashes, m.Config.SkipLogPaths)
	limits := planLimitZones(m, &hashes)

	main := mainView{Config: m.Config, dir: p.StateDir, Hashes: hashes.view(), lua: lua, Limits: limits, hstsOverridden: hstsOverridden(m)}
	if lua != nil {
		if main.luaHTTP, err = lua.httpLevel(); err != nil {
			return nil, "", nil, nil, err
		}
	}
	if p.User != "" {
		if main.User, err = Quote(p.User); err != nil {
			return nil, "", nil, nil, fmt.Errorf("worker user: %w", err)
		}
	}
	if p.Dynamic != nil {
		for _, mod := range p.Dynamic.Modules {
			q, err := Quote(mod)
			if err != nil {
				return nil, "", nil, nil, fmt.Errorf("module path: %w", err)
			}
			main.LoadModules = append(main.LoadModules, q)
		}
	}
	main.metrics = p.Metrics
	main.tracing, main.spans = keys.tracing, keys.spans
	main.passthrough = m.Passthrough != nil
	main.passthroughPass = main.passthrough && p.Flavour.StreamPass()
	main.httpsPort = p.HTTPSPort
	if main.streams = len(m.Streams) > 0 || main.passthrough || len(m.SNIListeners) > 0; main.streams && p.StreamModule != "" {
		q, err := Quote(p.StreamModule)
		if err != nil {
			return nil, "", nil, nil, fmt.Errorf("module path: %w", err)
		}
		main.LoadModules = append(main.LoadModules, q)
	}
	if waf != nil {
		main.LoadModules = append(main.LoadModules, waf.load)
		main.ModSecurityRules = waf.mainRules
	}
	main.moreSnippets = usesHeadersMore(m)
	if main.SnippetMaps, err = planSnippetMaps(m.Config.HTTPSnippet, m.Config.ServerSnippet); err != nil {
		return nil, "", nil, nil, err
	}
	if err := main.planGeoIP2(p); err != nil {
		return nil, "", nil, nil, err
	}
	if main.ListenerDefaults, err = listenerDefaults(m, p); err != nil {
		return nil, "", nil, nil, fmt.Errorf("GlobalConfiguration listeners: %w", err)
	}
	if main.Misdirected, err = planMisdirected(m); err != nil {
		return nil, "", nil, nil, err
	}
	if err := main.planRequests(p); err != nil {
		return nil, "", nil, nil, err
	}
	if err := main.planHeaders(m); err != nil {
		return nil, "", nil, nil, err
	}
	if err := main.planCacheZones(m); err != nil {
		return nil, "", nil, nil, err
	}
	if err := main.planAuthCache(m); err != nil {
		return nil, "", nil, nil, err
	}
	if err := main.planGlobalAuth(m); err != nil {
		return nil, "", nil, nil, err
	}
	main.planAuthBalancer(m)
	main.planMirrors(keys.mirrors)
	if err := main.planMainAuthTemplates(m, p); err != nil {
		return nil, "", nil, nil, err
	}
	main.planRouteRetry(m)
	if files[layout.MainConf], err = execute("nginx.conf.tmpl", &main); err != nil {
		return nil, "", nil, nil, err
	}
	hashed := Files{}
	maps.Copy(hashed, files)
	if !m.Config.ReloadFreeCertificates {
		// Certificates are read at reload only, so a renewed one must
		// change the version and cause a reload.
		for _, s := range m.Secrets {
			hashed["secret:"+s.Key()] = slices.Concat(s.PEM, []byte{0}, s.OCSP)
		}
	}
	// So are the certificates and CAs for TLS to backends, always.
	for _, s := range m.ProxySecrets {
		h := slices.Concat(s.Cert, []byte{0}, s.PrivateKey, []byte{0}, s.CA)
		if len(s.CRL) > 0 {
			// Validated PEM holds no NUL, so the separator is unambiguous.
			h = slices.Concat(h, []byte{0}, s.CRL)
		}
		hashed["proxy-secret:"+s.Key()] = h
	}
	// And the CA bundles of ConfigMaps.
	for _, c := range m.ProxyCAs {
		hashed["proxy-ca:"+c.Key()] = c.CA
	}
	// And the DH parameters.
	if d := m.DHParam; d != nil {
		hashed["dhparam:"+d.Key()] = d.PEM
	}
	// And the session ticket keys.
	for i, k := range m.TicketKeys {
		hashed["ticket-key:"+strconv.Itoa(i)] = k
	}
	// Not the files of basic, digest and API key authentication: nginx
	// reads auth_basic_user_file at every request and causeway.authfile
	// reads the others again within a second, so a changed Secret applies
	// without a reload (runtime.Manager writes them atomically). Their
	// paths are in the configuration, so one appearing or going reloads.
	version := hashFiles(hashed)
	if main.Version, err = Quote(version); err != nil {
		return nil, "", nil, nil, err
	}
	if files[layout.MainConf], err = execute("nginx.conf.tmpl", &main); err != nil {
		return nil, "", nil, nil, err
	}
	return files, version, sources, keys, nil
}

func execute(name string, data any) ([]byte, error) {
	buf := executeBuffers.Get().(*bytes.Buffer)
	defer executeBuffers.Put(buf)
	buf.Reset()
	if err := templates.ExecuteTemplate(buf, name, data); err != nil {
		return nil, fmt.Errorf("execute %s: %w", name, err)
	}
	return bytes.Clone(buf.Bytes()), nil
}

// executeBuffers are execute's scratch buffers. A file is a copy of its
// exact size: a buffer of its own per file, grown by doubling, held on
// average half again the text's size, through the render and after it in
// Memo (5 MiB more than the 2.6 MiB of files at 10,000 Ingresses), and
// its growth was a tenth of a render's garbage.
var executeBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// hashFiles is a stable digest of the file set, names included.
func hashFiles(files Files) string {
	h := sha256.New()
	for _, n := range files.Names() {
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(files[n]))
		h.Write(files[n])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// mainView feeds nginx.conf.tmpl.
type mainView struct {
	model.Config
	// ListenerDefaults are the default servers of the GlobalConfiguration
	// HTTP listeners in use (httplisteners.go).
	ListenerDefaults []listenerDefaultView
	// Misdirected are the maps that tell misdirected requests on HTTPS
	// ports of Gateway listeners (misdirected.go).
	Misdirected []misdirectedView
	// SnippetMaps are the http-snippet's maps (snippetmap.go).
	SnippetMaps []snippetMapView
	// GeoIP2 defines the $geoip2_* variables (geoip2.go); nil when
	// nothing reads them.
	GeoIP2      *geoIP2View
	Version     string
	User        string
	LoadModules []string
	Hashes      hashView
	// Limits are the zones of rate and connection limits (limits.go).
	Limits *limitsView
	// Compression and request handling (requests.go).
	GzipOn, BrotliOn bool
	// ClearServerHeader removes the Server header (server-tokens false,
	// with the headers-more module).
	ClearServerHeader        bool
	GzipTypes, BrotliTypes   string
	WorkerRlimitNofile       int
	WorkerConnections        int
	LargeClientHeaderBuffers string
	KeepAlive                string
	ClientHeaderBufferSize   string
	ClientHeaderTimeout      string
	ClientBodyTimeout        string
	dir                      layout.Dir
	lua                      *luaView
	luaHTTP                  string // Lua
	// metrics is set when locations write the metrics log (metrics.go).
	metrics *Metrics
	// tracing: some location is traced (tracing.go); spans are the span
	// keys the servers set.
	tracing bool
	spans   map[string]spanlog.Labels
	// hstsOverridden: some server has HSTS of its own (hsts.go).
	hstsOverridden bool
	// Headers and DH parameters (headers.go): quoted names and values.
	AddHeaderLines, ProxySetHeaderLines []headerLine
	HiddenHeaders                       []string
	PassServerHeader                    bool
	DHParamFile                         string
	// TicketKeyFiles are the session ticket keys' files, the one that
	// encrypts first.
	TicketKeyFiles []string
	// AuthCache is the cache of external authentication, GlobalAuthServer
	// global-auth-url's host:port (extauth.go).
	AuthCache *authCacheView
	// CacheZones are the cache Policies' zones (cache.go).
	CacheZones       []cacheZoneView
	GlobalAuthServer string
	// AuthBalancer names the upstream balancing the subrequests to
	// authentication Services, when one asks one (extauth_backend.go).
	AuthBalancer string
	// MirrorBalancer names the upstream balancing the copies of requests
	// to mirror backends, when a location has one; MirrorSplits pick the
	// requests of mirrors of less than every request (mirror.go).
	MirrorBalancer string
	MirrorSplits   []mirrorSplitView
	// AuthLoop are the loop's sockets, when an auth URL names $host;
	// BestHTTPHost declares $causeway_best_http_host (extauth_template.go).
	AuthLoop     *authLoopView
	BestHTTPHost bool
	// RouteTries declares $causeway_tries (retry.go).
	RouteTries bool
	// ModSecurityRules is the quoted path of the http level's ModSecurity
	// rules, "" when no location runs ModSecurity (modsecurity.go).
	ModSecurityRules string

	// moreSnippets says that a snippet uses the headers-more module.
	moreSnippets bool
	// streams says that the Model has stream servers (a stream block).
	streams bool
	// passthrough says that TLS passthrough takes the HTTPS port: the
	// HTTPS listener is then a unix socket behind a PROXY header, or,
	// with passthroughPass, one the stream module's pass hands the
	// connection itself to (no header: the client address is the
	// connection's, but the socket has no port of its own, so
	// $server_port reads as httpsPort).
	passthrough, passthroughPass bool
	httpsPort                    int
}

// Lua returns the http-level Lua directives, the dynamic-channel server and
// the server that answers 503 for backends without endpoints, indented for
// the http block; empty in plain mode. The header-filter and log hooks
// cost time on every request, so only locations whose method needs them
// carry them (see locationBody).
func (v *mainView) Lua() string { return v.luaHTTP }

// httpLevel is what Lua returns for v.
func (v *luaView) httpLevel() (string, error) {
	s, err := v.snippets()
	if err != nil {
		return "", err
	}
	return indent(s.HTTP+"\n"+s.DynamicServer+"\n"+s.UnavailableServer, "    "), nil
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
}

func (v *mainView) WorkerProcesses() string {
	if v.Config.WorkerProcesses == 0 {
		return "auto"
	}
	return strconv.Itoa(v.Config.WorkerProcesses)
}
func (v *mainView) WorkerShutdownTimeout() int { return int(v.Config.WorkerShutdownTimeout.Seconds()) }
func (v *mainView) ProxyConnectTimeout() int   { return int(v.Config.ProxyConnectTimeout.Seconds()) }
func (v *mainView) ProxyReadTimeout() int      { return int(v.Config.ProxyReadTimeout.Seconds()) }
func (v *mainView) ProxySendTimeout() int      { return int(v.Config.ProxySendTimeout.Seconds()) }

func (v *mainView) PidFile() (string, error) { return Quote(v.dir.PidFile()) }

func (v *mainView) StatusSocket() (string, error) { return quotedPathBody(v.dir.StatusSocket()) }
func (v *mainView) UpstreamsConf() (string, error) {
	return Quote(v.dir.Path(layout.UpstreamsConf))
}
func (v *mainView) ServersGlob() (string, error) {
	return Quote(filepath.Join(v.dir.Path(layout.ServersDir), "*.conf"))
}
func (v *mainView) TempDir(name string) (string, error) {
	return Quote(filepath.Join(v.dir.TempDir(), name))
}

// quotedPathBody is a path used inside a larger token ("unix:PATH"): it must
// need no quoting at all, so it is refused unless it is plain.
func quotedPathBody(p string) (string, error) {
	q, err := Quote(p)
	if err != nil {
		return "", err
	}
	if q != `"`+p+`"` || strings.ContainsAny(p, " \t;{}#'") {
		return "", fmt.Errorf("path %q must not need quoting", p)
	}
	return p, nil
}
