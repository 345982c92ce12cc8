package wire

import (
	"crypto/tls"
	"encoding/binary"
	"net"
	"sync"
)

// A link's writes, batched. yamux writes each data frame as two writes, its
// 12-byte header and then its body, and crypto/tls turns every write into
// records of at most 16 KiB, each written to the socket on its own: a
// 32 KiB frame took three write system calls, and system calls were 60 %
// of a bulk transfer's CPU in bench/tunnel (README, 2026-11-29). linkConn, the raw
// connection under a link's TLS, collects the records of one frame and
// writes them in one call; frameConn, the TLS connection as yamux sees it,
// says where a frame begins and ends.

// yamux's header: version, type, flags (2), stream ID (4), length (4). A
// data frame's length is its body's, which the next write carries.
const (
	yamuxHeaderLen = 12
	yamuxTypeData  = 0
)

// linkConn is the raw connection of a link. Outside a frame it writes
// through; inside one (begin to end) it keeps the TLS records and end
// writes them at once. Writes TLS makes on its own (a key update's answer,
// close_notify) keep their order: they take the same lock, and one made
// inside a frame joins it.
type linkConn struct {
	net.Conn
	mu       sync.Mutex
	batching bool
	closed   bool
	buf      []byte
}

// newLinkConn wraps the raw connection a link's TLS runs on.
func newLinkConn(raw net.Conn) *linkConn { return &linkConn{Conn: raw} }

// Write keeps p while a frame is being written, else writes it.
func (c *linkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	if c.batching {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

func (c *linkConn) begin() {
	c.mu.Lock()
	c.batching = true
	c.mu.Unlock()
}

// end writes what the frame's records collected, in one call. A buffer
// grown past a frame's usual size is dropped, so that an idle link holds
// little.
func (c *linkConn) end() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batching = false
	if c.closed {
		return net.ErrClosed
	}
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.buf)
	if cap(c.buf) > maxKeptBatch {
		c.buf = nil
	} else {
		c.buf = c.buf[:0]
	}
	return err
}

// maxKeptBatch is the largest batch buffer kept between frames: a frame of
// one 64 KiB read with its records' overhead.
const maxKeptBatch = 80 << 10

// Close closes the socket first, which ends a write blocked on a peer that
// stopped reading, then drops what a frame had kept: writing it out could
// block on that same peer, and the link is going away.
func (c *linkConn) Close() error {
	err := c.Conn.Close()
	c.mu.Lock()
	c.batching, c.closed, c.buf = false, true, nil
	c.mu.Unlock()
	return err
}

// frameConn is a link's TLS connection as its yamux session uses it. The
// header of a data frame with a body is held until the body's write, and
// both go out as one batch on raw. yamux (v0.1.2) writes every data frame's
// body right after its header, copying the body when its writer times out
// rather than dropping it; should a write nevertheless not be the body,
// the header goes out alone first, as yamux would have written it. yamux
// writes from one goroutine only.
type frameConn struct {
	*tls.Conn
	raw  *linkConn
	hdr  [yamuxHeaderLen]byte
	held bool
}

func (f *frameConn) Write(p []byte) (int, error) {
	if f.held {
		f.held = false
		if uint32(len(p)) == binary.BigEndian.Uint32(f.hdr[8:]) {
			f.raw.begin()
			_, err := f.Conn.Write(f.hdr[:])
			n := 0
			if err == nil {
				n, err = f.Conn.Write(p)
			}
			if eerr := f.raw.end(); err == nil {
				err = eerr
			}
			return n, err
		}
		if _, err := f.Conn.Write(f.hdr[:]); err != nil {
			return 0, err
		}
	}
	if len(p) == yamuxHeaderLen && p[1] == yamuxTypeData && binary.BigEndian.Uint32(p[8:]) > 0 {
		copy(f.hdr[:], p)
		f.held = true
		return len(p), nil
	}
	return f.Conn.Write(p)
}

// linkTLS is cfg with the records as large as TLS allows from the first
// byte: a link's latency is its frames', not the records'.
func linkTLS(cfg *tls.Config) *tls.Config {
	c := cfg.Clone()
	c.DynamicRecordSizingDisabled = true
	return c
}

// ServerLink is the server's TLS end of a link accepted on raw.
func ServerLink(raw net.Conn, cfg *tls.Config) *tls.Conn {
	return tls.Server(newLinkConn(raw), linkTLS(cfg))
}

// ClientLink is the agent's TLS end of a link dialed on raw to a server
// whose name (for the certificate check) is serverName when cfg names
// none.
func ClientLink(raw net.Conn, cfg *tls.Config, serverName string) *tls.Conn {
	c := linkTLS(cfg)
	if c.ServerName == "" {
		c.ServerName = serverName
	}
	return tls.Client(newLinkConn(raw), c)
}
