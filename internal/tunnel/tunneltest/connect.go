package tunneltest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// ConnectError is a CONNECT refused by the proxy.
type ConnectError struct {
	Status int
	Code   string // the Causeway-Tunnel-Error header
	Body   string
}

func (e *ConnectError) Error() string {
	return fmt.Sprintf("CONNECT refused: %d %s: %s", e.Status, e.Code, strings.TrimSpace(e.Body))
}

// Connect sends "CONNECT addr" over c (already connected to the proxy, TLS
// or not) and returns a connection to addr, or a *ConnectError.
func Connect(c net.Conn, addr string, header http.Header) (net.Conn, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n", addr, addr)
	for k, vs := range header {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(c, b.String()); err != nil {
		return nil, fmt.Errorf("send CONNECT: %w", err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return nil, fmt.Errorf("read CONNECT response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, &ConnectError{Status: resp.StatusCode, Code: resp.Header.Get("Causeway-Tunnel-Error"), Body: string(body)}
	}
	if br.Buffered() == 0 {
		return c, nil
	}
	return &bufConn{Conn: c, r: br}, nil
}

type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func (c *bufConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
