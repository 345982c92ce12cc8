package render

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
)

// SNI listeners (model.SNIListener): a stream server reads the TLS server
// name (ssl_preread) and proxies the connection, still encrypted, to the
// upstream its route names through a map (or, terminating TLS, takes the
// server name of its own handshake and proxies the decrypted stream); names no route has go to an
// upstream that never connects. Unlike the HTTPS port's passthrough
// (passthrough.go) there is no fallback to the http servers, so no inner
// hop.

// sniView feeds sni.stream.tmpl.
type sniView struct {
	Source                  string
	Listen                  []string
	AcceptProxy             bool
	Trusted                 []string
	Variable, Closed        string
	NoEndpoints             string
	ConnectTimeout, Timeout string
	Routes                  []sniRouteView
	// Cert is the quoted certificate bundle the terminated routes are
	// served with (model.SNIListener.TLS), ""
	// when every connection passes through encrypted; CertDigest changes
	// with its bytes, which the stream module reads only at a reload.
	Cert, CertDigest string
	// MapSource is the server name the port's map reads: the handshake's
	// own when the port terminates every route ($ssl_server_name, and
	// the port listens with ssl), else the preread one.
	MapSource string
	ListenSSL bool
	// Entries are the port map's: each route's key and upstream, or a
	// terminated route's key and the Inner upstream when the port
	// terminates some routes and passes others.
	Entries []sniEntryView
	// Inner, when set, is the server behind the port that terminates TLS
	// for the terminated routes, on a unix socket.
	Inner *sniInnerView
	// Default is the upstream of server names no route has, and of none:
	// the default route's (model.SNIListener.Default), else Closed.
	Default string
}

type sniEntryView struct{ Key, Upstream string }

// sniInnerView is the terminating server behind a port of both modes.
type sniInnerView struct {
	Socket, Upstream, Variable, Default string
	Entries                             []sniEntryView
}

type sniRouteView struct {
	Key, Upstream, Method string
	Servers               []string
	Empty                 bool
}

// sniConnectTimeout and sniTimeout bound the connection to a backend and
// its idle time, as a TransportServer's defaults do.
const (
	sniConnectTimeout = time.Minute
	sniTimeout        = 10 * time.Minute
)

// sniFiles adds a stream file per SNI listener.
func sniFiles(m *model.Model, p Params, files Files, sources map[string][]model.ObjectRef) error {
	for _, l := range m.SNIListeners {
		b, refs, err := sniFile(m, l, p)
		if err != nil {
			return fmt.Errorf("TLS listener %s: %w", l.Name, err)
		}
		name := layout.StreamFile("_sni-" + l.Name)
		files[name] = b
		sources[name] = refs
	}
	return nil
}

func sniFile(m *model.Model, l *model.SNIListener, p Params) ([]byte, []model.ObjectRef, error) {
	id, err := streamName(l.Name)
	if err != nil {
		return nil, nil, err
	}
	// Variable and upstream names: the listener's name, "-" made "_".
	id = strings.ReplaceAll(id[len("ts_"):], "-", "_")
	v := &sniView{Source: "Gateway listener port " + strconv.Itoa(l.Port), Variable: "$causeway_sni_" + id,
		Closed: "causeway_sni_closed_" + id, ConnectTimeout: model.FormatDuration(sniConnectTimeout),
		Timeout: model.FormatDuration(sniTimeout), AcceptProxy: m.Config.RealIP.UseProxyProtocol}
	if v.NoEndpoints, err = quotedPathBody(p.StateDir.NoEndpointsSocket()); err != nil {
		return nil, nil, err
	}
	if v.Listen, err = listenerAddrs(netip.Addr{}, netip.Addr{}, l.Port, p); err != nil {
		return nil, nil, err
	}
	if v.AcceptProxy {
		for _, c := range m.Config.RealIP.TrustedCIDRs {
			s, err := realIPCIDR(c)
			if err != nil {
				return nil, nil, err
			}
			v.Trusted = append(v.Trusted, s)
		}
	}
	if l.TLS != nil {
		var sv streamView
		if err := streamTLS(&sv, m, l.TLS.Secret, p); err != nil {
			return nil, nil, err
		}
		v.Cert, v.CertDigest = sv.Cert, sv.CertDigest
	}
	var refs []model.ObjectRef
	terminated, passed := 0, 0
	all := l.Routes
	if l.Default != nil {
		all = append(slices.Clone(all), l.Default)
	}
	for _, r := range all {
		if r.Terminate {
			terminated++
		} else {
			passed++
		}
	}
	if terminated > 0 && l.TLS == nil {
		return nil, nil, fmt.Errorf("routes terminate TLS without a certificate")
	}
	v.MapSource = "$ssl_preread_server_name"
	if terminated > 0 && passed == 0 {
		v.MapSource, v.ListenSSL = "$ssl_server_name", true
	} else if terminated > 0 {
		sock, err := quotedPathBody(p.StateDir.SNITerminateSocket(id))
		if err != nil {
			return nil, nil, err
		}
		v.Inner = &sniInnerView{Socket: sock, Upstream: "causeway_sni_terminate_" + id, Variable: "$causeway_sni_terminated_" + id, Default: v.Closed}
	}
	v.Default = v.Closed
	for i, r := range all {
		isDefault := r == l.Default
		key := ""
		if !isDefault {
			var err error
			if key, err = sniKey(r.Host); err != nil {
				return nil, nil, err
			}
		}
		// newStreamView checks the settings and writes the endpoints.
		sv, err := newStreamView(&model.StreamServer{Listener: l.Name, Port: l.Port, Protocol: model.StreamTCP,
			Endpoints: r.Endpoints, Upstream: r.Upstream, Proxy: r.Proxy, Source: r.Source}, p)
		if err != nil {
			return nil, nil, fmt.Errorf("host %s: %w", r.Host, err)
		}
		up := "causeway_sni_" + id + "_" + strconv.Itoa(i)
		if isDefault {
			up = "causeway_sni_" + id + "_default"
		}
		v.Routes = append(v.Routes, sniRouteView{Key: key, Upstream: up, Method: sv.Method, Servers: sv.Servers, Empty: sv.Empty})
		switch {
		case isDefault && r.Terminate && v.Inner != nil:
			v.Default, v.Inner.Default = v.Inner.Upstream, up
		case isDefault:
			v.Default = up
		case r.Terminate && v.Inner != nil:
			v.Entries = append(v.Entries, sniEntryView{Key: key, Upstream: v.Inner.Upstream})
			v.Inner.Entries = append(v.Inner.Entries, sniEntryView{Key: key, Upstream: up})
		default:
			v.Entries = append(v.Entries, sniEntryView{Key: key, Upstream: up})
		}
		refs = append(refs, r.Source)
	}
	b, err := execute("sni.stream.tmpl", v)
	if err != nil {
		return nil, nil, err
	}
	return b, model.SortRefs(refs), nil
}

// sniKey is a host's key in a map with hostnames: the name quoted, a
// wildcard as nginx's own "*.suffix", which matches any depth and loses to
// longer ones.
func sniKey(host string) (string, error) {
	if host == "" {
		return "", fmt.Errorf("a server name is required")
	}
	if _, err := hostMatch(host, "~*"); err != nil {
		return "", err
	}
	return Quote(host)
}
