package harness

import (
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"testing"
)

// given are the ports FreePort handed out in this process. A port is
// never handed out twice: two parallel tests could otherwise both find it
// free before either binds it (one on an address of its own, the other,
// a controller's health port, on all addresses), and the later bind
// fails.
var given struct {
	sync.Mutex
	ports map[int]bool
}

// Ports below Linux's default ephemeral range (32768-60999). A port the
// kernel hands out for ":0" is ephemeral: between the check and the
// controller's bind, any outgoing connection on the machine may be given
// it as its local port, and the controller then fails with "address
// already in use". Ports outside the range are only ever taken by
// explicit binds. 20000-20999 is left out too: it is the controller's
// default --gateway-port-range, which may hold none of its own ports.
const (
	portLow  = 21000
	portHigh = 32767
)

// FreePort returns a TCP port below the ephemeral range that is free both
// on ip and on all addresses (the controller binds its health and metrics
// ports on all addresses).
func FreePort(t testing.TB, ip string) int {
	t.Helper()
	for range 200 {
		port := strconv.Itoa(portLow + rand.IntN(portHigh-portLow+1))
		a, err := net.Listen("tcp", net.JoinHostPort(ip, port))
		if err != nil {
			continue
		}
		a.Close()
		b, err := net.Listen("tcp", ":"+port)
		if err != nil {
			continue
		}
		b.Close()
		n, _ := strconv.Atoi(port)
		given.Lock()
		taken := given.ports[n]
		if !taken {
			if given.ports == nil {
				given.ports = map[int]bool{}
			}
			given.ports[n] = true
		}
		given.Unlock()
		if taken {
			continue
		}
		return n
	}
	t.Fatalf("no free port in %d-%d on %s", portLow, portHigh, ip)
	return 0
}
