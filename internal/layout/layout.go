// Package layout names the files and sockets under the controller's state
// directory. Render (which writes paths into nginx.conf) and runtime (which
// writes the files) share it so they can never disagree.
package layout

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strconv"
	"strings"
)

// Dir is the state directory, e.g. /var/lib/causeway.
type Dir string

// Path joins elements under the state directory.
func (d Dir) Path(elem ...string) string {
	return filepath.Join(append([]string{string(d)}, elem...)...)
}

// Relative paths of the generated files and directories, relative to the
// state directory.
const (
	MainConf      = "nginx.conf"
	ServersDir    = "servers"
	SecretsDir    = "secrets"
	UpstreamsConf = "upstreams.conf"
	LuaDir        = "lua"
	TempDir       = "tmp"
	// RunDir holds the control sockets, the pid file and the dynamic
	// state: only the controller and nginx's master may enter it, since
	// whoever can connect to the dynamic socket can reroute traffic.
	RunDir = "run"
	// ModSecurityDir holds the ModSecurity rules files render writes:
	// nginx's master reads them when it loads the configuration.
	ModSecurityDir = "modsecurity"
	// ModSecurityMain is the rules file of nginx's http level: the base
	// configuration, the ConfigMap's rules and the Core Rule Set.
	ModSecurityMain = ModSecurityDir + "/main.conf"
	// MapsFile holds the shared servers' maps on $host, merged (render's
	// hostmaps.go). Like the other names starting with "_", it never
	// names a host's own file.
	MapsFile = ServersDir + "/_maps.conf"
	// WorkerSocketsDir holds the sockets nginx's workers connect to
	// themselves (the 503 server); workers may enter it, nobody else.
	WorkerSocketsDir = "sockets"
)

// maxHostInName bounds the readable part of a server file's name; the
// digest that follows keeps names unique, and the whole name stays far
// below the 255 bytes a file name may have, whatever the host.
const maxHostInName = 64

// ServerFile is the relative path of one server's config: a readable
// prefix of the host followed by a digest of the whole host, so that any
// valid host (up to 253 characters) gives a short, unique, stable name.
// Hosts reach here only after model validation (lower-case DNS names,
// optionally "*."), so the prefix is file-system safe; the catch-all
// server is "_default".
func ServerFile(host string) string {
	if host == "" {
		return filepath.Join(ServersDir, "_default.conf")
	}
	sum := sha256.Sum256([]byte(host))
	name := strings.Replace(host, "*", "_wildcard", 1)
	if len(name) > maxHostInName {
		name = name[:maxHostInName]
	}
	return filepath.Join(ServersDir, name+"-"+hex.EncodeToString(sum[:6])+".conf")
}

// ScopedServerFile is the relative path of the server of host in scope
// (model.Server.Scope): host's own name with the scope's hash, so that one
// host may have a server in each scope.
func ScopedServerFile(scope, host string) string {
	sum := sha256.Sum256([]byte(scope + "\x00" + host))
	name := strings.Replace(host, "*", "_wildcard", 1)
	if host == "" {
		name = "_default"
	}
	if len(name) > maxHostInName {
		name = name[:maxHostInName]
	}
	return filepath.Join(ServersDir, "_scoped-"+name+"-"+hex.EncodeToString(sum[:6])+".conf")
}

// SharedServerFile is the relative path of a server that several hosts
// share; id is hex. Hosts cannot start with "_", so it never names a host's
// own file.
func SharedServerFile(id string) string {
	return filepath.Join(ServersDir, "_shared-"+id+".conf")
}

// SecretFile is the relative path of a TLS secret's PEM bundle
// (certificate chain followed by key). Namespace and name are DNS labels or
// subdomains, validated by the model, so "_" cannot occur in either and the
// mapping is one-to-one.
func SecretFile(namespace, name string) string {
	return filepath.Join(SecretsDir, namespace+"_"+name+".pem")
}

// ProxyCertFile is the relative path of a proxy secret's client
// certificate chain followed by its key (UpstreamTLS). The suffix starts
// with "_", which neither namespace nor name can hold, so it never names
// a TLS secret's file (SecretFile) or another proxy secret's.
func ProxyCertFile(namespace, name string) string {
	return filepath.Join(SecretsDir, namespace+"_"+name+"_proxy.pem")
}

// ProxyCAFile is the relative path of a proxy secret's CA bundle, which
// backends' certificates are verified against.
func ProxyCAFile(namespace, name string) string {
	return filepath.Join(SecretsDir, namespace+"_"+name+"_ca.pem")
}

// ProxyConfigMapCAFile is the relative path of a ConfigMap's CA bundle
// (model.ProxyCA). Its suffix ends as ProxyCAFile's does, so
// IsProxySecretFile knows it, and never names a Secret's file: names
// hold no "_".
func ProxyConfigMapCAFile(namespace, name string) string {
	return filepath.Join(SecretsDir, namespace+"_"+name+"_configmap_ca.pem")
}

// ProxyCRLFile is the relative path of a proxy secret's ca.crl, which
// client certificates are checked against (auth-tls-secret).
func ProxyCRLFile(namespace, name string) string {
	return filepath.Join(SecretsDir, namespace+"_"+name+"_crl.pem")
}

// DHParamFile is the relative path of the DH parameters that ssl-dh-param
// names; like ProxyCertFile's, its suffix never names another file.
func DHParamFile(namespace, name string) string {
	return filepath.Join(SecretsDir, namespace+"_"+name+"_dhparam.pem")
}

// AuthFile is the relative path of a basic authentication password file
// read from a Secret, kind "auth" or "authmap" (model.AuthFile.Kind); like
// ProxyCertFile's, its suffix never names another file.
func AuthFile(namespace, name, kind string) string {
	return filepath.Join(SecretsDir, namespace+"_"+name+"_"+kind+".htpasswd")
}

// IsAuthFile reports whether rel is an AuthFile, which holds no
// certificate.
func IsAuthFile(rel string) bool {
	return strings.HasPrefix(rel, SecretsDir+"/") && strings.HasSuffix(rel, ".htpasswd")
}

// OCSPFile is the relative path of the OCSP response stapled to a TLS
// secret's certificate (SecretFile's), read with it.
func OCSPFile(namespace, name string) string {
	return filepath.Join(SecretsDir, namespace+"_"+name+".ocsp")
}

// IsOCSPFile reports whether rel is an OCSPFile: a DER response, no
// certificate.
func IsOCSPFile(rel string) bool {
	return strings.HasPrefix(rel, SecretsDir+"/") && strings.HasSuffix(rel, ".ocsp")
}

// TicketKeyFile is the relative path of the i-th TLS session ticket key;
// without "_", it never names another secret's file.
func TicketKeyFile(i int) string {
	return filepath.Join(SecretsDir, "session-ticket-"+strconv.Itoa(i)+".key")
}

// IsTicketKeyFile reports whether rel is a TicketKeyFile: nginx reads it
// at reload only.
func IsTicketKeyFile(rel string) bool {
	return strings.HasPrefix(rel, SecretsDir+"/session-ticket-") && strings.HasSuffix(rel, ".key")
}

// IsDHParamFile reports whether rel is a DHParamFile: nginx reads it at
// reload only.
func IsDHParamFile(rel string) bool {
	return strings.HasPrefix(rel, SecretsDir+"/") && strings.HasSuffix(rel, "_dhparam.pem")
}

// IsProxySecretFile reports whether rel is a ProxyCertFile, ProxyCAFile
// or ProxyCRLFile (not a host certificate): nginx reads those at reload
// only.
func IsProxySecretFile(rel string) bool {
	return strings.HasPrefix(rel, SecretsDir+"/") &&
		(strings.HasSuffix(rel, "_proxy.pem") || strings.HasSuffix(rel, "_ca.pem") || strings.HasSuffix(rel, "_crl.pem"))
}

// ModSecurityLocationFile is the relative path of the rules a location
// adds to the http level's; id is a hex digest of its content, so
// locations with the same rules share one file.
func ModSecurityLocationFile(id string) string {
	return filepath.Join(ModSecurityDir, "location-"+id+".conf")
}

// StreamFile is the relative path of a stream listener's server (a
// TransportServer's). Listener names are DNS labels, so the name is file
// system safe and, starting with "_", never a host's file; its suffix
// keeps the http block's "*.conf" from including it.
func StreamFile(listener string) string {
	return filepath.Join(ServersDir, "_stream-"+listener+".stream")
}

// PassthroughFile is the stream server of TLS passthrough on the HTTPS
// port; "_" is no listener name's first character.
var PassthroughFile = StreamFile("_passthrough")

// StreamGlob matches every StreamFile, for the stream block's include.
const StreamGlob = "_stream-*.stream"

// Fixed runtime paths.
func (d Dir) MainConf() string      { return d.Path(MainConf) }
func (d Dir) StatusSocket() string  { return d.Path(RunDir, "status.sock") }
func (d Dir) DynamicSocket() string { return d.Path(RunDir, "dynamic.sock") }

// UnavailableSocket is where nginx answers 503 for backends without a
// ready endpoint (dynamic mode); workers proxy to it.
func (d Dir) UnavailableSocket() string { return d.Path(WorkerSocketsDir, "unavailable.sock") }

// NoLiveSocket is where nginx answers 502 for backends whose every
// endpoint is out after failures or at max_conns (dynamic mode).
func (d Dir) NoLiveSocket() string { return d.Path(WorkerSocketsDir, "nolive.sock") }

// NoEndpointsSocket is never created: a stream upstream without ready
// endpoints lists it, so that nginx accepts the upstream and every
// connection to it fails and is closed.
func (d Dir) NoEndpointsSocket() string { return d.Path(WorkerSocketsDir, "no-endpoints.sock") }

// HTTPSSocket is where the http servers' HTTPS listener listens when TLS
// passthrough takes the HTTPS port: only nginx's passthrough proxy
// connects to it.
func (d Dir) HTTPSSocket() string { return d.Path(WorkerSocketsDir, "https.sock") }

// AuthLoopSocket is where the servers whose external authentication
// asks the request's own host ($host) also listen, for scheme "http" or
// "https": only nginx's workers connect to it.
func (d Dir) AuthLoopSocket(scheme string) string {
	return d.Path(WorkerSocketsDir, "auth-"+scheme+".sock")
}

// SNITerminateSocket is the socket of the stream server that terminates
// TLS for the terminated routes of SNI listener name, behind the one that
// reads server names on its port (a Gateway port of TLS listeners in both
// modes).
func (d Dir) SNITerminateSocket(name string) string {
	return d.Path(WorkerSocketsDir, "sni-"+name+".sock")
}

// PassthroughSocket is the socket of the stream server that passes one
// host's TLS connections to its upstream, named by a digest of the host.
func (d Dir) PassthroughSocket(host string) string {
	sum := sha256.Sum256([]byte(host))
	return d.Path(WorkerSocketsDir, "pt-"+hex.EncodeToString(sum[:6])+".sock")
}

// HopSocket is where the second server block of a shared shape (its hop
// server) listens: the catch-all and wildcard servers hand it requests
// for hosts of that shape added since the last reload (render/hop.go).
// shape is the shape's 12 hex digits; only nginx's workers connect.
func (d Dir) HopSocket(shape string) string {
	return d.Path(WorkerSocketsDir, "hop-"+shape+".sock")
}

// MetricsLog is where nginx's workers write a line per counted request
// and the controller reads them (package metrics). nginx's master opens
// it, so it stays in the directory only the controller's user reaches.
func (d Dir) MetricsLog() string { return d.Path(RunDir, "metrics.log") }

// SpanLog is where nginx's workers write a line per sampled traced
// request and the controller reads them (package tracing); like the
// metrics log, nginx's master opens it.
func (d Dir) SpanLog() string { return d.Path(RunDir, "spans.log") }

// DynamicState holds the last full endpoint state pushed to nginx; the Lua
// side loads it at start so a restarted nginx never serves empty backends.
func (d Dir) DynamicState() string { return d.Path(RunDir, "dynamic-state.json") }
func (d Dir) PidFile() string      { return d.Path(RunDir, "nginx.pid") }
func (d Dir) TempDir() string      { return d.Path(TempDir) }
func (d Dir) LuaDir() string       { return d.Path(LuaDir) }
func (d Dir) DefaultCert() string  { return d.Path(SecretsDir, "_default.pem") }
