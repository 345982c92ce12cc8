package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/causeway/causeway/internal/tunnel/route"
	"github.com/causeway/causeway/internal/tunnel/wire"
)

// DialError is a failed dial with the code every frontend maps to its own
// error form (HTTP status, Konnectivity error text).
type DialError struct {
	Code wire.DialCode
	// Agent is the node that was asked, if any.
	Agent string
	Msg   string
}

func (e *DialError) Error() string {
	if e.Agent != "" {
		return fmt.Sprintf("%s (agent %s): %s", e.Code, e.Agent, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Msg)
}

// HTTPStatus maps the code to the status a CONNECT client receives: 504
// only when the agent's dial timed out, 403 when the agent's allow list
// refused the destination, 400 for a malformed request, else 502.
func (e *DialError) HTTPStatus() int {
	switch e.Code {
	case wire.DialTimeout:
		return http.StatusGatewayTimeout
	case wire.DialRefused:
		return http.StatusForbidden
	case wire.DialBadRequest:
		return http.StatusBadRequest
	default:
		return http.StatusBadGateway
	}
}

// Tunnel is an established tunneled connection to a destination.
type Tunnel struct {
	*wire.Stream
	Compression wire.Compression
	Agent       string
	Match       route.Match
	link        *link
}

// Dial routes address (host:port) to an agent and asks it to connect.
// want is the preferred compression; the agent must support it, else the
// connection is not compressed. Cancelling ctx abandons the dial.
func (s *Server) Dial(ctx context.Context, frontend, address string, want wire.Compression) (*Tunnel, error) {
	start := time.Now()
	t, err := s.dial(ctx, frontend, address, want)
	result := wire.DialOK
	if err != nil {
		var de *DialError
		if errors.As(err, &de) {
			result = de.Code
		} else {
			result = wire.DialUnavailable
		}
	}
	if m := s.cfg.Metrics; m != nil {
		m.Dials.WithLabelValues(frontend, string(result)).Inc()
		m.DialLatency.WithLabelValues(string(result)).Observe(time.Since(start).Seconds())
	}
	if err != nil {
		s.log.Info("dial failed", "frontend", frontend, "address", address, "err", err)
	}
	return t, err
}

func (s *Server) dial(ctx context.Context, frontend, address string, want wire.Compression) (*Tunnel, error) {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return nil, &DialError{Code: wire.DialBadRequest, Msg: fmt.Sprintf("address %q: %v", address, err)}
	}
	a, match, err := s.Table().Lookup(host)
	if err != nil {
		code := wire.DialNoAgent
		if errors.Is(err, route.ErrDraining) {
			code = wire.DialDraining
		}
		return nil, &DialError{Code: code, Msg: err.Error()}
	}
	l := s.link(a.ID)
	if l == nil {
		return nil, &DialError{Code: wire.DialUnavailable, Agent: a.Node, Msg: "agent link closed"}
	}
	mode := wire.Negotiate(want, l.hello.Compression)
	st, err := l.sess.OpenStream()
	if err != nil {
		return nil, &DialError{Code: wire.DialUnavailable, Agent: a.Node, Msg: err.Error()}
	}
	// The agent answers within its dial timeout; allow for the round trip.
	st.SetDeadline(time.Now().Add(s.cfg.DialTimeout + 5*time.Second))
	stop := context.AfterFunc(ctx, func() { st.SetDeadline(time.Now()) })
	defer stop()
	req := wire.DialRequest{Address: address, Compression: mode, Frontend: frontend,
		TimeoutMillis: s.cfg.DialTimeout.Milliseconds()}
	if err := wire.WriteFrame(st, req); err != nil {
		st.Close()
		return nil, &DialError{Code: wire.DialUnavailable, Agent: a.Node, Msg: err.Error()}
	}
	var resp wire.DialResponse
	if err := wire.ReadFrame(st, &resp); err != nil {
		st.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("dial %s: %w", address, ctx.Err())
		}
		return nil, &DialError{Code: wire.DialUnavailable, Agent: a.Node, Msg: err.Error()}
	}
	if !stop() {
		st.Close()
		return nil, fmt.Errorf("dial %s: %w", address, ctx.Err())
	}
	if resp.Code != wire.DialOK {
		st.Close()
		return nil, &DialError{Code: resp.Code, Agent: a.Node, Msg: resp.Message}
	}
	st.SetDeadline(time.Time{})
	l.streams.Add(st)
	return &Tunnel{Stream: st, Compression: mode, Agent: a.Node, Match: match, link: l}, nil
}

// Forward copies between a frontend's client connection and t until both
// are done, counting the connection and its bytes.
func (s *Server) Forward(frontend string, client net.Conn, t *Tunnel) error {
	if m := s.cfg.Metrics; m != nil {
		g := m.Active.WithLabelValues(frontend)
		g.Inc()
		defer g.Dec()
	}
	err := wire.Join(client, t.Stream, t.Compression, s.cfg.Metrics.Stats(false))
	t.link.streams.Remove(t.Stream)
	if err != nil {
		t.link.send(wire.Control{Type: wire.ControlReset, StreamID: t.StreamID()})
	}
	return err
}
