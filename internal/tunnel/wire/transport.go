package wire

import (
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/yamux"
)

// TransportConfig tunes the multiplexed link between an agent and a server.
type TransportConfig struct {
	// KeepAliveInterval is how often each side pings the other.
	KeepAliveInterval time.Duration
	// KeepAliveTimeout is how long a ping (or any frame write) may take
	// before the link is declared dead. A dead peer is noticed within
	// KeepAliveInterval+KeepAliveTimeout.
	KeepAliveTimeout time.Duration
	// StreamWindow is each tunneled connection's flow-control window: the
	// most bytes in flight for one connection, and so the most a slow
	// reader can make the other side buffer for it.
	StreamWindow uint32
	// StreamCloseTimeout bounds how long a half-closed stream waits for
	// the peer's close before it is reset.
	StreamCloseTimeout time.Duration
	// Logger receives yamux's own log lines; nil discards them.
	Logger *log.Logger
}

// DefaultTransportConfig detects a dead peer within ten seconds.
func DefaultTransportConfig() TransportConfig {
	return TransportConfig{
		KeepAliveInterval:  5 * time.Second,
		KeepAliveTimeout:   5 * time.Second,
		StreamWindow:       256 << 10,
		StreamCloseTimeout: 2 * time.Minute,
	}
}

func (c TransportConfig) yamux() *yamux.Config {
	d := DefaultTransportConfig()
	y := yamux.DefaultConfig()
	y.AcceptBacklog = 1024
	y.EnableKeepAlive = true
	y.KeepAliveInterval = orDuration(c.KeepAliveInterval, d.KeepAliveInterval)
	y.ConnectionWriteTimeout = orDuration(c.KeepAliveTimeout, d.KeepAliveTimeout)
	y.MaxStreamWindowSize = max(c.StreamWindow, 256<<10)
	y.StreamCloseTimeout = orDuration(c.StreamCloseTimeout, d.StreamCloseTimeout)
	y.StreamOpenTimeout = 2 * y.ConnectionWriteTimeout
	if c.Logger != nil {
		y.LogOutput = nil
		y.Logger = c.Logger
	} else {
		y.LogOutput = io.Discard
	}
	return y
}

func orDuration(v, d time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return d
}

// Session is one agent↔server link carrying many streams.
type Session struct{ *yamux.Session }

// sessionConn is conn as the session writes to it: a link made by
// ServerLink or ClientLink batches each frame's records (batch.go).
func sessionConn(conn net.Conn) net.Conn {
	if tc, ok := conn.(*tls.Conn); ok {
		if lc, ok := tc.NetConn().(*linkConn); ok {
			return &frameConn{Conn: tc, raw: lc}
		}
	}
	return conn
}

// NewAgentSession wraps the agent's end of an established (TLS) connection.
func NewAgentSession(conn net.Conn, cfg TransportConfig) (*Session, error) {
	s, err := yamux.Client(sessionConn(conn), cfg.yamux())
	if err != nil {
		return nil, fmt.Errorf("start agent session: %w", err)
	}
	return &Session{s}, nil
}

// NewServerSession wraps the server's end of an accepted (TLS) connection.
func NewServerSession(conn net.Conn, cfg TransportConfig) (*Session, error) {
	s, err := yamux.Server(sessionConn(conn), cfg.yamux())
	if err != nil {
		return nil, fmt.Errorf("start server session: %w", err)
	}
	return &Session{s}, nil
}

// OpenStream opens a new stream to the peer.
func (s *Session) OpenStream() (*Stream, error) {
	st, err := s.Session.OpenStream()
	if err != nil {
		return nil, fmt.Errorf("open stream: %w", err)
	}
	return &Stream{st}, nil
}

// AcceptStream waits for the peer to open a stream.
func (s *Session) AcceptStream() (*Stream, error) {
	st, err := s.Session.AcceptStream()
	if err != nil {
		return nil, fmt.Errorf("accept stream: %w", err)
	}
	return &Stream{st}, nil
}

// Stream is one tunneled connection (or the control channel). Its Close is
// a half-close, as with yamux; CloseWrite says so for Join.
type Stream struct{ *yamux.Stream }

// CloseWrite sends the end of this direction; reading goes on.
func (s *Stream) CloseWrite() error { return s.Stream.Close() }

// Abort unblocks every pending and future read and write on the stream
// and half-closes it; Join on it then fails and closes its other side.
func (s *Stream) Abort() {
	s.Stream.SetDeadline(time.Now())
	s.Stream.Close()
}

// StreamSet tracks a session's open tunneled streams by ID so a reset
// from the peer can find them.
type StreamSet struct {
	mu sync.Mutex
	m  map[uint32]*Stream
}

// Add records st.
func (ss *StreamSet) Add(st *Stream) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.m == nil {
		ss.m = map[uint32]*Stream{}
	}
	ss.m[st.StreamID()] = st
}

// Remove forgets st.
func (ss *StreamSet) Remove(st *Stream) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.m, st.StreamID())
}

// Abort aborts the stream with id, if it is still open.
func (ss *StreamSet) Abort(id uint32) {
	ss.mu.Lock()
	st := ss.m[id]
	delete(ss.m, id)
	ss.mu.Unlock()
	if st != nil {
		st.Abort()
	}
}
