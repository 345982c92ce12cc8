package render

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
)

// streamView feeds stream.conf.tmpl: one TransportServer's upstream and
// server, every value already in nginx's syntax.
type streamView struct {
	Source   string
	Upstream string
	// Method is the balancing directive, "" for round robin.
	Method  string
	Servers []string
	// Empty says that the Service has no ready endpoint.
	Empty          bool
	Listen         []string
	UDP            bool
	ConnectTimeout string
	Timeout        string
	NextUpstream   bool
	NextTimeout    string
	NextTries      int
	Requests       *int
	Responses      *int
	// AcceptProxy and SendProxy are the PROXY protocol on the listener
	// and towards the upstream.
	AcceptProxy, SendProxy bool
	// RealIPFrom are the peers whose PROXY header gives $remote_addr
	// (the passthrough proxy's unix socket).
	RealIPFrom []string
	// Cert is the quoted path of the PEM bundle (certificate and key)
	// with which the listener terminates TLS; "" for none. CertDigest
	// changes with the bundle's bytes: the stream module reads it only
	// at a reload, so a renewed certificate must change this file.
	Cert, CertDigest string
}

// streamFiles renders one file per stream server, and the objects behind
// each. Endpoints are written into the files: nginx's stream module has
// no Lua balancer here, so an endpoint change is a file change and a
// reload.
func streamFiles(m *model.Model, p Params) (Files, map[string][]model.ObjectRef, error) {
	files := Files{}
	sources := map[string][]model.ObjectRef{}
	for _, s := range m.Streams {
		v, err := newStreamView(s, p)
		if err == nil && s.TLS != nil {
			err = streamTLS(v, m, s.TLS.Secret, p)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("stream listener %s: %w", s.Listener, err)
		}
		name := layout.StreamFile(s.Listener)
		if files[name], err = execute("stream.conf.tmpl", v); err != nil {
			return nil, nil, err
		}
		sources[name] = []model.ObjectRef{s.Source}
	}
	if err := passthroughFiles(m, p, files, sources); err != nil {
		return nil, nil, err
	}
	if err := sniFiles(m, p, files, sources); err != nil {
		return nil, nil, err
	}
	return files, sources, nil
}

// streamTLS sets the certificate of a TLS-terminating stream listener.
func streamTLS(v *streamView, m *model.Model, key string, p Params) error {
	if v.UDP {
		return fmt.Errorf("TLS on a UDP listener")
	}
	for _, s := range m.Secrets {
		if s.Key() != key {
			continue
		}
		cert, _, err := certDirectives(p.StateDir, key, certAtReload, false)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(s.PEM)
		v.Cert, v.CertDigest = cert, hex.EncodeToString(sum[:8])
		return nil
	}
	return fmt.Errorf("TLS secret %q is not in the model", key)
}

// streamName is a listener's upstream name: listener names are DNS
// labels, checked again here because the name is printed bare.
func streamName(listener string) (string, error) {
	if listener == "" || len(listener) > 63 {
		return "", fmt.Errorf("listener name %q is empty or too long", listener)
	}
	for _, r := range listener {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return "", fmt.Errorf("listener name %q has a character outside [a-z0-9-]", listener)
		}
	}
	return "ts_" + listener, nil
}

// maxStreamWeight bounds an upstream server's weight (the model's
// split weights' bound).
const maxStreamWeight = model.MaxSplitWeight

func newStreamView(s *model.StreamServer, p Params) (*streamView, error) {
	name, err := streamName(s.Listener)
	if err != nil {
		return nil, err
	}
	v := &streamView{Source: s.Source.String(), Upstream: name, UDP: s.Protocol == model.StreamUDP,
		ConnectTimeout: model.FormatDuration(s.Proxy.ConnectTimeout), Timeout: model.FormatDuration(s.Proxy.Timeout),
		NextUpstream: s.Proxy.NextUpstream, NextTimeout: model.FormatDuration(s.Proxy.NextUpstreamTimeout),
		NextTries: s.Proxy.NextUpstreamTries, Requests: s.Proxy.UDPRequests, Responses: s.Proxy.UDPResponses,
		AcceptProxy: s.Proxy.AcceptProxyProtocol, SendProxy: s.Proxy.SendProxyProtocol}
	if v.UDP && (v.AcceptProxy || v.SendProxy) {
		return nil, fmt.Errorf("the PROXY protocol is for TCP listeners")
	}
	switch s.Protocol {
	case model.StreamTCP, model.StreamUDP:
	default:
		return nil, fmt.Errorf("protocol %q", s.Protocol)
	}
	if s.Proxy.ConnectTimeout <= 0 || s.Proxy.Timeout <= 0 || s.Proxy.NextUpstreamTimeout < 0 || s.Proxy.NextUpstreamTries < 0 {
		return nil, fmt.Errorf("timeouts must be positive and tries not negative")
	}
	if v.Listen, err = listenerAddrs(s.IPv4, s.IPv6, s.Port, p); err != nil {
		return nil, err
	}
	b := s.Upstream.Balance
	switch b.Method {
	case model.StreamRoundRobin, "":
	case model.StreamLeastConn, model.StreamRandom, model.StreamRandomTwo, model.StreamRandomTwoLeastConn:
		v.Method = string(b.Method)
	case model.StreamHash:
		key := b.HashKey
		if key != model.StreamRemoteAddr {
			if _, err := model.ParseStreamHashKey(key); err != nil {
				return nil, fmt.Errorf("hash key: %w", err)
			}
			if key, err = Quote(key); err != nil {
				return nil, err
			}
		}
		v.Method = "hash " + key
		if b.Consistent {
			v.Method += " consistent"
		}
	default:
		return nil, fmt.Errorf("balancing method %q", b.Method)
	}
	u := s.Upstream
	if u.MaxFails < 0 || u.MaxConns < 0 || u.FailTimeout < 0 {
		return nil, fmt.Errorf("upstream settings must not be negative")
	}
	params := " max_fails=" + strconv.Itoa(u.MaxFails) + " fail_timeout=" + model.FormatDuration(u.FailTimeout) +
		" max_conns=" + strconv.Itoa(u.MaxConns)
	if len(s.Weights) > 0 && len(s.Weights) != len(s.Endpoints) {
		return nil, fmt.Errorf("%d weights for %d endpoints", len(s.Weights), len(s.Endpoints))
	}
	for i, e := range s.Endpoints {
		addr, err := listen(e.Address, int(e.Port))
		if err != nil {
			return nil, fmt.Errorf("endpoint: %w", err)
		}
		w := ""
		if len(s.Weights) > 0 {
			if s.Weights[i] < 1 || s.Weights[i] > maxStreamWeight {
				return nil, fmt.Errorf("endpoint weight %d: want 1 to %d", s.Weights[i], maxStreamWeight)
			}
			w = " weight=" + strconv.Itoa(s.Weights[i])
		}
		v.Servers = append(v.Servers, addr+params+w)
	}
	if len(v.Servers) == 0 {
		// nginx refuses an upstream without servers: list a socket that
		// never exists, so every connection fails and is closed.
		sock, err := quotedPathBody(p.StateDir.NoEndpointsSocket())
		if err != nil {
			return nil, err
		}
		v.Servers, v.Empty = []string{"unix:" + sock}, true
	}
	return v, nil
}

// StreamInclude is the stream block's include of every stream file.
func (v *mainView) StreamInclude() (string, error) {
	if !v.streams {
		return "", nil
	}
	return Quote(filepath.Join(v.dir.Path(layout.ServersDir), layout.StreamGlob))
}
