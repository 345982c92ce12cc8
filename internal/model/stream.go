package model

import (
	"errors"
	"net/netip"
	"regexp"
	"time"
)

// This file holds Layer 4: TCP and UDP servers on the extra listeners of a
// GlobalConfiguration, each proxying to one backend (a TransportServer).

// StreamProtocol is the transport of a stream listener.
type StreamProtocol string

// The stream protocols.
const (
	StreamTCP StreamProtocol = "TCP"
	StreamUDP StreamProtocol = "UDP"
)

// StreamMethod is how a stream upstream picks an endpoint.
type StreamMethod string

// The stream balancing methods that nginx's open-source stream module has.
const (
	StreamRoundRobin         StreamMethod = "round_robin"
	StreamLeastConn          StreamMethod = "least_conn"
	StreamRandom             StreamMethod = "random"
	StreamRandomTwo          StreamMethod = "random two"
	StreamRandomTwoLeastConn StreamMethod = "random two least_conn"
	StreamHash               StreamMethod = "hash"
)

// StreamBalance is a stream upstream's balancing.
type StreamBalance struct {
	Method StreamMethod
	// HashKey is what ParseStreamHashKey returned (Method StreamHash).
	HashKey string
	// Consistent selects ketama consistent hashing (Method StreamHash).
	Consistent bool
}

// StreamRemoteAddr is the one nginx variable a stream hash key may be.
const StreamRemoteAddr = "$remote_addr"

// streamHashLiteral is a constant hash key: plain characters that need
// no quoting in nginx's syntax.
var streamHashLiteral = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// ParseStreamHashKey checks the key of a stream upstream's hash: the
// client's address ($remote_addr) or a constant of letters, digits, ".",
// "_", ":" and "-" (at most 128).
func ParseStreamHashKey(s string) (string, error) {
	if s == StreamRemoteAddr || streamHashLiteral.MatchString(s) {
		return s, nil
	}
	return "", errors.New(`want $remote_addr or a constant of letters, digits, ".", "_", ":" and "-"`)
}

// StreamServer is one listener's server: it accepts connections (TCP) or
// datagrams (UDP) on Port and proxies them to the Backend's endpoints.
type StreamServer struct {
	// Listener is the GlobalConfiguration listener's name (a DNS label).
	Listener string
	Port     int
	// IPv4 and IPv6 are the addresses it binds (the GlobalConfiguration
	// listener's); when neither is valid it binds the controller's listen
	// address.
	IPv4, IPv6 netip.Addr
	Protocol   StreamProtocol
	// Backend is "namespace/service/port" of the upstream's Service;
	// Endpoints its ready endpoints, sorted. nginx's stream module has no
	// dynamic channel here, so they are written into the file and a
	// change needs a reload. Empty: connections are closed.
	Backend   string
	Endpoints []Endpoint
	// Weights, when set, are the endpoints' nginx weights, one each
	// (several Services shared by weight: a Gateway TCPRoute's or
	// UDPRoute's backendRefs); unset, every endpoint weighs 1.
	Weights  []int
	Upstream StreamUpstream
	Proxy    StreamProxy
	// TLS, when set, terminates TLS on the listener (TCP) with the
	// TLSSecret of that key in Model.Secrets.
	TLS *StreamTLS
	// Source is the TransportServer (or the tcp- or udp-services
	// ConfigMap) the server came from.
	Source ObjectRef
}

// StreamTLS is TLS termination on a stream listener.
type StreamTLS struct {
	// Secret is the key ("namespace/name") of a TLSSecret in Model.Secrets.
	Secret string
}

// StreamUpstream holds the per-endpoint settings of a stream upstream.
type StreamUpstream struct {
	Balance StreamBalance
	// MaxFails failures within FailTimeout take an endpoint out for
	// FailTimeout; 0 MaxFails never does.
	MaxFails    int
	FailTimeout time.Duration
	// MaxConns limits connections to each endpoint; 0 means no limit.
	MaxConns int
}

// StreamProxy holds how a stream server proxies.
type StreamProxy struct {
	ConnectTimeout time.Duration
	// Timeout is the longest time between two reads or writes on the
	// client's or the upstream's connection (nginx's proxy_timeout).
	Timeout time.Duration
	// NextUpstream retries a failed connection on another endpoint, up to
	// NextUpstreamTries tries (0: no limit) for NextUpstreamTimeout (0:
	// no limit).
	NextUpstream        bool
	NextUpstreamTimeout time.Duration
	NextUpstreamTries   int
	// UDPRequests and UDPResponses are nginx's proxy_requests and
	// proxy_responses (UDP only); nil leaves nginx's default.
	UDPRequests, UDPResponses *int
	// AcceptProxyProtocol reads a PROXY protocol header from each client
	// connection (TCP only); SendProxyProtocol sends one to the upstream.
	// ingress-nginx's ":PROXY" suffixes in its tcp-services ConfigMap.
	AcceptProxyProtocol, SendProxyProtocol bool
}

// Passthrough is TLS passthrough by server name on the HTTPS port
// (--enable-tls-passthrough, --enable-ssl-passthrough). A stream server
// on the HTTPS port reads the server name of each TLS ClientHello and
// passes the connection, still encrypted, to the Route of that name;
// every other connection goes, behind a PROXY protocol header carrying
// the client's address, to the http servers' HTTPS listener, which then
// listens on a private unix socket instead of the HTTPS port.
type Passthrough struct {
	// Routes are sorted by host.
	Routes []*PassthroughRoute
}

// SNIListener passes TLS connections, still encrypted, by their server
// name (a Gateway's TLS listener in Passthrough mode): a server name no
// route has, or none, is closed.
type SNIListener struct {
	// Name is a DNS label, unique among the stream listeners' names.
	Name string
	Port int
	// Routes are sorted by Host; a wildcard Host here matches any number
	// of labels before its suffix, and the longest wins (Gateway API's
	// hostnames).
	Routes []*PassthroughRoute
	// Default, when set, takes the connections whose server name no
	// route has, or that have none (a TLSRoute without hostnames on a
	// listener without one); its Host is "". Nil: they are closed.
	Default *PassthroughRoute
	// TLS is the certificate the routes marked Terminate are served
	// with (TLS listeners in mode Terminate): nginx completes the
	// handshake and their backends get the decrypted stream. Nil when
	// no route terminates.
	TLS *StreamTLS
}

// PassthroughRoute passes the TLS connections for one server name to a
// Service's endpoints.
type PassthroughRoute struct {
	// Host is what ValidateHost accepts: a lower-case DNS name, or
	// "*.suffix" matching any name under suffix (nginx's wildcard).
	Host string
	// Terminate terminates TLS with the SNI listener's certificate
	// before passing the connection (SNIListener.TLS); only on an SNI
	// listener.
	Terminate bool
	// Backend is "namespace/service/port"; Endpoints its ready endpoints,
	// sorted, written into the stream file (a change reloads). Empty:
	// connections are closed.
	Backend   string
	Endpoints []Endpoint
	Upstream  StreamUpstream
	Proxy     StreamProxy
	// Source is the TransportServer or Ingress the route came from.
	Source ObjectRef
}
