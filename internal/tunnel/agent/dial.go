package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"time"

	"github.com/causeway/causeway/internal/tunnel/wire"
)

// serveDial answers one dial request from a server and, on success, joins
// the stream to the new connection until both sides are done.
func (a *Agent) serveDial(st *wire.Stream, cs *ctrlStream) {
	st.SetDeadline(time.Now().Add(a.cfg.DialTimeout + 5*time.Second))
	var req wire.DialRequest
	if err := wire.ReadFrame(st, &req); err != nil {
		st.Close()
		return
	}
	frontend := req.Frontend
	if frontend == "" {
		frontend = "unknown"
	}
	start := time.Now()
	conn, code, err := a.dial(req)
	if m := a.cfg.Metrics; m != nil {
		m.Dials.WithLabelValues(frontend, string(code)).Inc()
		m.DialLatency.WithLabelValues(string(code)).Observe(time.Since(start).Seconds())
	}
	if err != nil {
		a.log.Info("dial refused or failed", "address", req.Address, "code", code, "err", err)
		wire.WriteFrame(st, wire.DialResponse{Code: code, Message: err.Error()})
		st.Close()
		return
	}
	// Listed before the answer, so a reset that follows it finds the stream.
	cs.streams.Add(st)
	defer cs.streams.Remove(st)
	if err := wire.WriteFrame(st, wire.DialResponse{Code: wire.DialOK}); err != nil {
		conn.Close()
		st.Close()
		return
	}
	st.SetDeadline(time.Time{})
	a.nActive.Add(1)
	defer a.nActive.Add(-1)
	if m := a.cfg.Metrics; m != nil {
		g := m.Active.WithLabelValues(frontend)
		g.Inc()
		defer g.Dec()
	}
	err = wire.Join(conn, st, req.Compression, a.cfg.Metrics.Stats(true))
	cs.streams.Remove(st)
	if err != nil {
		cs.send(wire.Control{Type: wire.ControlReset, StreamID: st.StreamID()})
	}
}

// dial checks the destination against the allow list and connects to it.
// Host names are resolved here and every candidate address is checked, so
// a name cannot smuggle a connection to a forbidden address.
func (a *Agent) dial(req wire.DialRequest) (net.Conn, wire.DialCode, error) {
	if _, err := wire.ParseCompression(string(req.Compression)); err != nil {
		return nil, wire.DialBadRequest, err
	}
	host, portStr, err := net.SplitHostPort(req.Address)
	if err != nil {
		return nil, wire.DialBadRequest, fmt.Errorf("address %q: %w", req.Address, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || port == 0 {
		return nil, wire.DialBadRequest, fmt.Errorf("address %q: bad port", req.Address)
	}
	timeout := a.cfg.DialTimeout
	if t := time.Duration(req.TimeoutMillis) * time.Millisecond; t > 0 && t < timeout {
		timeout = t
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	var candidates []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		candidates = []netip.Addr{ip.Unmap()}
	} else {
		addrs, err := a.cfg.Resolve(ctx, host)
		if err != nil {
			return nil, classify(err), fmt.Errorf("resolve %s: %w", host, err)
		}
		for _, ip := range addrs {
			candidates = append(candidates, ip.Unmap())
		}
	}
	var allowed []netip.Addr
	for _, ip := range candidates {
		if a.allowed(ip) {
			allowed = append(allowed, ip)
		}
	}
	if len(allowed) == 0 {
		return nil, wire.DialRefused, fmt.Errorf("destination %s is not in the agent's allow list", req.Address)
	}
	var lastErr error
	for _, ip := range allowed {
		conn, err := a.cfg.Dial(ctx, "tcp", netip.AddrPortFrom(ip, uint16(port)).String())
		if err == nil {
			return conn, wire.DialOK, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, classify(lastErr), fmt.Errorf("dial %s: %w", req.Address, lastErr)
}

func (a *Agent) allowed(ip netip.Addr) bool {
	for _, p := range a.allow {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// classify tells a timeout (504 to a CONNECT client) from other failures.
func classify(err error) wire.DialCode {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout()) {
		return wire.DialTimeout
	}
	return wire.DialFailed
}
