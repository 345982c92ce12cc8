// Package server is the cloud side of the tunnel. It accepts agents on a
// mutual-TLS port, keeps a routing table of what each agent can reach, and
// forwards connections from its frontends (HTTP CONNECT, Konnectivity gRPC,
// transparent DNAT listener) to the right agent. It never dials a
// destination itself.
package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/causeway/causeway/internal/tunnel/metrics"
	"github.com/causeway/causeway/internal/tunnel/route"
	"github.com/causeway/causeway/internal/tunnel/wire"
)

// Config configures a Server.
type Config struct {
	// ServerID identifies this replica to agents; ServerCount is how many
	// replicas share the agent address.
	ServerID    string
	ServerCount int
	// TLS serves the agent port; it must require client certificates.
	TLS *tls.Config
	// Authorizer checks each registration; nil means Policy{}: the
	// certificate's node name and SANs only, no CIDRs, no default route.
	Authorizer Authorizer
	Transport  wire.TransportConfig
	// DialTimeout bounds an agent's dial of a destination.
	DialTimeout time.Duration
	// HandshakeTimeout bounds TLS plus registration of a new agent.
	HandshakeTimeout time.Duration
	Logger           *slog.Logger
	Metrics          *metrics.Metrics
}

// Server is one tunnel server replica.
type Server struct {
	cfg   Config
	log   *slog.Logger
	authz Authorizer

	mu     sync.Mutex
	links  map[string]*link
	nextID uint64
	table  atomic.Pointer[route.Table]
	// conflicts are the node-IP claims the last table ignored, so that
	// each is logged and counted once, when it appears.
	conflicts map[conflictKey]bool
	// changed gets a token whenever the table changes; the iptables
	// manager waits on it.
	changed chan struct{}
}

// link is one registered agent session.
type link struct {
	id       string
	hello    wire.Hello
	sess     *wire.Session
	draining atomic.Bool
	ctrlMu   sync.Mutex
	ctrl     *wire.Stream
	streams  wire.StreamSet
}

// send writes a control message to the agent.
func (l *link) send(c wire.Control) error {
	l.ctrlMu.Lock()
	defer l.ctrlMu.Unlock()
	return wire.WriteFrame(l.ctrl, c)
}

// New validates cfg and returns a Server.
func New(cfg Config) (*Server, error) {
	if cfg.ServerID == "" {
		return nil, errors.New("server ID is required")
	}
	if cfg.ServerCount < 1 {
		return nil, fmt.Errorf("server count %d: must be at least 1", cfg.ServerCount)
	}
	if cfg.TLS == nil || cfg.TLS.ClientAuth != tls.RequireAndVerifyClientCert {
		return nil, errors.New("agent TLS config must require and verify client certificates")
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: cfg.Logger.With("serverID", cfg.ServerID), authz: cfg.Authorizer,
		links: map[string]*link{}, changed: make(chan struct{}, 1)}
	if s.authz == nil {
		s.authz = Policy{}
	}
	s.table.Store(route.NewTable(nil))
	return s, nil
}

// Table returns the current routing snapshot.
func (s *Server) Table() *route.Table { return s.table.Load() }

// Changed receives a token after the routing table changed.
func (s *Server) Changed() <-chan struct{} { return s.changed }

// AgentCount is the number of registered agent links.
func (s *Server) AgentCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.links)
}

// ServeAgents accepts agent connections on ln until ctx ends.
func (s *Server) ServeAgents(ctx context.Context, ln net.Listener) error {
	go func() { <-ctx.Done(); ln.Close() }()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				s.closeAll()
				return nil
			}
			return fmt.Errorf("accept agent: %w", err)
		}
		go s.handleAgent(ctx, c)
	}
}

func (s *Server) closeAll() {
	s.mu.Lock()
	links := make([]*link, 0, len(s.links))
	for _, l := range s.links {
		links = append(links, l)
	}
	s.mu.Unlock()
	for _, l := range links {
		l.sess.Close()
	}
}

// handleAgent runs one agent link from TLS handshake to disconnect.
func (s *Server) handleAgent(ctx context.Context, raw net.Conn) {
	log := s.log.With("remote", raw.RemoteAddr().String())
	if tc, ok := raw.(*net.TCPConn); ok {
		tc.SetKeepAlive(true)
		tc.SetKeepAlivePeriod(s.cfg.Transport.KeepAliveInterval + time.Second)
	}
	deadline := time.Now().Add(s.cfg.HandshakeTimeout)
	tconn := wire.ServerLink(raw, s.cfg.TLS)
	tconn.SetDeadline(deadline)
	if err := tconn.HandshakeContext(ctx); err != nil {
		log.Warn("agent TLS handshake failed", "err", err)
		raw.Close()
		return
	}
	tconn.SetDeadline(time.Time{})
	peer := tconn.ConnectionState().PeerCertificates[0]
	log = log.With("cert", peer.Subject.CommonName)

	sess, err := wire.NewServerSession(tconn, s.cfg.Transport)
	if err != nil {
		log.Error("start session", "err", err)
		tconn.Close()
		return
	}
	defer sess.Close()
	l, node, err := s.register(ctx, sess, peer, deadline, log)
	if err != nil {
		log.Warn("agent registration refused", "node", node, "reason", err)
		return
	}
	log = log.With("node", l.hello.NodeName, "link", l.id)
	log.Info("agent registered", "nodeIPs", l.hello.NodeIPs, "cidrs", l.hello.CIDRs,
		"defaultRoute", l.hello.DefaultRoute, "draining", l.hello.Draining)
	s.readControl(l, log)
	s.remove(l)
	log.Info("agent disconnected")
}

// register runs the handshake: Hello, authorization, Welcome, then waits
// for the agent to commit the link with Ready (it closes duplicates). It
// returns the node name the agent claimed, if it got that far.
func (s *Server) register(ctx context.Context, sess *wire.Session, peer *x509.Certificate, deadline time.Time, log *slog.Logger) (*link, string, error) {
	ctrl, err := acceptWithDeadline(sess, deadline)
	if err != nil {
		return nil, "", err
	}
	ctrl.SetDeadline(deadline)
	count := s.serverCount()
	refuse := func(err error) error {
		wire.WriteFrame(ctrl, wire.Welcome{ServerID: s.cfg.ServerID, ServerCount: count, Error: err.Error()})
		return err
	}
	var hello wire.Hello
	if err := wire.ReadFrame(ctrl, &hello); err != nil {
		if errors.Is(err, wire.ErrFrameTooLarge) {
			// Tell the agent; the frame's body is never read, so an
			// oversized hello costs no memory.
			return nil, "", refuse(fmt.Errorf("hello exceeds the limit of %d bytes: %w", wire.MaxHelloSize, err))
		}
		return nil, "", fmt.Errorf("read hello: %w", err)
	}
	if err := s.authorize(ctx, peer, &hello); err != nil {
		return nil, hello.NodeName, refuse(err)
	}
	if err := wire.WriteFrame(ctrl, wire.Welcome{ServerID: s.cfg.ServerID, ServerCount: count, Acks: true}); err != nil {
		return nil, hello.NodeName, fmt.Errorf("send welcome: %w", err)
	}
	var c wire.Control
	if err := wire.ReadFrame(ctrl, &c); err != nil {
		// The agent already holds a link to this server ID and dropped
		// this one; that is routine behind a load balancer.
		log.Debug("agent did not commit link", "node", hello.NodeName, "err", err)
		return nil, hello.NodeName, errors.New("the agent dropped the link before committing (duplicate server ID)")
	}
	if c.Type != wire.ControlReady {
		return nil, hello.NodeName, fmt.Errorf("expected ready, got %q", c.Type)
	}
	ctrl.SetDeadline(time.Time{})
	l := &link{hello: hello, sess: sess, ctrl: ctrl}
	l.draining.Store(hello.Draining)
	s.mu.Lock()
	s.nextID++
	l.id = hello.NodeName + "/" + strconv.FormatUint(s.nextID, 10)
	s.links[l.id] = l
	now := s.cfg.ServerCount
	s.mu.Unlock()
	if now != count {
		// SetServerCount ran after Welcome but before the link was listed.
		l.send(wire.Control{Type: wire.ControlServerCount, ServerCount: now})
	}
	s.rebuild()
	// Only now can a connection be routed to the agent: tell it, so that
	// it reports ready no earlier.
	l.send(wire.Control{Type: wire.ControlRouted})
	return l, hello.NodeName, nil
}

// serverCount is the replica count currently reported to agents.
func (s *Server) serverCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.ServerCount
}

func (s *Server) authorize(ctx context.Context, peer *x509.Certificate, hello *wire.Hello) error {
	if hello.Version != wire.ProtocolVersion {
		return fmt.Errorf("protocol version %d not supported (want %d)", hello.Version, wire.ProtocolVersion)
	}
	// Limits hold whatever the authorizer: they bound the server's tables.
	if err := hello.CheckLimits(); err != nil {
		return err
	}
	return s.authz.Authorize(ctx, peer, hello)
}

func acceptWithDeadline(sess *wire.Session, deadline time.Time) (*wire.Stream, error) {
	type result struct {
		st  *wire.Stream
		err error
	}
	ch := make(chan result, 1)
	go func() {
		st, err := sess.AcceptStream()
		ch <- result{st, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("accept control stream: %w", r.err)
		}
		return r.st, nil
	case <-time.After(time.Until(deadline)):
		sess.Close()
		return nil, errors.New("accept control stream: timed out")
	}
}

// readControl handles control messages until the link ends.
func (s *Server) readControl(l *link, log *slog.Logger) {
	for {
		var c wire.Control
		if err := wire.ReadFrame(l.ctrl, &c); err != nil {
			return
		}
		switch c.Type {
		case wire.ControlReset:
			l.streams.Abort(c.StreamID)
		case wire.ControlDrain:
			if !l.draining.Swap(true) {
				log.Info("agent draining")
				s.rebuild()
			}
		default:
			log.Debug("ignoring control message", "type", c.Type)
		}
	}
}

// SetServerCount changes the replica count reported to agents and tells
// every connected agent, so they dial new replicas promptly.
func (s *Server) SetServerCount(n int) {
	if n < 1 {
		n = 1 // this replica, at least
	}
	s.mu.Lock()
	s.cfg.ServerCount = n
	links := make([]*link, 0, len(s.links))
	for _, l := range s.links {
		links = append(links, l)
	}
	s.mu.Unlock()
	for _, l := range links {
		l.send(wire.Control{Type: wire.ControlServerCount, ServerCount: n})
	}
}

func (s *Server) remove(l *link) {
	s.mu.Lock()
	delete(s.links, l.id)
	s.mu.Unlock()
	s.rebuild()
}

// logConflicts logs new conflicts, one line per link and CIDR, so an
// agent listing a whole network does not flood the log.
func (s *Server) logConflicts(cs []route.Conflict) {
	type group struct {
		c   route.Conflict
		ips []netip.Addr
	}
	var groups []*group
	idx := map[string]*group{}
	for _, c := range cs {
		k := c.Agent + " " + c.Prefix.String()
		g := idx[k]
		if g == nil {
			g = &group{c: c}
			idx[k] = g
			groups = append(groups, g)
		}
		g.ips = append(g.ips, c.IP)
	}
	for _, g := range groups {
		shown := g.ips[:min(len(g.ips), 8)]
		s.log.Warn("node IP claims ignored: another agent's CIDR owns the addresses", "node", g.c.Node, "link", g.c.Agent,
			"cidr", g.c.Prefix, "cidrOwners", g.c.Owners, "count", len(g.ips), "nodeIPs", shown)
	}
}

type conflictKey struct {
	link string
	ip   netip.Addr
}

// rebuild makes a new routing table from the live links.
func (s *Server) rebuild() {
	s.mu.Lock()
	agents := make([]route.Agent, 0, len(s.links))
	for _, l := range s.links {
		agents = append(agents, route.Agent{
			ID: l.id, Node: l.hello.NodeName, NodeIPs: l.hello.NodeIPs, CIDRs: l.hello.CIDRs,
			HostNames: l.hello.HostNames, DefaultRoute: l.hello.DefaultRoute, Draining: l.draining.Load(),
		})
	}
	t := route.NewTable(agents)
	s.table.Store(t)
	n := len(s.links)
	var fresh []route.Conflict
	now := map[conflictKey]bool{}
	for _, c := range t.Conflicts() {
		k := conflictKey{c.Agent, c.IP}
		now[k] = true
		if !s.conflicts[k] {
			fresh = append(fresh, c)
		}
	}
	s.conflicts = now
	s.mu.Unlock()
	s.logConflicts(fresh)
	if s.cfg.Metrics != nil && s.cfg.Metrics.RouteConflicts != nil {
		s.cfg.Metrics.RouteConflicts.Add(float64(len(fresh)))
	}
	if s.cfg.Metrics != nil {
		s.cfg.Metrics.Links.WithLabelValues(s.cfg.ServerID).Set(float64(n))
	}
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *Server) link(id string) *link {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.links[id]
}

// Destinations lists the node IPs and CIDRs agents registered; with
// Changed it is the source of the iptables manager.
func (s *Server) Destinations() ([]netip.Addr, []netip.Prefix) {
	t := s.Table()
	return t.Destinations(), t.Prefixes()
}
