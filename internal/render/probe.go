package render

import (
	"fmt"
	"path/filepath"
	"strconv"
)

// ProbeCheck is what a probe configuration asks nginx -t to accept.
type ProbeCheck int

const (
	// ProbeLoad: the modules load (an http block with nothing in it).
	ProbeLoad ProbeCheck = iota
	// ProbeStream: a stream block, from a loaded or compiled-in module.
	ProbeStream
	// ProbeStreamRealIP: the stream module's realip (set_real_ip_from).
	ProbeStreamRealIP
	// ProbeGunzip: the gunzip filter (gunzip on).
	ProbeGunzip
	// ProbeLua: what the Lua data plane needs (LuaPackagePath).
	ProbeLua
	// ProbeCertificates: each of Certificates loads as a server's
	// certificate and key.
	ProbeCertificates
)

// Probe is a throw-away configuration: the runtime writes it to Dir and
// runs nginx -t on it to learn what the binary can do, or whether a
// certificate loads, without touching the real configuration.
type Probe struct {
	// Dir is the probe's own absolute directory, where its pid file and
	// sockets are named (nginx -t creates neither).
	Dir string
	// Modules are the dynamic modules to load, in order.
	Modules []string
	Check   ProbeCheck
	// LuaPackagePath is lua_package_path for ProbeLua: a value
	// ParseLuaPackagePath accepts ("" is LuaJIT's default path).
	LuaPackagePath string
	// Certificates are the files (certificate and key in one) that
	// ProbeCertificates loads.
	Certificates []string
}

// probeView feeds probe.conf.tmpl; every string is quoted.
type probeView struct {
	Modules              []string
	PidFile              string
	Stream, StreamRealIP bool
	Gunzip               bool
	Lua                  *probeLuaView
	Certificates         []probeCertView
}

type probeLuaView struct{ PackagePath, Socket string }

type probeCertView struct{ Socket, File string }

// ProbeConfig prints p's configuration.
func ProbeConfig(p Probe) ([]byte, error) {
	if !filepath.IsAbs(p.Dir) {
		return nil, fmt.Errorf("probe directory %q is not absolute", p.Dir)
	}
	v := probeView{Stream: p.Check == ProbeStream || p.Check == ProbeStreamRealIP, StreamRealIP: p.Check == ProbeStreamRealIP,
		Gunzip: p.Check == ProbeGunzip}
	var err error
	if v.PidFile, err = Quote(filepath.Join(p.Dir, "nginx.pid")); err != nil {
		return nil, err
	}
	for _, m := range p.Modules {
		q, err := Quote(m)
		if err != nil {
			return nil, fmt.Errorf("module path: %w", err)
		}
		v.Modules = append(v.Modules, q)
	}
	socket := func(name string) (string, error) { return Quote("unix:" + filepath.Join(p.Dir, name)) }
	switch p.Check {
	case ProbeLua:
		path, err := ParseLuaPackagePath(p.LuaPackagePath)
		if err != nil {
			return nil, fmt.Errorf("lua package path: %w", err)
		}
		v.Lua = &probeLuaView{}
		if v.Lua.PackagePath, err = Quote(path); err != nil {
			return nil, err
		}
		if v.Lua.Socket, err = socket("probe.sock"); err != nil {
			return nil, err
		}
	case ProbeCertificates:
		for i, f := range p.Certificates {
			var c probeCertView
			if c.File, err = Quote(f); err != nil {
				return nil, fmt.Errorf("certificate: %w", err)
			}
			if c.Socket, err = socket(strconv.Itoa(i) + ".sock"); err != nil {
				return nil, err
			}
			v.Certificates = append(v.Certificates, c)
		}
	}
	return execute("probe.conf.tmpl", &v)
}
