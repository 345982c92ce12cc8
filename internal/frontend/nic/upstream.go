package nic

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// This file translates a VirtualServer's (or VirtualServerRoute's)
// upstreams onto the values the ingress-nginx annotations produce for the
// same things: proxy settings into model.Policy (proxy-next-upstream,
// proxy-buffers-number, ...), the load-balancing method and cookie
// affinity into model.Balance, use-cluster-ip into service-upstream's
// cluster-IP backend. A bad value drops that setting only, with a Problem.

// Upstream is one spec.upstreams entry.
type Upstream struct {
	Name    string
	Service string
	Port    int32
	// Policy holds the upstream's proxy settings (timeouts, retries,
	// buffering, body size); nil when none is set.
	Policy *model.Policy
	// Balance, when set, is how the upstream spreads requests over the
	// Service's endpoints (lb-method, or sessionCookie's cookie affinity);
	// nil keeps the backend's own (the Service's or the ConfigMap's).
	Balance *model.Balance
	// ClusterIP proxies to the Service's cluster IP and port instead of
	// its endpoints (use-cluster-ip).
	ClusterIP bool
	// Subselector, when set, keeps only the endpoints of the Service's
	// Pods whose labels include it (validated label keys and values).
	Subselector map[string]string
	// Limits, when set, are the backend's peer limits (max-fails,
	// fail-timeout, max-conns); nil keeps the backend's own.
	Limits *model.PeerLimits
	// Keepalive, when set, sizes the backend's own pool of idle
	// connections (keepalive); nil keeps the ConfigMap's.
	Keepalive *model.Keepalive
}

// Bounds of the upstream's sizes and buffers, as the buffering
// annotations have them: nginx needs two buffers at least.
const (
	minUpstreamBuffers = 2
	maxUpstreamBuffers = 64
	maxUpstreamBuffer  = 1 << 30
)

func (t *translator) upstream(i int, u *nicv1.Upstream) (*Upstream, error) {
	field := fmt.Sprintf("spec.upstreams[%d]", i)
	if errs := validation.IsDNS1035Label(u.Name); len(errs) > 0 {
		return nil, fmt.Errorf("%s.name %q: %s", field, model.Truncate(u.Name), strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1035Label(u.Service); len(errs) > 0 {
		return nil, fmt.Errorf("%s.service %q: %s", field, model.Truncate(u.Service), strings.Join(errs, "; "))
	}
	if u.Port == 0 {
		return nil, fmt.Errorf("%s.port is required", field)
	}
	out := &Upstream{Name: u.Name, Service: u.Service, Port: int32(u.Port), ClusterIP: u.UseClusterIP}
	field += " (" + u.Name + ")"
	if len(u.Subselector) > 0 {
		// As NGINX Ingress Controller, a bad label rejects the
		// VirtualServer: dropping the subselector would send the
		// upstream's traffic to every Pod of the Service.
		if err := validateSubselector(u.Subselector); err != nil {
			return nil, fmt.Errorf("%s.subselector: %w", field, err)
		}
		out.Subselector = maps.Clone(u.Subselector)
	}
	pol, err := t.upstreamPolicy(field, u)
	if err != nil {
		return nil, err
	}
	if !reflect.DeepEqual(pol, model.Policy{}) {
		out.Policy = &pol
	}
	out.Balance = t.balance(field, u)
	out.Limits = t.peerLimits(field, u)
	out.Keepalive = t.keepalive(field, u)
	for _, f := range []struct {
		name string
		set  bool
	}{{"healthCheck", u.HealthCheck != nil}, {"slow-start", u.SlowStart != ""}, {"queue", u.Queue != nil}, {"ntlm", u.NTLM},
		// NIC renders the backup server in its NGINX Plus template only.
		{"backup and backupPort", u.Backup != "" || u.BackupPort != nil}} {
		if f.set {
			t.plus(field + "." + f.name)
		}
	}
	return out, nil
}

// keepalive reads an upstream's keepalive: 0 to model.MaxKeepalive idle
// connections per worker. A TLS upstream's connections are never pooled
// (render's tlsUpstream says why), so a pool for one is reported.
func (t *translator) keepalive(field string, u *nicv1.Upstream) *model.Keepalive {
	if u.Keepalive == nil {
		return nil
	}
	k := model.Keepalive{Set: true, Idle: *u.Keepalive}
	if err := k.Validate(); err != nil {
		t.invalid(field+".keepalive", fmt.Sprint(*u.Keepalive), fmt.Errorf("want 0 to %d", model.MaxKeepalive))
		return nil
	}
	if k.Idle > 0 && u.TLS.Enable {
		t.unsupported(field+".keepalive", "connections to TLS upstreams are never pooled: each carries the client "+
			"certificate and verification of the location that opened it")
		return nil
	}
	return &k
}

// validateSubselector checks label keys and values as Kubernetes does,
// in the order of the keys.
func validateSubselector(sel map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(sel)) {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("label key %q: %s", model.Truncate(k), strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(sel[k]); len(errs) > 0 {
			return fmt.Errorf("label %s value %q: %s", k, model.Truncate(sel[k]), strings.Join(errs, "; "))
		}
	}
	return nil
}

// invalid reports a bad value whose setting is dropped.
func (t *translator) invalid(field, v string, err error) {
	t.problems = append(t.problems, model.Problem{Object: t.ref, Reason: model.ReasonInvalid,
		Message: fmt.Sprintf("%s %q: %v; the default is used", field, model.Truncate(v), err)})
}

// upstreamPolicy reads the proxy settings of every route passing to the
// upstream, starting from the ConfigMap's defaults (t.defaults): a field
// the upstream sets replaces its default alone. Only an unknown type
// rejects the VirtualServer, as in NGINX Ingress Controller.
func (t *translator) upstreamPolicy(field string, u *nicv1.Upstream) (model.Policy, error) {
	pol := t.defaults
	duration := func(name, v string, parse func(string) (time.Duration, error), dst *time.Duration) {
		if v == "" {
			return
		}
		d, err := parse(v)
		if err != nil {
			t.invalid(field+"."+name, v, err)
			return
		}
		*dst = d
	}
	size := func(name, v string, lo, hi int64) *model.Size {
		if v == "" {
			return nil
		}
		n, err := model.ParseSize(v)
		if err == nil && (n < lo || (hi > 0 && n > hi)) {
			err = fmt.Errorf("want a size from %s to %s", model.FormatSize(lo), model.FormatSize(hi))
			if hi <= 0 {
				err = fmt.Errorf("want a size of at least %s", model.FormatSize(lo))
			}
		}
		if err != nil {
			t.invalid(field+"."+name, v, err)
			return nil
		}
		s := model.Size(n)
		return &s
	}
	duration("connect-timeout", u.ConnectTimeout, model.ParseTimeout, &pol.Timeouts.Connect)
	duration("read-timeout", u.ReadTimeout, model.ParseTimeout, &pol.Timeouts.Read)
	duration("send-timeout", u.SendTimeout, model.ParseTimeout, &pol.Timeouts.Send)
	pol.Buffering.BodySize = size("client-max-body-size", u.ClientMaxBodySize, 0, 0)
	if s := size("client-body-buffer-size", u.ClientBodyBufferSize, 1, maxUpstreamBuffer); s != nil {
		pol.Buffering.ClientBodyBuffer = s
	}
	if u.Buffering != nil {
		b := *u.Buffering
		pol.Buffering.Response = &b
	}
	t.buffers(field, u, &pol.Buffering, size)
	if u.NextUpstreamTries > 0 {
		pol.Retry.Tries = u.NextUpstreamTries
	}
	if v := u.NextUpstream; v != "" {
		on, err := model.ParseNextUpstream(v)
		if err != nil {
			t.invalid(field+".next-upstream", v, err)
		} else {
			pol.Retry.On = on
		}
	}
	duration("next-upstream-timeout", u.NextUpstreamTimeout, model.ParseSeconds, &pol.Retry.Timeout)
	t.dropUnfit(field, &pol.Buffering)
	switch u.Type {
	case "", "http":
	case "grpc":
		pol.Protocol = model.ProtocolGRPC
	default:
		return pol, fmt.Errorf("%s.type %q: want http or grpc", field, model.Truncate(u.Type))
	}
	if u.TLS.Enable {
		if pol.Protocol == model.ProtocolGRPC {
			pol.Protocol = model.ProtocolGRPCS
		} else {
			pol.Protocol = model.ProtocolHTTPS
		}
	}
	return pol, nil
}

// dropUnfit reports and removes the ConfigMap's busy buffers size or
// largest temporary file when the upstream's own buffers no longer fit
// them (model.Buffering.DropUnfit).
func (t *translator) dropUnfit(field string, b *model.Buffering) {
	for _, what := range b.DropUnfit() {
		t.unsupported(field, fmt.Sprintf("the ConfigMap's %s does not fit the upstream's buffers; nginx's default applies to its routes instead", what))
	}
}

// buffers reads buffers and buffer-size. The model has one size for
// proxy_buffer_size and each of proxy_buffers' buffers (as the annotations
// proxy-buffer-size and proxy-buffers-number): buffer-size, else
// buffers.size, sets both; a buffers.size that differs from buffer-size
// is reported. What the upstream does not set keeps the ConfigMap's.
func (t *translator) buffers(field string, u *nicv1.Upstream, b *model.Buffering,
	size func(name, v string, lo, hi int64) *model.Size) {
	own := size("buffer-size", u.BufferSize, 1, maxUpstreamBuffer)
	if bs := u.Buffers; bs != nil {
		own = t.bufferCount(field, bs, own, b, size)
	}
	if own != nil {
		b.BufferSize = own
	}
	t.busyBuffers(field, u.BusyBuffersSize, b, size)
}

// bufferCount reads buffers' number and size, and returns the upstream's
// buffer size: own (buffer-size), else buffers.size.
func (t *translator) bufferCount(field string, bs *nicv1.UpstreamBuffers, own *model.Size, b *model.Buffering,
	size func(name, v string, lo, hi int64) *model.Size) *model.Size {
	if bs.Number < minUpstreamBuffers || bs.Number > maxUpstreamBuffers {
		t.invalid(field+".buffers.number", fmt.Sprint(bs.Number),
			fmt.Errorf("want %d to %d buffers", minUpstreamBuffers, maxUpstreamBuffers))
	} else {
		b.Buffers = bs.Number
	}
	each := size("buffers.size", bs.Size, 1, maxUpstreamBuffer)
	switch {
	case each == nil:
	case own == nil:
		return each
	case *own != *each:
		t.unsupported(field+".buffers.size", fmt.Sprintf("each buffer has buffer-size's size, %s (one size for both, as proxy-buffer-size)",
			model.FormatSize(int64(*own))))
	}
	return own
}

// busyBuffers reads busy-buffers-size, which must fit the upstream's
// buffers (or the defaults) as nginx requires.
func (t *translator) busyBuffers(field, v string, b *model.Buffering,
	size func(name, v string, lo, hi int64) *model.Size) {
	busy := size("busy-buffers-size", v, 1, maxUpstreamBuffer)
	if busy == nil {
		return
	}
	each := model.Size(0)
	if b.BufferSize != nil {
		each = *b.BufferSize
	}
	if err := model.BusyBuffersFit(*busy, b.Buffers, each); err != nil {
		t.invalid(field+".busy-buffers-size", v, err)
		return
	}
	b.BusyBuffers = busy
}

// NGINX Ingress Controller's defaults of max-fails and fail-timeout
// (its ConfigMap's max-fails and fail-timeout).
const (
	defaultUpstreamMaxFails    = 1
	defaultUpstreamFailTimeout = 10 * time.Second
)

// peerLimits reads max-fails, fail-timeout and max-conns; nil when none is
// set. Passive health checks are on only when max-fails or fail-timeout
// is set (the other then takes NGINX Ingress Controller's default): a
// backend is a Service port that Ingresses may share, and ingress-nginx
// never takes an endpoint out. A fail-timeout of 0 turns them off (nginx
// would take an endpoint out for no time). A bad value drops the
// setting, with a Problem.
func (t *translator) peerLimits(field string, u *nicv1.Upstream) *model.PeerLimits {
	return peerLimits(u.MaxFails, u.FailTimeout, u.MaxConns, func(name, v string, err error) {
		t.invalid(field+"."+name, v, err)
	})
}

// PeerLimitProblem is a max-fails or fail-timeout that cannot be used.
type PeerLimitProblem struct {
	Name, Value string
	Err         error
}

// ParsePeerLimits reads max-fails and fail-timeout as NGINX Ingress
// Controller's Ingress annotations write them ("" when not set), with a
// VirtualServer upstream's rules.
func ParsePeerLimits(maxFails, failTimeout string) (*model.PeerLimits, []PeerLimitProblem) {
	var problems []PeerLimitProblem
	bad := func(name, v string, err error) { problems = append(problems, PeerLimitProblem{name, v, err}) }
	var fails *int
	if maxFails != "" {
		n, err := strconv.Atoi(maxFails)
		if err != nil {
			bad("max-fails", maxFails, fmt.Errorf("want 0 to %d", model.MaxPeerFails))
		} else {
			fails = &n
		}
	}
	if fails == nil && failTimeout == "" {
		return nil, problems
	}
	return peerLimits(fails, failTimeout, nil, bad), problems
}

// peerLimits reads max-fails, fail-timeout and max-conns; bad reports a
// value that is dropped.
func peerLimits(maxFails *int, failTimeout string, maxConns *int, bad func(name, v string, err error)) *model.PeerLimits {
	if maxFails == nil && failTimeout == "" && maxConns == nil {
		return nil
	}
	var l model.PeerLimits
	count := func(name string, v *int, hi int) int {
		if v == nil {
			return -1
		}
		if *v < 0 || *v > hi {
			bad(name, fmt.Sprint(*v), fmt.Errorf("want 0 to %d", hi))
			return -1
		}
		return *v
	}
	if maxFails != nil || failTimeout != "" {
		l.MaxFails, l.FailTimeout = defaultUpstreamMaxFails, defaultUpstreamFailTimeout
		if n := count("max-fails", maxFails, model.MaxPeerFails); n >= 0 {
			l.MaxFails = n
		}
		if v := failTimeout; v != "" {
			d, err := model.ParseSeconds(v)
			if err == nil && (d > model.MaxPeerFailTimeout || d%time.Second != 0) {
				err = fmt.Errorf("want whole seconds (nginx's fail_timeout has no finer unit) up to %v", model.MaxPeerFailTimeout)
			}
			switch {
			case err != nil:
				bad("fail-timeout", v, err)
			case d == 0:
				l.MaxFails = 0
			default:
				l.FailTimeout = d
			}
		}
		if l.MaxFails == 0 {
			l.FailTimeout = 0
		}
	}
	if n := count("max-conns", maxConns, model.MaxPeerConns); n >= 0 {
		l.MaxConns = n
	}
	if l == (model.PeerLimits{}) {
		return nil
	}
	return &l
}

// balance reads lb-method and sessionCookie. Cookie affinity (Causeway's
// sticky method, ingress-nginx's affinity: cookie) replaces the method.
func (t *translator) balance(field string, u *nicv1.Upstream) *model.Balance {
	var out *model.Balance
	if v := u.LBMethod; v != "" {
		b, err := ParseLBMethod(v)
		switch {
		case errors.Is(err, errPlusMethod):
			t.plus(field + ".lb-method " + v)
		case err != nil:
			t.invalid(field+".lb-method", v, err)
		default:
			out = &b
		}
	}
	c := u.SessionCookie
	if c == nil || !c.Enable {
		if c != nil {
			t.unsupported(field+".sessionCookie", "enable is false")
		}
		return out
	}
	sticky, err := t.sessionCookie(field+".sessionCookie", c)
	if err != nil {
		t.invalid(field+".sessionCookie", c.Name, err)
		return out
	}
	if out != nil {
		t.unsupported(field+".lb-method", "sessionCookie's cookie affinity chooses the endpoint")
	}
	return &model.Balance{Method: model.Sticky, Sticky: sticky}
}

// ParseLBMethod maps NGINX Ingress Controller's lb-method onto the Lua
// balancer's methods: round_robin, least_conn, "random two" and "random
// two least_conn" (two random endpoints compared by in-flight requests:
// p2c), ip_hash and "hash KEY [consistent]" (consistent hashing on the
// client address or the key). random alone has no equivalent.
func ParseLBMethod(v string) (model.Balance, error) {
	switch v {
	case "round_robin":
		return model.Balance{Method: model.RoundRobin}, nil
	case "least_conn":
		return model.Balance{Method: model.LeastConn}, nil
	case "random two", "random two least_conn":
		return model.Balance{Method: model.P2C}, nil
	case "ip_hash":
		return model.Balance{Method: model.CHash, HashKey: "$binary_remote_addr"}, nil
	case "random":
		return model.Balance{}, errors.New(`random (one endpoint at random) is not supported by Causeway; use "random two"`)
	}
	if f := strings.Fields(v); len(f) >= 2 && len(f) <= 3 && f[0] == "hash" && (len(f) == 2 || f[2] == "consistent") {
		if err := model.ValidateHashKey(f[1]); err != nil {
			return model.Balance{}, err
		}
		return model.Balance{Method: model.CHash, HashKey: f[1]}, nil
	}
	if strings.HasPrefix(v, "least_time") || strings.HasPrefix(v, "random two least_time") {
		return model.Balance{}, errPlusMethod
	}
	return model.Balance{}, errors.New(`want round_robin, least_conn, ip_hash, "random two", "random two least_conn" or "hash KEY [consistent]"`)
}

// sessionCookie maps sessionCookie onto the affinity cookie: name, path,
// expires (a duration, or max for the longest), samesite and secure.
// domain and httpOnly have no equivalent and are reported.
func (t *translator) sessionCookie(field string, c *nicv1.SessionCookie) (*model.StickyCookie, error) {
	if c.Name == "" {
		return nil, errors.New("name is required")
	}
	s := &model.StickyCookie{Name: c.Name, Path: c.Path, Secure: c.Secure}
	switch c.Expires {
	case "":
	case "max":
		s.MaxAge = model.MaxCookieAge
	default:
		n, err := cookieSeconds(c.Expires)
		if err != nil {
			return nil, fmt.Errorf("expires %q: %v", model.Truncate(c.Expires), err)
		}
		s.MaxAge = n
	}
	switch strings.ToLower(c.SameSite) {
	case "":
	case "strict":
		s.SameSite = "Strict"
	case "lax":
		s.SameSite = "Lax"
	case "none":
		s.SameSite = "None"
	default:
		return nil, fmt.Errorf("samesite %q: want strict, lax or none", model.Truncate(c.SameSite))
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if c.Domain != "" {
		t.unsupported(field+".domain", "the affinity cookie is set for the request's host")
	}
	if c.HTTPOnly {
		t.unsupported(field+".httpOnly", "the affinity cookie has no HttpOnly attribute")
	}
	return s, nil
}

// cookieSeconds reads a cookie lifetime: 1 to 9 digits and one unit s,
// m, h or d, at most model.MaxCookieAge seconds.
func cookieSeconds(v string) (int, error) {
	units := map[byte]int{'s': 1, 'm': 60, 'h': 3600, 'd': 86400}
	want := errors.New("want a duration such as 30m, 12h or 7d, or max")
	if len(v) < 2 || len(v) > 10 || units[v[len(v)-1]] == 0 {
		return 0, want
	}
	n, err := strconv.Atoi(v[:len(v)-1])
	if err != nil || n < 1 || strings.Trim(v[:len(v)-1], "0123456789") != "" {
		return 0, want
	}
	if n > model.MaxCookieAge/units[v[len(v)-1]] {
		return 0, fmt.Errorf("want at most %d seconds", model.MaxCookieAge)
	}
	return n * units[v[len(v)-1]], nil
}
