// Package wire defines what travels between a tunnel agent and a tunnel
// server: the registration handshake on the control stream, the dial
// request and response that open every tunneled connection, the yamux
// transport settings, and per-connection compression.
//
// Messages are JSON documents in length-prefixed frames. JSON keeps the
// protocol easy to inspect and to extend with optional fields; the frames
// are small and rare (one pair per connection), so its cost does not matter.
package wire

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
)

// ProtocolVersion is sent in Hello; a server refuses versions it does not
// speak rather than misreading them.
const ProtocolVersion = 1

// MaxFrameSize bounds one control frame, so a peer cannot make the other
// side allocate without limit.
const MaxFrameSize = 64 << 10

// MaxHelloSize bounds the encoded Hello. It is the frame limit, named so
// both sides can say which limit a registration broke.
const MaxHelloSize = MaxFrameSize

// MaxClaims bounds how many node IPs, host names and CIDRs one agent may
// register. Each claim is a routing-table entry (and an iptables rule per
// port), so one agent must not be able to grow them without limit; real
// nodes need a handful.
const MaxClaims = 256

// Hello is the agent's registration, the first frame on the control stream.
type Hello struct {
	Version int `json:"version"`
	// NodeName is the Kubernetes node the agent runs on. It must match the
	// identity in the agent's client certificate.
	NodeName string `json:"nodeName"`
	// InstanceID is random per agent process; it tells reconnects of a
	// restarted agent from duplicate links of a running one in logs.
	InstanceID string         `json:"instanceID"`
	NodeIPs    []netip.Addr   `json:"nodeIPs,omitempty"`
	CIDRs      []netip.Prefix `json:"cidrs,omitempty"`
	HostNames  []string       `json:"hostNames,omitempty"`
	// DefaultRoute makes the agent a candidate for destinations that no
	// agent owns by IP, CIDR or host name.
	DefaultRoute bool `json:"defaultRoute,omitempty"`
	// Draining agents receive no new connections.
	Draining bool `json:"draining,omitempty"`
	// Compression lists the modes the agent can decode and encode.
	Compression []Compression `json:"compression,omitempty"`
}

// Claims is how many routing entries the Hello asks for: node IPs, host
// names and CIDRs (the default route is a flag, not an entry).
func (h *Hello) Claims() int { return len(h.NodeIPs) + len(h.HostNames) + len(h.CIDRs) }

// CheckLimits enforces MaxClaims. Agents check before sending and servers
// on receipt, so a misconfigured agent fails at start with the same reason
// a server would give.
func (h *Hello) CheckLimits() error {
	if n := h.Claims(); n > MaxClaims {
		return fmt.Errorf("%d claims (%d node IPs, %d host names, %d CIDRs) exceed the limit of %d per agent",
			n, len(h.NodeIPs), len(h.HostNames), len(h.CIDRs), MaxClaims)
	}
	return nil
}

// CheckSize enforces MaxHelloSize on the encoded Hello.
func (h *Hello) CheckSize() error {
	body, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("encode hello: %w", err)
	}
	if len(body) > MaxHelloSize {
		return fmt.Errorf("hello of %d bytes exceeds the limit of %d bytes", len(body), MaxHelloSize)
	}
	return nil
}

// Welcome is the server's answer to Hello.
type Welcome struct {
	ServerID    string `json:"serverID"`
	ServerCount int    `json:"serverCount"`
	// Error, when set, means registration was refused; the server closes
	// the session after sending it.
	Error string `json:"error,omitempty"`
	// Acks promises a ControlRouted once the server routes to the link.
	// Agents count a link toward readiness only then; a server that does
	// not set it (an older one) routes as soon as it reads ControlReady.
	Acks bool `json:"acks,omitempty"`
}

// ControlType names a message sent on the control stream after the
// handshake.
type ControlType string

const (
	// ControlReady commits the registration: the agent keeps this link
	// (it is not a duplicate of a server it already holds), so the server
	// may route to it.
	ControlReady ControlType = "ready"
	// ControlRouted confirms that the server lists the link and routes to
	// it (sent after ControlReady when Welcome.Acks is set).
	ControlRouted ControlType = "routed"
	// ControlDrain announces that the agent is shutting down.
	ControlDrain ControlType = "drain"
	// ControlServerCount tells the agent that the replica count changed.
	ControlServerCount ControlType = "serverCount"
	// ControlReset aborts one stream (the sender's end failed, e.g. its
	// client went away); the receiver closes its side at once instead of
	// waiting, blocked on a full window, for a half-close that never ends.
	ControlReset ControlType = "reset"
)

// Control is a message on the control stream after Hello and Welcome.
type Control struct {
	Type        ControlType `json:"type"`
	ServerCount int         `json:"serverCount,omitempty"`
	StreamID    uint32      `json:"streamID,omitempty"`
}

// DialRequest is the first frame on a stream the server opens to an agent.
type DialRequest struct {
	// Address is host:port; host is an IP address or a name the agent
	// resolves itself.
	Address string `json:"address"`
	// Compression applies to the bytes that follow the DialResponse, in
	// both directions.
	Compression Compression `json:"compression"`
	// TimeoutMillis bounds the agent's dial.
	TimeoutMillis int64 `json:"timeoutMillis"`
	// Frontend names where the connection came from, for metrics and logs.
	Frontend string `json:"frontend,omitempty"`
}

// DialCode classifies the outcome of a dial so every frontend can report it
// precisely (HTTP status, Konnectivity error text).
type DialCode string

const (
	DialOK          DialCode = "ok"
	DialRefused     DialCode = "refused"     // not in the agent's allow list
	DialTimeout     DialCode = "timeout"     // the agent's dial timed out
	DialFailed      DialCode = "failed"      // the destination refused or is unreachable
	DialDraining    DialCode = "draining"    // the agent is shutting down
	DialNoAgent     DialCode = "noAgent"     // no agent owns the destination (server side)
	DialUnavailable DialCode = "unavailable" // the tunnel to the agent failed (server side)
	DialBadRequest  DialCode = "badRequest"  // malformed address or mode
)

// DialResponse answers a DialRequest. Code is DialOK on success.
type DialResponse struct {
	Code    DialCode `json:"code"`
	Message string   `json:"message,omitempty"`
}

// WriteFrame writes v as one length-prefixed JSON frame.
func WriteFrame(w io.Writer, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode frame: %w", err)
	}
	if len(body) > MaxFrameSize {
		return fmt.Errorf("encode frame: %d bytes exceeds limit %d", len(body), MaxFrameSize)
	}
	buf := make([]byte, 4+len(body))
	binary.BigEndian.PutUint32(buf, uint32(len(body)))
	copy(buf[4:], body)
	if _, err := w.Write(buf); err != nil {
		return fmt.Errorf("write frame: %w", err)
	}
	return nil
}

// ErrFrameTooLarge is returned for frames over MaxFrameSize.
var ErrFrameTooLarge = errors.New("frame too large")

// ReadFrame reads one frame written by WriteFrame into v. It reads exactly
// the frame's bytes, so the stream can carry raw data after it.
func ReadFrame(r io.Reader, v any) error {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return fmt.Errorf("read frame header: %w", err)
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > MaxFrameSize {
		return fmt.Errorf("read frame: %d bytes: %w", n, ErrFrameTooLarge)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return fmt.Errorf("read frame body: %w", err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("decode frame: %w", err)
	}
	return nil
}
