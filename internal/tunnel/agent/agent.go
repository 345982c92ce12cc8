// Package agent is the edge side of the tunnel. It dials out to the server
// address with mutual TLS, registers what it can reach, keeps one link to
// every server replica behind that address, and dials the destinations the
// servers ask for, when its allow list permits them.
package agent

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/causeway/causeway/internal/tunnel/metrics"
	"github.com/causeway/causeway/internal/tunnel/wire"
)

// Config configures an Agent.
type Config struct {
	// ServerAddress is host:port of the server replicas (usually a load
	// balancer in front of them).
	ServerAddress string
	TLS           *tls.Config
	NodeName      string
	NodeIPs       []netip.Addr
	CIDRs         []netip.Prefix
	HostNames     []string
	DefaultRoute  bool
	// Allow lists the prefixes the agent will dial; empty means its node
	// IPs and CIDRs.
	Allow []netip.Prefix
	// Compression lists the modes the agent accepts; empty means all.
	Compression []wire.Compression
	Transport   wire.TransportConfig
	// MinBackoff and MaxBackoff bound the jittered exponential delay
	// between connection attempts.
	MinBackoff, MaxBackoff time.Duration
	// DialTimeout caps a dial of a destination (the server may ask less).
	DialTimeout time.Duration
	// DrainTimeout bounds how long shutdown waits for open connections.
	DrainTimeout time.Duration
	// Dial dials destinations; nil means a net.Dialer. Tests replace it.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Resolve looks host names up; nil means the system resolver.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	Logger  *slog.Logger
	Metrics *metrics.Metrics
}

// Agent keeps links to every server replica and serves their dials.
type Agent struct {
	cfg        Config
	log        *slog.Logger
	instanceID string
	allow      []netip.Prefix

	mu    sync.Mutex
	links map[string]*wire.Session // by server ID
	ctrl  map[*wire.Session]*ctrlStream
	want  int // server count last reported
	// changed gets a token when a link ends or the count changes.
	changed chan struct{}

	draining atomic.Bool
	active   sync.WaitGroup
	nActive  atomic.Int64
}

// New validates cfg and returns an Agent.
func New(cfg Config) (*Agent, error) {
	if cfg.ServerAddress == "" || cfg.TLS == nil || cfg.NodeName == "" {
		return nil, errors.New("server address, TLS config and node name are required")
	}
	if len(cfg.Compression) == 0 {
		cfg.Compression = wire.AllCompressions
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = 100 * time.Millisecond
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(cfg.MinBackoff, time.Second)
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = 30 * time.Second
	}
	if cfg.Dial == nil {
		d := &net.Dialer{}
		cfg.Dial = d.DialContext
	}
	if cfg.Resolve == nil {
		cfg.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	a := &Agent{cfg: cfg, log: cfg.Logger.With("node", cfg.NodeName), links: map[string]*wire.Session{},
		ctrl: map[*wire.Session]*ctrlStream{},
		want: 1, changed: make(chan struct{}, 1), allow: cfg.Allow}
	if len(a.allow) == 0 {
		for _, ip := range cfg.NodeIPs {
			a.allow = append(a.allow, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
		}
		a.allow = append(a.allow, cfg.CIDRs...)
	}
	var b [8]byte
	rand.Read(b[:])
	a.instanceID = hex.EncodeToString(b[:])
	// Refuse at start what every server would refuse at registration.
	h := a.hello()
	if err := h.CheckLimits(); err != nil {
		return nil, fmt.Errorf("registration: %w", err)
	}
	if err := h.CheckSize(); err != nil {
		return nil, fmt.Errorf("registration: %w", err)
	}
	return a, nil
}

// hello is the registration sent on every new link.
func (a *Agent) hello() wire.Hello {
	return wire.Hello{
		Version: wire.ProtocolVersion, NodeName: a.cfg.NodeName, InstanceID: a.instanceID,
		NodeIPs: a.cfg.NodeIPs, CIDRs: a.cfg.CIDRs, HostNames: a.cfg.HostNames,
		DefaultRoute: a.cfg.DefaultRoute, Draining: a.draining.Load(), Compression: a.cfg.Compression,
	}
}

// ServerIDs returns the IDs of the replicas the agent holds links to.
func (a *Agent) ServerIDs() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]string, 0, len(a.links))
	for id := range a.links {
		ids = append(ids, id)
	}
	return ids
}

// Ready reports whether the agent holds a link to every replica, each one
// confirmed routed by its server.
func (a *Agent) Ready() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, sess := range a.links {
		if cs := a.ctrl[sess]; cs != nil && cs.routed.Load() {
			n++
		}
	}
	return n >= a.want && n > 0
}

// Run keeps links up until ctx ends, then drains: it announces the drain,
// waits for open connections (up to DrainTimeout) and closes the links.
func (a *Agent) Run(ctx context.Context) error {
	attempt := 0
	for {
		a.mu.Lock()
		need := len(a.links) < a.want
		a.mu.Unlock()
		if !need {
			select {
			case <-ctx.Done():
				return a.shutdown()
			case <-a.changed:
				continue
			}
		}
		err := a.connect(ctx)
		if err == nil {
			attempt = 0
			continue
		}
		if ctx.Err() != nil {
			return a.shutdown()
		}
		if !errors.Is(err, errDuplicate) {
			a.log.Warn("connect to server failed", "server", a.cfg.ServerAddress, "err", err)
		}
		delay := backoff(a.cfg.MinBackoff, a.cfg.MaxBackoff, attempt)
		attempt++
		select {
		case <-ctx.Done():
			return a.shutdown()
		case <-time.After(delay):
		}
	}
}

// backoff is exponential with "equal jitter": half fixed, half random, so
// agents restarted together do not reconnect in lockstep.
func backoff(minD, maxD time.Duration, attempt int) time.Duration {
	d := minD << min(attempt, 20)
	if d > maxD || d <= 0 {
		d = maxD
	}
	return d/2 + mrand.N(d/2+1)
}

// Drain announces to every server that this agent takes no new
// connections. It is idempotent.
func (a *Agent) Drain() {
	if a.draining.Swap(true) {
		return
	}
	a.log.Info("draining", "active", a.nActive.Load())
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, cs := range a.ctrl {
		cs.send(wire.Control{Type: wire.ControlDrain})
	}
}

func (a *Agent) shutdown() error {
	a.Drain()
	done := make(chan struct{})
	go func() { a.active.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(a.cfg.DrainTimeout):
		a.log.Warn("drain timeout; closing open connections", "active", a.nActive.Load())
	}
	a.mu.Lock()
	for _, s := range a.links {
		s.Close()
	}
	a.mu.Unlock()
	return nil
}

var errDuplicate = errors.New("duplicate link to a server already held")

// ctrlStream is a link's control stream; writes come from Drain and from
// the handshake, so they are serialized.
type ctrlStream struct {
	mu      sync.Mutex
	s       *wire.Stream
	streams wire.StreamSet
	// routed is set once the server routes to the link (ControlRouted,
	// or at once from a server that does not acknowledge).
	routed atomic.Bool
}

func (cs *ctrlStream) send(c wire.Control) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return wire.WriteFrame(cs.s, c)
}

// connect makes one link: TLS, session, Hello, Welcome, and either Ready
// (a new server ID) or close (a duplicate).
func (a *Agent) connect(ctx context.Context) error {
	hsTimeout := a.cfg.Transport.KeepAliveInterval + a.cfg.Transport.KeepAliveTimeout
	if hsTimeout <= 0 {
		hsTimeout = 10 * time.Second
	}
	dctx, cancel := context.WithTimeout(ctx, hsTimeout)
	defer cancel()
	raw, err := (&net.Dialer{KeepAlive: hsTimeout}).DialContext(dctx, "tcp", a.cfg.ServerAddress)
	if err != nil {
		return fmt.Errorf("dial %s: %w", a.cfg.ServerAddress, err)
	}
	host, _, _ := net.SplitHostPort(a.cfg.ServerAddress)
	conn := wire.ClientLink(raw, a.cfg.TLS, host)
	if err := conn.HandshakeContext(dctx); err != nil {
		raw.Close()
		return fmt.Errorf("dial %s: %w", a.cfg.ServerAddress, err)
	}
	sess, err := wire.NewAgentSession(conn, a.cfg.Transport)
	if err != nil {
		conn.Close()
		return err
	}
	ctrl, welcome, err := a.handshake(sess, time.Now().Add(hsTimeout))
	if err != nil {
		sess.Close()
		return err
	}
	a.mu.Lock()
	if _, dup := a.links[welcome.ServerID]; dup {
		a.updateWant(welcome.ServerCount)
		a.mu.Unlock()
		sess.Close()
		return fmt.Errorf("server %s: %w", welcome.ServerID, errDuplicate)
	}
	cs := &ctrlStream{s: ctrl}
	cs.routed.Store(!welcome.Acks)
	if err := cs.send(wire.Control{Type: wire.ControlReady}); err != nil {
		a.mu.Unlock()
		sess.Close()
		return fmt.Errorf("commit link: %w", err)
	}
	a.links[welcome.ServerID] = sess
	a.ctrl[sess] = cs
	if a.draining.Load() {
		// Drain ran after Hello was sent but before this link was listed.
		cs.send(wire.Control{Type: wire.ControlDrain})
	}
	a.updateWant(welcome.ServerCount)
	n := len(a.links)
	a.mu.Unlock()
	ctrl.SetDeadline(time.Time{})
	a.log.Info("connected to server", "serverID", welcome.ServerID, "serverCount", welcome.ServerCount, "links", n)
	if a.cfg.Metrics != nil {
		a.cfg.Metrics.Links.WithLabelValues().Set(float64(n))
	}
	go a.serveLink(welcome.ServerID, sess, cs)
	return nil
}

func (a *Agent) handshake(sess *wire.Session, deadline time.Time) (*wire.Stream, wire.Welcome, error) {
	var w wire.Welcome
	ctrl, err := sess.OpenStream()
	if err != nil {
		return nil, w, err
	}
	ctrl.SetDeadline(deadline)
	if err := wire.WriteFrame(ctrl, a.hello()); err != nil {
		return nil, w, fmt.Errorf("send hello: %w", err)
	}
	if err := wire.ReadFrame(ctrl, &w); err != nil {
		return nil, w, fmt.Errorf("read welcome: %w", err)
	}
	if w.Error != "" {
		return nil, w, fmt.Errorf("server %s refused registration: %s", w.ServerID, w.Error)
	}
	if w.ServerID == "" || w.ServerCount < 1 {
		return nil, w, fmt.Errorf("invalid welcome %+v", w)
	}
	return ctrl, w, nil
}

// updateWant records the replica count a server reported; callers hold mu.
func (a *Agent) updateWant(n int) {
	if n >= 1 && n != a.want {
		a.log.Info("server count changed", "from", a.want, "to", n)
		a.want = n
		a.signal()
	}
}

func (a *Agent) signal() {
	select {
	case a.changed <- struct{}{}:
	default:
	}
}

// serveLink accepts dial streams and reads control messages until the
// link ends, then forgets it so Run dials a replacement.
func (a *Agent) serveLink(serverID string, sess *wire.Session, cs *ctrlStream) {
	go func() {
		for {
			var c wire.Control
			if err := wire.ReadFrame(cs.s, &c); err != nil {
				return
			}
			switch c.Type {
			case wire.ControlServerCount:
				a.mu.Lock()
				a.updateWant(c.ServerCount)
				a.mu.Unlock()
			case wire.ControlReset:
				cs.streams.Abort(c.StreamID)
			case wire.ControlRouted:
				cs.routed.Store(true)
			}
		}
	}()
	for {
		st, err := sess.AcceptStream()
		if err != nil {
			break
		}
		a.active.Add(1)
		go func() {
			defer a.active.Done()
			a.serveDial(st, cs)
		}()
	}
	a.mu.Lock()
	if a.links[serverID] == sess {
		delete(a.links, serverID)
	}
	delete(a.ctrl, sess)
	n := len(a.links)
	a.mu.Unlock()
	if a.cfg.Metrics != nil {
		a.cfg.Metrics.Links.WithLabelValues().Set(float64(n))
	}
	a.log.Info("link to server closed", "serverID", serverID, "links", n)
	a.signal()
}
