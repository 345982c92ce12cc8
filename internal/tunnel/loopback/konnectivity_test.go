package loopback

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	konnectivity "sigs.k8s.io/apiserver-network-proxy/konnectivity-client/pkg/client"

	"github.com/causeway/causeway/internal/tunnel/server"
	"github.com/causeway/causeway/internal/tunnel/tunneltest"
	"github.com/causeway/causeway/internal/tunnel/wire"
)

// startKonnectivity serves the Konnectivity frontend of s on a new socket.
func startKonnectivity(t testing.TB, s *srv) string {
	t.Helper()
	path := filepath.Join(shortTempDir(t), "konn.sock")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		server.ServeKonnectivity(ctx, path, &server.KonnectivityFrontend{Server: s.Server, Compression: wire.CompressionZstd})
	}()
	t.Cleanup(func() { cancel(); <-done })
	eventually(t, 2*time.Second, "socket", func() bool {
		c, err := net.Dial("unix", path)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return path
}

// konnDial dials addr through the frontend the way kube-apiserver does:
// one single-use gRPC tunnel per connection, over the unix socket.
func konnDial(ctx context.Context, socket, addr string) (net.Conn, error) {
	tunnel, err := konnectivity.CreateSingleUseGrpcTunnel(ctx, "passthrough:///"+socket,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", socket)
		}))
	if err != nil {
		return nil, fmt.Errorf("create tunnel: %w", err)
	}
	return tunnel.DialContext(ctx, "tcp", addr)
}

// TestKonnectivityRoundTrip uses the real konnectivity-client, as
// kube-apiserver's EgressSelector does, for an HTTP request, a large
// response, and a refused destination.
func TestKonnectivityRoundTrip(t *testing.T) {
	p := newPKI(t)
	s := startServer(t, p, serverOpts{})
	a := startAgent(t, p, agentOpts{node: "edge", server: s.agentAddr, nodeIPs: []string{"127.0.0.1"}})
	eventually(t, 5*time.Second, "agent ready", a.Ready)
	socket := startKonnectivity(t, s)
	logs := tunneltest.LogLines(2 << 20)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	t.Cleanup(tunneltest.HTTPServer(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/containerLogs/default/web/app" {
			w.Write(logs)
			return
		}
		fmt.Fprintf(w, "hello %s", r.URL.Path)
	})))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	hc := &http.Client{Transport: &http.Transport{
		DialContext:       func(ctx context.Context, _, addr string) (net.Conn, error) { return konnDial(ctx, socket, addr) },
		DisableKeepAlives: true,
	}}
	for i := 0; i < 5; i++ {
		resp, err := hc.Get("http://" + ln.Addr().String() + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "hello /healthz" {
			t.Fatalf("body %q", body)
		}
	}
	resp, err := hc.Get("http://" + ln.Addr().String() + "/containerLogs/default/web/app")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || len(body) != len(logs) {
		t.Fatalf("logs: %d bytes, %v; want %d", len(body), err, len(logs))
	}

	// A raw connection: the backend's close ends the client's reads.
	c, err := konnDial(ctx, socket, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "GET /raw HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	r, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	c.Close()
	if string(b) != "hello /raw" {
		t.Fatalf("raw body %q", b)
	}

	if _, err := konnDial(ctx, socket, "192.0.2.1:10250"); err == nil || !strings.Contains(err.Error(), "noAgent") {
		t.Fatalf("dial to an unowned address: err = %v, want noAgent", err)
	}
}
