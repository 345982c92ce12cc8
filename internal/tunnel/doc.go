// Package tunnel is the root of Causeway's reverse tunnel: agents on edge
// nodes dial out to server replicas in the cloud, and the servers forward
// connections from their frontends (HTTP CONNECT, Konnectivity gRPC and a
// transparent DNAT listener) through those agents.
//
// The subpackages each provide one piece:
//   - wire: the framing, handshake messages, transport configuration and
//     per-connection compression shared by both sides;
//   - route: the pure routing table that maps a destination to an agent;
//   - server and agent: the two processes;
//   - iptables: the DNAT rule manager for the transparent listener;
//   - certs: certificates from files or from CertificateSigningRequests,
//     rotated without dropping links;
//   - leases: the server count from labelled coordination Leases;
//   - metrics: the Prometheus collectors both sides register.
//
// Every tunneled connection is its own yamux stream with its own flow-control
// window, so a slow reader stalls only its own connection, unlike
// apiserver-network-proxy, which multiplexes all connections of an agent over
// one gRPC stream.
package tunnel
