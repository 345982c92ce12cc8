package wire

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/tunnel/tunneltest"
)

// countingConn counts the writes that reach the socket.
type countingConn struct {
	net.Conn
	writes atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// linkPair is an agent and a server session over TLS on loopback, made as
// the agent and the server make theirs, with the agent's socket writes
// counted.
func linkPair(t *testing.T) (agent, server *Session, agentRaw *countingConn) {
	t.Helper()
	p, err := tunneltest.NewPKI()
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := p.AgentCert("edge")
	if err != nil {
		t.Fatal(err)
	}
	a, s := tcpPair(t)
	agentRaw = &countingConn{Conn: a}
	ac := ClientLink(agentRaw, &tls.Config{Certificates: []tls.Certificate{leaf.TLS}, RootCAs: p.ServerCA.Pool()}, "127.0.0.1")
	sc := ServerLink(s, &tls.Config{Certificates: []tls.Certificate{p.Server.TLS}, ClientCAs: p.AgentCA.Pool(),
		ClientAuth: tls.RequireAndVerifyClientCert})
	var wg sync.WaitGroup
	wg.Add(1)
	var serr error
	go func() { defer wg.Done(); serr = sc.Handshake() }()
	if err := ac.Handshake(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if serr != nil {
		t.Fatal(serr)
	}
	if !ac.ConnectionState().HandshakeComplete {
		t.Fatal("no handshake")
	}
	if agent, err = NewAgentSession(ac, DefaultTransportConfig()); err != nil {
		t.Fatal(err)
	}
	if server, err = NewServerSession(sc, DefaultTransportConfig()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agent.Close(); server.Close() })
	return agent, server, agentRaw
}

// TestLinkBatchesFrames: a data frame's header, its body and the TLS
// records they make leave in one socket write (they took a write per
// record, 18 for a 256 KiB frame), the bytes arrive intact, and frames
// without a body (pings, window updates) are not held back.
func TestLinkBatchesFrames(t *testing.T) {
	agent, server, raw := linkPair(t)
	payload := make([]byte, 4<<20)
	rand.Read(payload)
	accepted := make(chan *Stream, 1)
	go func() {
		st, err := server.AcceptStream()
		if err != nil {
			t.Error(err)
		}
		accepted <- st
	}()
	st, err := agent.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	peer := <-accepted
	if peer == nil {
		t.FailNow()
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(peer)
		got <- b
	}()
	before := raw.writes.Load()
	const chunk = 64 << 10
	for off := 0; off < len(payload); off += chunk {
		if _, err := st.Write(payload[off : off+chunk]); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	select {
	case b := <-got:
		if !bytes.Equal(b, payload) {
			t.Fatalf("received %d bytes, not the %d sent", len(b), len(payload))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the data did not arrive")
	}
	// 64 chunks, each one frame or, when the window cut it, two; each
	// frame one socket write. A write per TLS record would be 4 or more
	// per chunk.
	frames := int64(len(payload) / chunk)
	if n := raw.writes.Load() - before; n > 2*frames+4 {
		t.Fatalf("%d socket writes for %d frames of 64 KiB", n, frames)
	}
	// A ping is a header without a body: it must not wait for a frame.
	done := make(chan error, 1)
	go func() { _, err := agent.Ping(); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a ping was held back")
	}
}

// TestFrameConnDroppedBody: when yamux drops a frame's body after writing
// its header, the header still goes out, alone, before the next frame, and
// nothing is left in a batch.
func TestFrameConnDroppedBody(t *testing.T) {
	a, b := tcpPair(t)
	p, err := tunneltest.NewPKI()
	if err != nil {
		t.Fatal(err)
	}
	lc := newLinkConn(a)
	client := tls.Client(lc, &tls.Config{RootCAs: p.ServerCA.Pool(), ServerName: "127.0.0.1"})
	server := tls.Server(b, &tls.Config{Certificates: []tls.Certificate{p.Server.TLS}})
	go server.Handshake()
	if err := client.Handshake(); err != nil {
		t.Fatal(err)
	}
	f := &frameConn{Conn: client, raw: lc}
	dataHdr := []byte{0, yamuxTypeData, 0, 0, 0, 0, 0, 1, 0, 0, 0, 5}
	pingHdr := []byte{0, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 7}
	for _, w := range [][]byte{dataHdr, pingHdr} {
		if _, err := f.Write(w); err != nil {
			t.Fatal(err)
		}
	}
	server.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, 24)
	if _, err := io.ReadFull(server, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, append(append([]byte{}, dataHdr...), pingHdr...)) {
		t.Fatalf("got %x", got)
	}
	if lc.batching || len(lc.buf) > 0 {
		t.Fatal("a batch is left open")
	}
}

// TestReadBuffer: a pump reads small while the source trickles, large once
// a read fills the small buffer, and small again after a mostly empty read.
func TestReadBuffer(t *testing.T) {
	rb := newReadBuffer()
	defer rb.release()
	for _, step := range []struct {
		n    int
		want int
	}{
		{100, smallBufferSize},
		{smallBufferSize, largeBufferSize},
		{largeBufferSize, largeBufferSize},
		{largeBufferSize / 2, largeBufferSize},
		{100, smallBufferSize},
		{0, smallBufferSize},
	} {
		rb.read(step.n)
		if got := len(rb.bytes()); got != step.want {
			t.Fatalf("after a read of %d: buffer of %d, want %d", step.n, got, step.want)
		}
	}
}

// TestLinkConnCloseUnblocks: closing a link whose peer stopped reading
// returns, and ends a frame write blocked on it, instead of writing the
// kept records into the full socket.
func TestLinkConnCloseUnblocks(t *testing.T) {
	a, b := tcpPair(t)
	defer b.Close() // never read
	lc := newLinkConn(a)
	blocked := make(chan error, 1)
	go func() {
		lc.begin()
		chunk := make([]byte, 1<<20)
		for i := 0; i < 64; i++ { // far more than the socket buffers hold
			lc.Write(chunk)
		}
		blocked <- lc.end()
	}()
	time.Sleep(200 * time.Millisecond)
	closed := make(chan error, 1)
	go func() { closed <- lc.Close() }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close blocked on a peer that does not read")
	}
	select {
	case err := <-blocked:
		if err == nil {
			t.Fatal("the frame's write reported success on a closed link")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the frame's write stayed blocked after Close")
	}
}
