package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"sigs.k8s.io/apiserver-network-proxy/konnectivity-client/proto/client"

	"github.com/causeway/causeway/internal/tunnel/wire"
)

// KonnectivityFrontend speaks the ProxyService protocol of
// apiserver-network-proxy, so kube-apiserver's EgressSelectorConfiguration
// (proxyProtocol GRPC over a unix socket) can use the tunnel unchanged.
// Each DIAL_REQ becomes a tunneled connection of its own; the gRPC stream
// only carries it to this process.
type KonnectivityFrontend struct {
	client.UnimplementedProxyServiceServer
	Server      *Server
	Compression wire.Compression
	// connIDs numbers connections across all gRPC streams, as the
	// protocol wants connect IDs unique per server.
	connIDs atomic.Int64
}

const konnectivityName = "konnectivity"

// konnStream is one gRPC Proxy stream: its sends are serialized and its
// connections and pending dials tracked by ID.
type konnStream struct {
	f       *KonnectivityFrontend
	ctx     context.Context
	sendMu  sync.Mutex
	stream  client.ProxyService_ProxyServer
	mu      sync.Mutex
	conns   map[int64]*konnConn
	pending map[int64]context.CancelFunc
}

func (ks *konnStream) send(p *client.Packet) error {
	ks.sendMu.Lock()
	defer ks.sendMu.Unlock()
	return ks.stream.Send(p)
}

// Proxy implements client.ProxyServiceServer.
func (f *KonnectivityFrontend) Proxy(stream client.ProxyService_ProxyServer) error {
	ks := &konnStream{f: f, ctx: stream.Context(), stream: stream,
		conns: map[int64]*konnConn{}, pending: map[int64]context.CancelFunc{}}
	defer ks.closeAll()
	for {
		pkt, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		switch pkt.Type {
		case client.PacketType_DIAL_REQ:
			ks.dial(pkt.GetDialRequest())
		case client.PacketType_DIAL_CLS:
			ks.mu.Lock()
			cancel := ks.pending[pkt.GetCloseDial().GetRandom()]
			ks.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		case client.PacketType_DATA:
			d := pkt.GetData()
			if c := ks.conn(d.GetConnectID()); c != nil {
				c.deliver(d.GetData())
			}
		case client.PacketType_CLOSE_REQ:
			id := pkt.GetCloseRequest().GetConnectID()
			if c := ks.conn(id); c != nil {
				c.Close()
			} else {
				ks.send(closeRsp(id, "unknown connection"))
			}
		}
	}
}

func (ks *konnStream) conn(id int64) *konnConn {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	return ks.conns[id]
}

func (ks *konnStream) closeAll() {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	for _, c := range ks.conns {
		c.Close()
	}
	for _, cancel := range ks.pending {
		cancel()
	}
}

// dial runs asynchronously so DIAL_CLS can cancel it and other packets on
// the stream keep flowing.
func (ks *konnStream) dial(req *client.DialRequest) {
	random := req.GetRandom()
	ctx, cancel := context.WithCancel(ks.ctx)
	ks.mu.Lock()
	ks.pending[random] = cancel
	ks.mu.Unlock()
	go func() {
		defer cancel()
		rsp := &client.DialResponse{Random: random}
		var t *Tunnel
		var err error
		if req.GetProtocol() != "tcp" {
			err = fmt.Errorf("protocol %q not supported", req.GetProtocol())
		} else {
			t, err = ks.f.Server.Dial(ctx, konnectivityName, req.GetAddress(), ks.f.Compression)
		}
		ks.mu.Lock()
		delete(ks.pending, random)
		ks.mu.Unlock()
		if err != nil {
			rsp.Error = err.Error()
			ks.send(&client.Packet{Type: client.PacketType_DIAL_RSP, Payload: &client.Packet_DialResponse{DialResponse: rsp}})
			return
		}
		id := ks.f.connIDs.Add(1)
		c := newKonnConn(ks, id)
		ks.mu.Lock()
		ks.conns[id] = c
		ks.mu.Unlock()
		rsp.ConnectID = id
		if err := ks.send(&client.Packet{Type: client.PacketType_DIAL_RSP, Payload: &client.Packet_DialResponse{DialResponse: rsp}}); err != nil {
			c.Close()
		}
		ks.f.Server.Forward(konnectivityName, c, t)
		c.sendCloseRsp("")
		ks.mu.Lock()
		delete(ks.conns, id)
		ks.mu.Unlock()
	}()
}

func closeRsp(id int64, msg string) *client.Packet {
	return &client.Packet{Type: client.PacketType_CLOSE_RSP,
		Payload: &client.Packet_CloseResponse{CloseResponse: &client.CloseResponse{ConnectID: id, Error: msg}}}
}

// konnConn adapts one Konnectivity connection to net.Conn for wire.Join:
// DATA packets feed Read through a small bounded queue, Write sends DATA,
// and the end of the tunnel's data becomes CLOSE_RSP.
type konnConn struct {
	ks      *konnStream
	id      int64
	in      chan []byte
	pending []byte
	closed  chan struct{}
	once    sync.Once
	rspOnce sync.Once
}

func newKonnConn(ks *konnStream, id int64) *konnConn {
	return &konnConn{ks: ks, id: id, in: make(chan []byte, 8), closed: make(chan struct{})}
}

// deliver queues client data; it blocks the stream's reader when the
// queue is full, which is gRPC's flow control for this single-use stream.
func (c *konnConn) deliver(b []byte) {
	select {
	case c.in <- b:
	case <-c.closed:
	}
}

func (c *konnConn) Read(p []byte) (int, error) {
	if len(c.pending) == 0 {
		select {
		case b := <-c.in:
			c.pending = b
		default:
			select {
			case b := <-c.in:
				c.pending = b
			case <-c.closed:
				return 0, io.EOF
			}
		}
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

func (c *konnConn) Write(p []byte) (int, error) {
	select {
	case <-c.closed:
		return 0, net.ErrClosed
	default:
	}
	data := append([]byte(nil), p...)
	err := c.ks.send(&client.Packet{Type: client.PacketType_DATA,
		Payload: &client.Packet_Data{Data: &client.Data{ConnectID: c.id, Data: data}}})
	if err != nil {
		return 0, fmt.Errorf("send DATA: %w", err)
	}
	return len(p), nil
}

// CloseWrite ends the data towards the client: the protocol has no
// half-close, so the client learns of it through CLOSE_RSP.
func (c *konnConn) CloseWrite() error {
	c.sendCloseRsp("")
	return nil
}

func (c *konnConn) sendCloseRsp(msg string) {
	c.rspOnce.Do(func() { c.ks.send(closeRsp(c.id, msg)) })
}

func (c *konnConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

func (c *konnConn) LocalAddr() net.Addr              { return konnAddr{} }
func (c *konnConn) RemoteAddr() net.Addr             { return konnAddr{} }
func (c *konnConn) SetDeadline(time.Time) error      { return nil }
func (c *konnConn) SetReadDeadline(time.Time) error  { return nil }
func (c *konnConn) SetWriteDeadline(time.Time) error { return nil }
func (konnAddr) Network() string                     { return "konnectivity" }
func (konnAddr) String() string                      { return "konnectivity" }

type konnAddr struct{}

// ServeKonnectivity serves f over gRPC on a unix socket at path until ctx
// ends. A stale socket file is replaced.
func ServeKonnectivity(ctx context.Context, path string, f *KonnectivityFrontend) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove stale socket %s: %w", path, err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("listen %s: %w", path, err)
	}
	gs := grpc.NewServer()
	client.RegisterProxyServiceServer(gs, f)
	go func() { <-ctx.Done(); gs.Stop() }()
	if err := gs.Serve(ln); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("serve konnectivity on %s: %w", path, err)
	}
	return nil
}
