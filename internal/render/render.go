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
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

var templates = template.Must(template.New("").Option("missingkey=error").ParseFS(templateFS, "templates/*.tmpl"))

// Params are the deployment facts the Model does not carry.
type Params struct {
	StateDir      layout.Dir
	ListenAddress string // "" means all addresses
	HTTPPort      int
	HTTPSPort     int
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

// Render produces nginx.conf, upstreams.conf and one file per server, and
// the configuration version: a hash of everything else, which nginx.conf
// embeds so the runtime can tell which configuration a worker runs.
func Render(m *model.Model, p Params) (Files, string, error) {
	files := Files{}
	ups, err := renderUpstreams(m)
	if err != nil {
		return nil, "", err
	}
	files[layout.UpstreamsConf] = ups
	for _, srv := range m.Servers {
		out, err := renderServer(m, srv, p)
		if err != nil {
			return nil, "", fmt.Errorf("render server %q: %w", srv.Host, err)
		}
		files[layout.ServerFile(srv.Host)] = out
	}

	main := mainView{Config: m.Config, dir: p.StateDir, servers: len(m.Servers)}
	if files[layout.MainConf], err = execute("nginx.conf.tmpl", &main); err != nil {
		return nil, "", err
	}
	version := hashFiles(files)
	if main.Version, err = Quote(version); err != nil {
		return nil, "", err
	}
	if files[layout.MainConf], err = execute("nginx.conf.tmpl", &main); err != nil {
		return nil, "", err
	}
	return files, version, nil
}

func execute(name string, data any) ([]byte, error) {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name, data); err != nil {
		return nil, fmt.Errorf("execute %s: %w", name, err)
	}
	return buf.Bytes(), nil
}

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
	Version string
	dir     layout.Dir
	servers int
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

// ServerNamesHashMaxSize grows with the number of hosts so nginx can build
// its server-name hash with thousands of them.
func (v *mainView) ServerNamesHashMaxSize() int {
	size := 1024
	for size < 2*v.servers {
		size *= 2
	}
	return size
}

func (v *mainView) PidFile() (string, error)      { return Quote(v.dir.PidFile()) }
func (v *mainView) DefaultCert() (string, error)  { return Quote(v.dir.DefaultCert()) }
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

type serverView struct {
	Sources       string
	ServerName    string
	ListenHTTP    string
	ListenHTTPS   string
	DefaultServer bool
	Cert          string
	Redirect      bool
	RedirectPort  string
	Locations     []locationView
}

type locationView struct {
	Exact    bool
	Path     string
	Upstream string
	Status   int
}

func renderServer(m *model.Model, srv *model.Server, p Params) ([]byte, error) {
	var v serverView
	var err error
	if v.ServerName, err = serverName(srv.Host); err != nil {
		return nil, err
	}
	if v.ListenHTTP, err = listen(p.ListenAddress, p.HTTPPort); err != nil {
		return nil, err
	}
	if v.ListenHTTPS, err = listen(p.ListenAddress, p.HTTPSPort); err != nil {
		return nil, err
	}
	v.DefaultServer = srv.Host == ""
	var sources []string
	for _, ref := range srv.Ingresses {
		q, err := Quote(ref.Namespace + "/" + ref.Name)
		if err != nil {
			return nil, err
		}
		sources = append(sources, q)
	}
	v.Sources = strings.Join(sources, " ")
	if v.Sources == "" {
		v.Sources = "none"
	}
	if srv.TLS != nil && srv.TLS.Secret != "" {
		if v.Cert, err = secretPath(p.StateDir, srv.TLS.Secret); err != nil {
			return nil, err
		}
	}
	v.Redirect = srv.SSLRedirect
	if p.HTTPSPort != 443 {
		v.RedirectPort = ":" + strconv.Itoa(p.HTTPSPort)
	}
	if v.Locations, err = locations(m, srv); err != nil {
		return nil, err
	}
	return execute("server.conf.tmpl", &v)
}

// locations maps Ingress paths onto nginx locations. nginx checks "="
// locations first, then picks the longest matching prefix, which is exactly
// the Ingress rule (longest match, Exact first on a tie) provided that a
// Prefix path P becomes two locations: "= P" for the path itself and "P/"
// for everything below it. The Prefix "= P" is dropped when an Exact P
// exists, because Exact wins the tie. The root prefix is "/", and the
// server's default answers through "/" when no Prefix "/" exists.
func locations(m *model.Model, srv *model.Server) ([]locationView, error) {
	exact := map[string]bool{}
	hasRoot := false
	for _, l := range srv.Locations {
		if l.Type == model.Exact {
			exact[l.Path] = true
		} else if l.Path == "/" {
			hasRoot = true
		}
	}
	backends := map[string]*model.Backend{}
	for _, b := range m.Backends {
		backends[b.Key] = b
	}
	var out []locationView
	add := func(l *model.Location, isExact bool, path string) error {
		q, err := Quote(path)
		if err != nil {
			return err
		}
		lv := locationView{Exact: isExact, Path: q, Status: l.Status}
		if l.Backend != "" {
			if b := backends[l.Backend]; b == nil || len(b.Endpoints) == 0 {
				lv.Status = 503 // no ready endpoints
			} else if lv.Upstream, err = upstreamName(l.Backend); err != nil {
				return err
			}
		}
		out = append(out, lv)
		return nil
	}
	for _, l := range srv.Locations {
		var err error
		switch {
		case l.Type == model.Exact:
			err = add(l, true, l.Path)
		case l.Path == "/":
			err = add(l, false, "/")
		default:
			if !exact[l.Path] {
				if err = add(l, true, l.Path); err != nil {
					return nil, err
				}
			}
			err = add(l, false, l.Path+"/")
		}
		if err != nil {
			return nil, err
		}
	}
	if !hasRoot && srv.Default != nil {
		if err := add(srv.Default, false, "/"); err != nil {
			return nil, err
		}
	}
	// nginx answers "/foo" with a 301 to "/foo/" when a proxied location
	// "/foo/" exists and nothing else names "/foo" exactly. Ingress has no
	// such redirect, so every such path gets an explicit "= /foo" routed to
	// whatever the Ingress rules say "/foo" matches.
	named := map[string]bool{}
	for _, l := range srv.Locations {
		named[l.Path] = true // Exact P is "= P"; Prefix P emits "= P" too
	}
	for _, l := range srv.Locations {
		bare := strings.TrimSuffix(l.Path, "/")
		if l.Type != model.Exact || bare == "" || bare == l.Path || named[bare] {
			continue
		}
		named[bare] = true
		target := srv.Match(bare)
		if target == nil {
			target = srv.Default
		}
		if target == nil {
			target = &model.Location{Status: 404}
		}
		if err := add(target, true, bare); err != nil {
			return nil, err
		}
	}
	return out, nil
}

type upstreamView struct {
	Name    string
	Servers []string
}

func renderUpstreams(m *model.Model) ([]byte, error) {
	data := struct {
		Keepalive int
		Upstreams []upstreamView
	}{Keepalive: m.Config.UpstreamKeepalive}
	for _, b := range m.Backends {
		if len(b.Endpoints) == 0 {
			continue
		}
		name, err := upstreamName(b.Key)
		if err != nil {
			return nil, err
		}
		u := upstreamView{Name: name}
		for _, e := range b.Endpoints {
			addr, err := listen(e.Address, int(e.Port))
			if err != nil {
				return nil, fmt.Errorf("backend %s: %w", b.Key, err)
			}
			u.Servers = append(u.Servers, addr)
		}
		data.Upstreams = append(data.Upstreams, u)
	}
	return execute("upstreams.conf.tmpl", &data)
}
