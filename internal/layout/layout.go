// Package layout names the files and sockets under the controller's state
// directory. Render (which writes paths into nginx.conf) and runtime (which
// writes the files) share it so they can never disagree.
package layout

import (
	"path/filepath"
	"strings"
)

// Dir is the state directory, e.g. /var/lib/causeway.
type Dir string

// Path joins elements under the state directory.
func (d Dir) Path(elem ...string) string {
	return filepath.Join(append([]string{string(d)}, elem...)...)
}

// Relative paths of the generated files, relative to the state directory.
const (
	MainConf      = "nginx.conf"
	ServersDir    = "servers"
	SecretsDir    = "secrets"
	UpstreamsConf = "upstreams.conf"
)

// ServerFile is the relative path of one server's config. Hosts reach here
// only after model validation (lower-case DNS names, optionally "*."), so
// the name is file-system safe; the catch-all server is "_default".
func ServerFile(host string) string {
	name := "_default"
	if host != "" {
		name = strings.Replace(host, "*", "_wildcard", 1)
	}
	return filepath.Join(ServersDir, name+".conf")
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

// Fixed runtime paths.
func (d Dir) MainConf() string      { return d.Path(MainConf) }
func (d Dir) StatusSocket() string  { return d.Path("run", "status.sock") }
func (d Dir) DynamicSocket() string { return d.Path("run", "dynamic.sock") }

// UnavailableSocket is where nginx answers 503 for backends without a
// ready endpoint (dynamic mode).
func (d Dir) UnavailableSocket() string { return d.Path("run", "unavailable.sock") }

// DynamicState holds the last full endpoint state pushed to nginx; the Lua
// side loads it at start so a restarted nginx never serves empty backends.
func (d Dir) DynamicState() string { return d.Path("run", "dynamic-state.json") }
func (d Dir) PidFile() string      { return d.Path("run", "nginx.pid") }
func (d Dir) TempDir() string      { return d.Path("tmp") }
func (d Dir) LuaDir() string       { return d.Path("lua") }
func (d Dir) DefaultCert() string  { return d.Path(SecretsDir, "_default.pem") }
