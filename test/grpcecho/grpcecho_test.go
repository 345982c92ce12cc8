package grpcecho

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/causeway/causeway/test/testcert"
)

const authority = "grpc.test"

// start serves service/endpoint on a fresh 127.0.0.1 port, TLS when
// tlsConfig is set, and returns its address.
func start(t *testing.T, service string, tlsConfig *tls.Config) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	t.Cleanup(Serve(lis, service, addr, tlsConfig))
	return addr
}

// tlsPair returns a server configuration for names and a client
// configuration trusting it.
func tlsPair(t *testing.T, names ...string) (server, client *tls.Config) {
	t.Helper()
	crt, key, err := testcert.SelfSigned(0, time.Hour, names...)
	if err != nil {
		t.Fatal(err)
	}
	server, err = ServerTLS(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(crt) {
		t.Fatal("bad certificate PEM")
	}
	return server, &tls.Config{RootCAs: pool}
}

func TestCheck(t *testing.T) {
	serverTLS, clientTLS := tlsPair(t, authority)
	tests := []struct {
		name              string
		server, client    *tls.Config
		authority         string
		wantSeenAuthority string // empty: the address
	}{
		{name: "h2c", authority: authority, wantSeenAuthority: authority},
		{name: "h2c default authority"},
		{name: "TLS", server: serverTLS, client: clientTLS, authority: authority, wantSeenAuthority: authority},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			addr := start(t, "web", tc.server)
			got, err := Check(t.Context(), addr, tc.authority, tc.client)
			if err != nil {
				t.Fatal(err)
			}
			wantAuth := tc.wantSeenAuthority
			if wantAuth == "" {
				wantAuth = addr
			}
			want := Result{Service: "web", Endpoint: addr, SeenAuthority: wantAuth, Status: "SERVING", Code: codes.OK}
			if got != want {
				t.Errorf("got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestCheckServiceNames(t *testing.T) {
	addr := start(t, "web", nil)
	tests := []struct {
		healthService string
		wantCode      codes.Code
		wantStatus    string
	}{
		{healthService: "", wantCode: codes.OK, wantStatus: "SERVING"},
		{healthService: "web", wantCode: codes.OK, wantStatus: "SERVING"},
		{healthService: "nope", wantCode: codes.NotFound},
	}
	for _, tc := range tests {
		t.Run("service "+tc.healthService, func(t *testing.T) {
			got, err := check(t.Context(), addr, authority, tc.healthService, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.Code != tc.wantCode || got.Status != tc.wantStatus {
				t.Errorf("code %v status %q, want %v %q (%+v)", got.Code, got.Status, tc.wantCode, tc.wantStatus, got)
			}
			// Headers are sent on failed calls too.
			if got.Service != "web" || got.Endpoint != addr {
				t.Errorf("service %q endpoint %q, want web %s", got.Service, got.Endpoint, addr)
			}
			if (got.Message == "") != (tc.wantCode == codes.OK) {
				t.Errorf("message %q for code %v", got.Message, got.Code)
			}
		})
	}
}

func TestCheckConnectFailures(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := lis.Addr().String()
		lis.Close()
		if got, err := Check(t.Context(), addr, authority, nil); err == nil {
			t.Errorf("no error, got %+v", got)
		} else {
			t.Log(err)
		}
	})
	t.Run("TLS name mismatch", func(t *testing.T) {
		serverTLS, clientTLS := tlsPair(t, "other.test")
		addr := start(t, "web", serverTLS)
		if got, err := Check(t.Context(), addr, authority, clientTLS); err == nil {
			t.Errorf("no error, got %+v", got)
		} else {
			t.Log(err)
		}
	})
	t.Run("plaintext client to TLS server", func(t *testing.T) {
		serverTLS, _ := tlsPair(t, authority)
		addr := start(t, "web", serverTLS)
		if got, err := Check(t.Context(), addr, authority, nil); err == nil {
			t.Errorf("no error, got %+v", got)
		} else {
			t.Log(err)
		}
	})
	t.Run("context done", func(t *testing.T) {
		addr := start(t, "web", nil)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if got, err := Check(ctx, addr, authority, nil); err == nil {
			t.Errorf("no error, got %+v", got)
		} else {
			t.Log(err)
		}
	})
}

// TestForwardedHeaders checks the x-seen-* echo on a unary and on a
// streaming call, as a proxy such as nginx would send them.
func TestForwardedHeaders(t *testing.T) {
	addr := start(t, "web", nil)
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithAuthority(authority))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	ctx := metadata.AppendToOutgoingContext(t.Context(),
		"x-forwarded-proto", "https", "x-forwarded-for", "192.0.2.7")
	want := metadata.Pairs(
		HeaderService, "web", HeaderEndpoint, addr, HeaderSeenProto, "https",
		HeaderSeenForwardedFor, "192.0.2.7", HeaderSeenAuthority, authority)
	checkHeader := func(t *testing.T, got metadata.MD) {
		t.Helper()
		for k, v := range want {
			if g := got.Get(k); len(g) != 1 || g[0] != v[0] {
				t.Errorf("header %s = %q, want %q", k, g, v[0])
			}
		}
	}

	t.Run("unary", func(t *testing.T) {
		var header metadata.MD
		if _, err := client.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Header(&header)); err != nil {
			t.Fatal(err)
		}
		checkHeader(t, header)
	})

	t.Run("streaming Watch", func(t *testing.T) {
		stream, err := client.Watch(ctx, &healthpb.HealthCheckRequest{Service: "web"})
		if err != nil {
			t.Fatal(err)
		}
		header, err := stream.Header()
		if err != nil {
			t.Fatal(err)
		}
		checkHeader(t, header)
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("status %v, want SERVING", resp.GetStatus())
		}
		if _, err := stream.Recv(); err != io.EOF {
			t.Errorf("after one update: %v, want EOF", err)
		}
	})

	t.Run("streaming Watch unknown service", func(t *testing.T) {
		stream, err := client.Watch(ctx, &healthpb.HealthCheckRequest{Service: "nope"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Recv(); status.Code(err) != codes.NotFound {
			t.Errorf("got %v, want NotFound", err)
		}
	})
}

func TestStop(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	stop := Serve(lis, "web", addr, nil)
	if _, err := Check(t.Context(), addr, "", nil); err != nil {
		t.Fatal(err)
	}
	stop()
	stop() // idempotent
	if got, err := Check(t.Context(), addr, "", nil); err == nil {
		t.Errorf("after stop: no error, got %+v", got)
	}
}

func TestServerTLS(t *testing.T) {
	crt, key, err := testcert.SelfSigned(0, time.Hour, authority)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ServerTLS(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Certificates) != 1 || len(cfg.NextProtos) != 1 || cfg.NextProtos[0] != "h2" {
		t.Errorf("certificates %d, NextProtos %q; want 1, [h2]", len(cfg.Certificates), cfg.NextProtos)
	}
	if _, err := ServerTLS(crt, []byte("not a key")); err == nil {
		t.Error("bad key: no error")
	}
}
