// Package grpcecho is a tiny gRPC backend, the sibling of test/echo, that
// reports which service and endpoint served each call. It exists to test
// nginx's grpc_pass (the backend-protocol GRPC and GRPCS annotations)
// through Causeway's Lua-balanced upstream: integration tests run Serve
// behind nginx and call Check against nginx to see which endpoint the
// balancer picked and what nginx forwarded.
//
// It needs no protoc and no generated code of its own: the server speaks
// the standard gRPC health protocol (grpc.health.v1.Health), whose
// generated code ships with grpc-go.
package grpcecho

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Response header metadata the server sets on every call.
const (
	// HeaderService names the service (Serve's service argument).
	HeaderService = "x-service"
	// HeaderEndpoint names the endpoint (Serve's endpoint argument).
	HeaderEndpoint = "x-endpoint"
	// HeaderSeenProto echoes the request's x-forwarded-proto.
	HeaderSeenProto = "x-seen-forwarded-proto"
	// HeaderSeenForwardedFor echoes the request's x-forwarded-for.
	HeaderSeenForwardedFor = "x-seen-forwarded-for"
	// HeaderSeenAuthority echoes the request's :authority.
	HeaderSeenAuthority = "x-seen-authority"
	// HeaderSeenBackend echoes the request's backend metadata, every
	// value joined with "|" (a route's header edits set it).
	HeaderSeenBackend = "x-seen-backend"
)

// stopGrace is how long stop waits for calls in flight before cutting them.
const stopGrace = 5 * time.Second

// Serve starts a gRPC server on lis answering as service, reporting
// endpoint (normally its own address). With a nil tlsConfig it speaks
// plaintext HTTP/2 (h2c, what nginx's grpc:// upstreams use), otherwise TLS
// with tlsConfig (see ServerTLS; grpcs:// upstreams).
//
// It serves grpc.health.v1.Health: Check answers SERVING for the empty
// service name and for service, NotFound for any other name; Watch sends
// one SERVING update for those names and returns, or NotFound. Every call,
// unary or streaming, gets the response headers x-service, x-endpoint,
// and x-seen-forwarded-proto, x-seen-forwarded-for, x-seen-authority and
// x-seen-backend echoing the request's x-forwarded-proto, x-forwarded-for,
// :authority and backend.
//
// stop shuts the server down, waiting up to 5 s for calls in flight, and
// closes lis; it may be called more than once.
func Serve(lis net.Listener, service, endpoint string, tlsConfig *tls.Config) (stop func()) {
	opts := []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			if err := grpc.SetHeader(ctx, replyHeader(ctx, service, endpoint)); err != nil {
				return nil, err
			}
			return handler(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
			if err := ss.SetHeader(replyHeader(ss.Context(), service, endpoint)); err != nil {
				return err
			}
			return handler(srv, ss)
		}),
	}
	if tlsConfig != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(tlsConfig)))
	}
	srv := grpc.NewServer(opts...)
	healthpb.RegisterHealthServer(srv, &health{service: service})

	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(lis) // returns once stopped
	}()

	var once sync.Once
	return func() {
		once.Do(func() {
			t := time.AfterFunc(stopGrace, srv.Stop)
			srv.GracefulStop()
			t.Stop()
			<-done
		})
	}
}

// replyHeader is the response header metadata for a call with context ctx.
func replyHeader(ctx context.Context, service, endpoint string) metadata.MD {
	in, _ := metadata.FromIncomingContext(ctx)
	first := func(key string) string {
		if v := in.Get(key); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	return metadata.Pairs(
		HeaderService, service,
		HeaderEndpoint, endpoint,
		HeaderSeenProto, first("x-forwarded-proto"),
		HeaderSeenForwardedFor, first("x-forwarded-for"),
		HeaderSeenAuthority, first(":authority"),
		HeaderSeenBackend, strings.Join(in.Get("backend"), "|"),
	)
}

// health is the grpc.health.v1.Health service: SERVING for "" and service.
type health struct {
	healthpb.UnimplementedHealthServer
	service string
}

// known reports whether name is a health service name the server knows.
func (h *health) known(name string) error {
	if name != "" && name != h.service {
		return status.Errorf(codes.NotFound, "unknown service %q", name)
	}
	return nil
}

// Check answers SERVING for a known service name, NotFound otherwise.
func (h *health) Check(_ context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if err := h.known(req.GetService()); err != nil {
		return nil, err
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

// Watch sends one SERVING update for a known service name and returns, so
// that a server-streaming call through the proxy can be tested; it answers
// NotFound for other names.
func (h *health) Watch(req *healthpb.HealthCheckRequest, stream grpc.ServerStreamingServer[healthpb.HealthCheckResponse]) error {
	if err := h.known(req.GetService()); err != nil {
		return err
	}
	return stream.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING})
}

// Result is what a Check call learnt.
type Result struct {
	// Service and Endpoint are the x-service and x-endpoint response
	// headers: which backend answered.
	Service, Endpoint string
	// SeenProto, SeenForwardedFor and SeenAuthority are the request's
	// x-forwarded-proto, x-forwarded-for and :authority as the backend saw
	// them (after nginx); SeenBackend its backend metadata ("|"-joined).
	SeenProto, SeenForwardedFor, SeenAuthority, SeenBackend string
	// Status is the grpc_health_v1 serving status name ("SERVING"), empty
	// when the call failed.
	Status string
	// Code is the call's gRPC status code; codes.OK on success.
	Code codes.Code
	// Message is the gRPC status message, empty on success.
	Message string
}

// checkTimeout bounds a Check call, connection included.
const checkTimeout = 5 * time.Second

// Check calls grpc.health.v1.Health/Check (for the empty service name) on
// addr, a host:port such as an nginx's "127.0.0.1:8443", sending authority
// as :authority (the address when empty). With a non-nil tlsConfig it
// connects over TLS with it; the authority's host is then the SNI and the
// name the certificate is verified against, whatever tlsConfig.ServerName
// says. With a nil tlsConfig it speaks plaintext HTTP/2 (h2c).
//
// The call, connection included, is bounded by ctx and 5 s. A gRPC
// status other than OK (including nginx's own errors, which arrive as
// Unavailable, Unimplemented and the like) is reported in Result.Code and
// Result.Message with a nil error, together with any headers received. The
// error is non-nil only when no connection could be made (refused, TLS
// handshake failure, timeout).
func Check(ctx context.Context, addr, authority string, tlsConfig *tls.Config) (Result, error) {
	return check(ctx, addr, authority, "", tlsConfig)
}

// check is Check asking about the health service name healthService.
func check(ctx context.Context, addr, authority, healthService string, tlsConfig *tls.Config) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()

	creds := insecure.NewCredentials()
	if tlsConfig != nil {
		creds = credentials.NewTLS(tlsConfig)
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	if authority != "" {
		opts = append(opts, grpc.WithAuthority(authority))
	}
	// passthrough: dial addr as given, no DNS resolution or address list.
	conn, err := grpc.NewClient("passthrough:///"+addr, opts...)
	if err != nil {
		return Result{}, fmt.Errorf("grpcecho: client for %s: %w", addr, err)
	}
	defer conn.Close()

	// Connect first, so that a failure to connect is told apart from a
	// gRPC status the server (or nginx) answered with.
	conn.Connect()
	connected := true
	for s := conn.GetState(); s != connectivity.Ready; s = conn.GetState() {
		if s == connectivity.TransientFailure || s == connectivity.Shutdown {
			connected = false
			break
		}
		if !conn.WaitForStateChange(ctx, s) {
			return Result{}, fmt.Errorf("grpcecho: connect to %s: %w", addr, ctx.Err())
		}
	}

	var header metadata.MD
	resp, err := healthpb.NewHealthClient(conn).Check(ctx,
		&healthpb.HealthCheckRequest{Service: healthService}, grpc.Header(&header))
	if !connected {
		// The call failed fast with the connection's last error.
		if err == nil {
			err = fmt.Errorf("connection in state %s", conn.GetState())
		}
		return Result{}, fmt.Errorf("grpcecho: connect to %s: %w", addr, err)
	}
	first := func(key string) string {
		if v := header.Get(key); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	r := Result{
		Service:          first(HeaderService),
		Endpoint:         first(HeaderEndpoint),
		SeenProto:        first(HeaderSeenProto),
		SeenForwardedFor: first(HeaderSeenForwardedFor),
		SeenAuthority:    first(HeaderSeenAuthority),
		SeenBackend:      first(HeaderSeenBackend),
	}
	if err != nil {
		st := status.Convert(err)
		r.Code, r.Message = st.Code(), st.Message()
		return r, nil
	}
	r.Status = resp.GetStatus().String()
	return r, nil
}

// ServerTLS is a server TLS configuration serving the PEM certificate
// (chain) and key, offering HTTP/2 ("h2") by ALPN as gRPC clients require.
func ServerTLS(certPEM, keyPEM []byte) (*tls.Config, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("grpcecho: server certificate: %w", err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{pair},
		NextProtos:   []string{"h2"},
		MinVersion:   tls.VersionTLS12,
	}, nil
}
