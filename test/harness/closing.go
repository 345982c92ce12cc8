package harness

import (
	"net"
	"strconv"
	"sync/atomic"
	"testing"
)

// ClosingListener listens on ip:port (port 0: any) and closes every
// connection it accepts before a byte is read, so each attempt a proxy
// makes on it fails ("upstream prematurely closed connection"). It
// returns the port and the count of connections accepted.
func ClosingListener(t testing.TB, ip string, port int) (int, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port, &n
}
