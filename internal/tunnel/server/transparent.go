package server

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/causeway/causeway/internal/tunnel/wire"
)

// TransparentFrontend accepts connections that iptables DNAT'd to it,
// recovers each one's original destination with SO_ORIGINAL_DST and
// tunnels it there. Clients (Prometheus, metrics-server, older
// kube-apiservers) need no proxy support.
type TransparentFrontend struct {
	Server      *Server
	Compression wire.Compression
}

const transparentName = "transparent"

// ServeTransparent serves f on ln (a TCP listener) until ctx ends.
func ServeTransparent(ctx context.Context, ln net.Listener, f *TransparentFrontend) error {
	go func() { <-ctx.Done(); ln.Close() }()
	self, _ := netip.ParseAddrPort(ln.Addr().String())
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("accept transparent: %w", err)
		}
		go f.handle(ctx, c.(*net.TCPConn), self)
	}
}

func (f *TransparentFrontend) handle(ctx context.Context, c *net.TCPConn, self netip.AddrPort) {
	dst, err := OriginalDestination(c)
	if err != nil || dst == self || (dst.Port() == self.Port() && dst.Addr().IsLoopback()) {
		// Not redirected: connecting to the listener itself would loop.
		f.Server.log.Info("transparent connection without a redirected destination", "remote", c.RemoteAddr().String(), "err", err)
		c.SetLinger(0)
		c.Close()
		return
	}
	t, err := f.Server.Dial(ctx, transparentName, dst.String(), f.Compression)
	if err != nil {
		// A reset tells the client at once that the destination is not
		// reachable; there is no protocol to carry a reason.
		c.SetLinger(0)
		c.Close()
		return
	}
	f.Server.Forward(transparentName, c, t)
}

// OriginalDestination returns where a DNAT'd TCP connection was headed
// before netfilter rewrote it.
func OriginalDestination(c *net.TCPConn) (netip.AddrPort, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("original destination: %w", err)
	}
	local, _ := netip.ParseAddrPort(c.LocalAddr().String())
	var out netip.AddrPort
	var serr error
	err = rc.Control(func(fd uintptr) {
		if local.Addr().Unmap().Is4() {
			var sa unix.RawSockaddrInet4
			l := uint32(unsafe.Sizeof(sa))
			serr = getsockopt(int(fd), unix.SOL_IP, unix.SO_ORIGINAL_DST, unsafe.Pointer(&sa), &l)
			port := uint16(sa.Port>>8 | sa.Port<<8)
			out = netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), port)
			return
		}
		var sa unix.RawSockaddrInet6
		l := uint32(unsafe.Sizeof(sa))
		serr = getsockopt(int(fd), unix.SOL_IPV6, ip6tSOOriginalDst, unsafe.Pointer(&sa), &l)
		port := uint16(sa.Port>>8 | sa.Port<<8)
		out = netip.AddrPortFrom(netip.AddrFrom16(sa.Addr), port)
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("original destination: %w", err)
	}
	return out, nil
}

func getsockopt(fd, level, name int, v unsafe.Pointer, l *uint32) error {
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), uintptr(level), uintptr(name), uintptr(v), uintptr(unsafe.Pointer(l)), 0)
	if e != 0 {
		return syscall.Errno(e)
	}
	return nil
}

// ip6tSOOriginalDst is IP6T_SO_ORIGINAL_DST from linux/netfilter_ipv6/ip6_tables.h.
const ip6tSOOriginalDst = 80
