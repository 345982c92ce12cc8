// Package loopback holds the tunnel's loopback integration tests: real
// servers, agents and frontends on 127.0.0.0/8 in one process.
package loopback
