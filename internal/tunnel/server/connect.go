package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/causeway/causeway/internal/tunnel/wire"
)

// CompressionHeader lets a CONNECT client choose the compression of its
// own connection (none, gzip or zstd); without it the frontend's default
// applies.
const CompressionHeader = "Causeway-Tunnel-Compression"

// ErrorHeader carries the dial error code on a failed CONNECT.
const ErrorHeader = "Causeway-Tunnel-Error"

// ConnectFrontend serves HTTP CONNECT: "CONNECT host:port" is routed to the
// agent that owns host. It is an http.Handler, so the caller decides the
// listener (TCP with mutual TLS, or a unix socket).
type ConnectFrontend struct {
	Server *Server
	// Name labels metrics and logs ("connect-tcp", "connect-uds").
	Name string
	// Compression is the default mode for connections from this frontend.
	Compression wire.Compression
}

// ServeHTTP implements http.Handler.
func (f *ConnectFrontend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		w.Header().Set("Allow", http.MethodConnect)
		http.Error(w, "only CONNECT is supported", http.StatusMethodNotAllowed)
		return
	}
	mode := f.Compression
	if h := r.Header.Get(CompressionHeader); h != "" {
		m, err := wire.ParseCompression(h)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mode = m
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "connection cannot be hijacked", http.StatusInternalServerError)
		return
	}
	t, err := f.Server.Dial(r.Context(), f.Name, r.Host, mode)
	if err != nil {
		var de *DialError
		if !errors.As(err, &de) {
			de = &DialError{Code: wire.DialUnavailable, Msg: err.Error()}
		}
		w.Header().Set(ErrorHeader, string(de.Code))
		http.Error(w, fmt.Sprintf("causeway tunnel: CONNECT %s: %s", r.Host, de.Error()), de.HTTPStatus())
		return
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		t.Close()
		return
	}
	conn.SetDeadline(time.Time{})
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		conn.Close()
		t.Close()
		return
	}
	var client net.Conn = conn
	if n := brw.Reader.Buffered(); n > 0 {
		// The client sent bytes right after its request; keep them.
		client = &prefixConn{Conn: conn, r: io.MultiReader(io.LimitReader(brw.Reader, int64(n)), conn)}
	}
	f.Server.Forward(f.Name, client, t)
}

// prefixConn replays bytes buffered by the HTTP server before reading on.
type prefixConn struct {
	net.Conn
	r io.Reader
}

func (c *prefixConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// CloseWrite passes a half-close through to the underlying connection.
func (c *prefixConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ServeConnect serves f on ln until ctx ends. The caller wraps ln in TLS
// when it is a TCP listener.
func ServeConnect(ctx context.Context, ln net.Listener, f *ConnectFrontend) error {
	hs := &http.Server{
		Handler:           f,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	go func() { <-ctx.Done(); hs.Close() }()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", f.Name, err)
	}
	return nil
}
