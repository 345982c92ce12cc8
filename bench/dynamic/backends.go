package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/causeway/causeway/test/echo"
)

// backend is one echo server, standing in for one pod: its own loopback
// address, on the port every endpoint of the Service shares.
type backend struct {
	IP   string
	Addr string // IP:port, as the echo reply and X-Echo-Endpoint name it
	srv  *http.Server
	once sync.Once
}

// pool starts backends for one Service on fresh addresses sharing a port.
type pool struct {
	e      *env
	port   int
	anchor net.Listener

	mu   sync.Mutex
	live map[*backend]bool
	wg   sync.WaitGroup
}

// newPool reserves a port. An anchor listener holds it on an address of
// its own for the whole run, so that no wildcard listener elsewhere on the
// machine can take it while backends come and go.
func newPool(e *env) (*pool, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(e.nextIP(anchorNet), "0"))
	if err != nil {
		return nil, fmt.Errorf("reserve backend port: %w", err)
	}
	p := &pool{e: e, port: l.Addr().(*net.TCPAddr).Port, anchor: l, live: map[*backend]bool{}}
	e.onClose(p.close)
	return p, nil
}

// start runs a backend on a fresh address.
func (p *pool) start() (*backend, error) {
	var lastErr error
	for try := 0; try < 10; try++ {
		ip := p.e.nextIP(backendNet)
		l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(p.port)))
		if err != nil {
			lastErr = err
			continue
		}
		b := &backend{IP: ip, Addr: l.Addr().String()}
		// No idle timeout: nginx closes its idle upstream connections
		// first (keepalive_timeout), so the backend never races a reused
		// connection with its own close.
		b.srv = &http.Server{Handler: echo.Handler(service, b.Addr), ReadHeaderTimeout: 5 * time.Second}
		p.mu.Lock()
		p.live[b] = true
		p.mu.Unlock()
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			b.srv.Serve(l)
		}()
		return b, nil
	}
	return nil, fmt.Errorf("start backend on port %d: %w", p.port, lastErr)
}

// startN runs n backends.
func (p *pool) startN(n int) ([]*backend, error) {
	out := make([]*backend, 0, n)
	for range n {
		b, err := p.start()
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// stop shuts a backend down gracefully: it stops accepting, closes idle
// connections and lets in-flight requests finish (for at most 5 s).
func (p *pool) stop(b *backend) {
	b.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := b.srv.Shutdown(ctx); err != nil {
			b.srv.Close()
		}
		p.mu.Lock()
		delete(p.live, b)
		p.mu.Unlock()
	})
}

// stopAfter stops b once delay has passed, in the background; close waits
// for it.
func (p *pool) stopAfter(b *backend, delay time.Duration) {
	p.wg.Add(1)
	time.AfterFunc(delay, func() {
		defer p.wg.Done()
		p.stop(b)
	})
}

// close stops every backend still running and releases the port.
func (p *pool) close() {
	p.mu.Lock()
	var bs []*backend
	for b := range p.live {
		bs = append(bs, b)
	}
	p.mu.Unlock()
	for _, b := range bs {
		b.srv.Close()
		b.once.Do(func() {})
	}
	p.anchor.Close()
	p.wg.Wait()
}

// ips lists the backends' addresses.
func ips(bs []*backend) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.IP
	}
	return out
}
