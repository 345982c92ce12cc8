package nic

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// TransportServer is one TransportServer in the model's terms: the
// listener it asks for and the one upstream its action passes to.
type TransportServer struct {
	Ref       model.ObjectRef
	Namespace string
	// Listener is the GlobalConfiguration listener's name, Protocol the
	// protocol the TransportServer expects it to have.
	Listener string
	Protocol model.StreamProtocol
	// Upstream is the upstream action.pass names.
	Upstream TransportUpstream
	Proxy    model.StreamProxy
	// TLSSecret, when set, is the name of the kubernetes.io/tls Secret
	// (in the namespace) with which the listener terminates TLS.
	TLSSecret string
	// Passthrough says that the TransportServer uses the built-in
	// tls-passthrough listener: TLS connections whose server name is Host
	// go, still encrypted, to the upstream (Listener is then
	// nicv1.TLSPassthroughListenerName and Protocol TCP).
	Passthrough bool
	Host        string
}

// TransportUpstream is the Service an upstream names and its settings.
type TransportUpstream struct {
	Name     string
	Service  string
	Port     int32
	Settings model.StreamUpstream
}

// NGINX Ingress Controller's defaults, which it writes out explicitly.
const (
	defaultStreamConnectTimeout = 60 * time.Second
	defaultStreamTimeout        = 10 * time.Minute
	defaultStreamMaxFails       = 1
	defaultStreamFailTimeout    = 10 * time.Second
)

// TSRef names a TransportServer.
func TSRef(ts *nicv1.TransportServer) model.ObjectRef {
	return model.ObjectRef{Kind: "TransportServer", Namespace: ts.Namespace, Name: ts.Name, UID: string(ts.UID)}
}

// TranslateTransportServer checks a TransportServer. An error rejects it
// as a whole (NGINX Ingress Controller's Invalid, or a field Causeway
// cannot honour without changing what the connections get); Problems
// report what is left out.
func TranslateTransportServer(ts *nicv1.TransportServer) (*TransportServer, []model.Problem, error) {
	t := &translator{ref: TSRef(ts)}
	s := &ts.Spec
	out := &TransportServer{Ref: t.ref, Namespace: ts.Namespace}
	l := s.Listener
	switch {
	case l.Name == "" || l.Protocol == "":
		return nil, nil, errors.New("spec.listener.name and spec.listener.protocol are required")
	case IsPassthroughListener(l):
		if err := passthroughListener(s, out); err != nil {
			return nil, nil, err
		}
	default:
		if err := streamListener(s, out); err != nil {
			return nil, nil, err
		}
	}
	if s.TLS != nil && s.TLS.Secret != "" {
		if out.Protocol != model.StreamTCP {
			return nil, nil, errors.New("spec.tls: TLS is terminated on TCP listeners only")
		}
		if errs := validation.IsDNS1123Subdomain(s.TLS.Secret); len(errs) > 0 {
			return nil, nil, fmt.Errorf("spec.tls.secret %q: %s", model.Truncate(s.TLS.Secret), strings.Join(errs, "; "))
		}
		out.TLSSecret = s.TLS.Secret
	}
	if s.ServerSnippets != "" || s.StreamSnippets != "" {
		t.unsupported("spec.serverSnippets and spec.streamSnippets", "raw nginx configuration is refused")
	}
	if s.Action == nil || s.Action.Pass == "" {
		return nil, nil, errors.New("spec.action.pass is required")
	}
	var found bool
	names := map[string]bool{}
	for i := range s.Upstreams {
		u, err := t.transportUpstream(i, &s.Upstreams[i])
		if err != nil {
			return nil, nil, err
		}
		if names[u.Name] {
			return nil, nil, fmt.Errorf("spec.upstreams[%d].name %q is used by another upstream", i, u.Name)
		}
		names[u.Name] = true
		if u.Name == s.Action.Pass {
			out.Upstream, found = *u, true
		}
	}
	if !found {
		return nil, nil, fmt.Errorf("spec.action.pass %q names no upstream of spec.upstreams", model.Truncate(s.Action.Pass))
	}
	var err error
	if out.Proxy, err = streamProxy(s, out.Protocol); err != nil {
		return nil, nil, err
	}
	return out, t.problems, nil
}

// IsPassthroughListener reports whether a TransportServer asks for the
// built-in tls-passthrough listener, by its name or its protocol.
func IsPassthroughListener(l nicv1.TransportServerListener) bool {
	return l.Name == nicv1.TLSPassthroughListenerName || l.Protocol == nicv1.TLSPassthroughListenerProtocol
}

// passthroughListener checks the tls-passthrough listener as NGINX Ingress
// Controller does: its name and protocol go together, a host is
// required (a DNS name or a "*." wildcard) and TLS is not terminated.
func passthroughListener(s *nicv1.TransportServerSpec, out *TransportServer) error {
	l := s.Listener
	switch {
	case l.Name != nicv1.TLSPassthroughListenerName:
		return fmt.Errorf("spec.listener.name %q: must be %s for the protocol %s", model.Truncate(l.Name), nicv1.TLSPassthroughListenerName, nicv1.TLSPassthroughListenerProtocol)
	case l.Protocol != nicv1.TLSPassthroughListenerProtocol:
		return fmt.Errorf("spec.listener.protocol %q: must be %s for the built-in %s listener", model.Truncate(l.Protocol), nicv1.TLSPassthroughListenerProtocol, nicv1.TLSPassthroughListenerName)
	case s.Host == "":
		return errors.New("spec.host is required on the tls-passthrough listener: it is the TLS server name passed through")
	case s.TLS != nil && s.TLS.Secret != "":
		return errors.New("spec.tls: a tls-passthrough TransportServer does not terminate TLS; remove spec.tls.secret")
	}
	if err := model.ValidateHost(s.Host); err != nil {
		return fmt.Errorf("spec.host: %w", err)
	}
	out.Listener, out.Protocol, out.Passthrough, out.Host = l.Name, model.StreamTCP, true, s.Host
	return nil
}

// streamListener checks a GlobalConfiguration listener's name and
// protocol; a host is a server name that only the tls-passthrough
// listener reads.
func streamListener(s *nicv1.TransportServerSpec, out *TransportServer) error {
	l := s.Listener
	if errs := validation.IsDNS1035Label(l.Name); len(errs) > 0 {
		return fmt.Errorf("spec.listener.name %q: %s", model.Truncate(l.Name), strings.Join(errs, "; "))
	}
	switch p := model.StreamProtocol(l.Protocol); p {
	case model.StreamTCP, model.StreamUDP:
		out.Listener, out.Protocol = l.Name, p
	default:
		return fmt.Errorf("spec.listener.protocol %q: want TCP, UDP or %s", model.Truncate(l.Protocol), nicv1.TLSPassthroughListenerProtocol)
	}
	if s.Host != "" {
		return errors.New("spec.host: a server name is read on the tls-passthrough listener only; TLS termination by host on a TCP listener is not supported by Causeway yet")
	}
	return nil
}

// streamTime parses one of a TransportServer's times; "" is def.
// NGINX Ingress Controller accepts 0 where it means "no limit".
func streamTime(field, v string, def time.Duration, zero bool) (time.Duration, error) {
	if v == "" {
		return def, nil
	}
	parse := model.ParseTimeout
	if zero {
		parse = model.ParseSeconds
	}
	d, err := parse(v)
	if err != nil {
		return 0, fmt.Errorf("%s %q: %w", field, model.Truncate(v), err)
	}
	return d, nil
}

func nonNegative(field string, v *int) (int, error) {
	if v == nil {
		return 0, nil
	}
	if *v < 0 {
		return 0, fmt.Errorf("%s %d: want 0 or more", field, *v)
	}
	return *v, nil
}

func streamProxy(s *nicv1.TransportServerSpec, proto model.StreamProtocol) (model.StreamProxy, error) {
	p := model.StreamProxy{ConnectTimeout: defaultStreamConnectTimeout, Timeout: defaultStreamTimeout}
	var err error
	if sp := s.SessionParameters; sp != nil {
		if p.Timeout, err = streamTime("spec.sessionParameters.timeout", sp.Timeout, defaultStreamTimeout, false); err != nil {
			return p, err
		}
	}
	up := s.UpstreamParameters
	if up == nil {
		return p, nil
	}
	if p.ConnectTimeout, err = streamTime("spec.upstreamParameters.connectTimeout", up.ConnectTimeout, defaultStreamConnectTimeout, false); err != nil {
		return p, err
	}
	p.NextUpstream = up.NextUpstream
	if p.NextUpstreamTimeout, err = streamTime("spec.upstreamParameters.nextUpstreamTimeout", up.NextUpstreamTimeout, 0, true); err != nil {
		return p, err
	}
	if up.NextUpstreamTries < 0 {
		return p, fmt.Errorf("spec.upstreamParameters.nextUpstreamTries %d: want 0 or more", up.NextUpstreamTries)
	}
	p.NextUpstreamTries = up.NextUpstreamTries
	for _, f := range []struct {
		name string
		in   *int
		out  **int
	}{{"udpRequests", up.UDPRequests, &p.UDPRequests}, {"udpResponses", up.UDPResponses, &p.UDPResponses}} {
		if f.in == nil {
			continue
		}
		if proto != model.StreamUDP {
			return p, fmt.Errorf("spec.upstreamParameters.%s is only allowed on a UDP listener", f.name)
		}
		n, err := nonNegative("spec.upstreamParameters."+f.name, f.in)
		if err != nil {
			return p, err
		}
		*f.out = &n
	}
	return p, nil
}

func (t *translator) transportUpstream(i int, u *nicv1.TransportServerUpstream) (*TransportUpstream, error) {
	field := fmt.Sprintf("spec.upstreams[%d]", i)
	if errs := validation.IsDNS1035Label(u.Name); len(errs) > 0 {
		return nil, fmt.Errorf("%s.name %q: %s", field, model.Truncate(u.Name), strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1035Label(u.Service); len(errs) > 0 {
		return nil, fmt.Errorf("%s.service %q: %s", field, model.Truncate(u.Service), strings.Join(errs, "; "))
	}
	if u.Port < 1 || u.Port > 65535 {
		return nil, fmt.Errorf("%s.port %d: want 1 to 65535", field, u.Port)
	}
	out := &TransportUpstream{Name: u.Name, Service: u.Service, Port: int32(u.Port)}
	field += " (" + u.Name + ")"
	st := &out.Settings
	st.MaxFails = defaultStreamMaxFails
	var err error
	if u.MaxFails != nil {
		if st.MaxFails, err = nonNegative(field+".maxFails", u.MaxFails); err != nil {
			return nil, err
		}
	}
	if st.MaxConns, err = nonNegative(field+".maxConns", u.MaxConns); err != nil {
		return nil, err
	}
	if st.FailTimeout, err = streamTime(field+".failTimeout", u.FailTimeout, defaultStreamFailTimeout, true); err != nil {
		return nil, err
	}
	if st.Balance, err = streamBalance(u.LoadBalancingMethod); errors.Is(err, errPlusMethod) {
		t.unsupported(field+".loadBalancingMethod "+u.LoadBalancingMethod, "needs NGINX Plus; round_robin is used")
		st.Balance = model.StreamBalance{Method: model.StreamRoundRobin}
	} else if err != nil {
		return nil, fmt.Errorf("%s.loadBalancingMethod %q: %w", field, model.Truncate(u.LoadBalancingMethod), err)
	}
	if u.HealthCheck != nil && u.HealthCheck.Enable {
		t.plus(field + ".healthCheck")
	}
	if u.Backup != "" || u.BackupPort != nil {
		t.plus(field + ".backup and backupPort")
	}
	return out, nil
}

var errPlusMethod = errors.New("needs NGINX Plus")

// streamBalance parses loadBalancingMethod as NGINX Ingress Controller
// does for open-source nginx: round_robin (the default), least_conn,
// random, "random two", "random two least_conn", or "hash KEY
// [consistent]".
func streamBalance(v string) (model.StreamBalance, error) {
	v = strings.TrimSpace(v)
	switch m := model.StreamMethod(v); m {
	case "", model.StreamRoundRobin:
		return model.StreamBalance{Method: model.StreamRoundRobin}, nil
	case model.StreamLeastConn, model.StreamRandom, model.StreamRandomTwo, model.StreamRandomTwoLeastConn:
		return model.StreamBalance{Method: m}, nil
	}
	f := strings.Fields(v)
	if len(f) < 2 || len(f) > 3 || f[0] != string(model.StreamHash) || len(f) == 3 && f[2] != "consistent" {
		if strings.HasPrefix(v, "least_time") || strings.HasPrefix(v, "random least_conn") {
			return model.StreamBalance{}, errPlusMethod
		}
		return model.StreamBalance{}, errors.New(`want round_robin, least_conn, random, "random two", "random two least_conn" or "hash KEY [consistent]"`)
	}
	key, err := model.ParseStreamHashKey(f[1])
	if err != nil {
		return model.StreamBalance{}, fmt.Errorf("hash key: %w", err)
	}
	return model.StreamBalance{Method: model.StreamHash, HashKey: key, Consistent: len(f) == 3}, nil
}
