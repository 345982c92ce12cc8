package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"time"

	"github.com/hashicorp/yamux"

	"github.com/causeway/causeway/internal/tunnel/tunneltest"
)

// muxSection answers issue 36 §1's question whether yamux is the ceiling:
// one TLS connection on loopback carries a bulk stream and 64-byte round
// trips bare, as one yamux stream (the tunnel's window, 256 KiB), and as
// one HTTP/2 stream of the standard library (a full-duplex request and
// response, as ANP's gRPC rides). Only the multiplexer differs: no
// tunnel, no second hop.
func muxSection(bulkMB, rtts int, chunk []byte) error {
	p, err := tunneltest.NewPKI()
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AddCert(p.ServerCA.Cert)
	serverTLS := &tls.Config{Certificates: []tls.Certificate{p.Server.TLS}, NextProtos: []string{"h2"}}
	clientTLS := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", NextProtos: []string{"h2"}}
	pair := func() (client, server *tls.Conn, err error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, err
		}
		defer ln.Close()
		accepted := make(chan net.Conn, 1)
		go func() { c, _ := ln.Accept(); accepted <- c }()
		raw, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			return nil, nil, err
		}
		client, server = tls.Client(raw, clientTLS), tls.Server(<-accepted, serverTLS)
		errc := make(chan error, 1)
		go func() { errc <- server.Handshake() }()
		if err := client.Handshake(); err != nil {
			return nil, nil, err
		}
		return client, server, <-errc
	}

	type result struct {
		name     string
		bulk     float64 // MiB/s
		rps      float64
		p50, p99 time.Duration
	}
	var results []result

	// Bare TLS and yamux share the measurements on a net.Conn pair.
	streams := func(name string, open func() (client, server net.Conn, closeAll func(), err error)) error {
		c, s, closeAll, err := open()
		if err != nil {
			return err
		}
		go io.Copy(io.Discard, s)
		rate, err := pushBulk(c, chunk, bulkMB)
		closeAll()
		if err != nil {
			return err
		}
		if c, s, closeAll, err = open(); err != nil {
			return err
		}
		go io.Copy(s, s)
		rps, p50, p99, err := pingPong(c, c, rtts)
		closeAll()
		if err != nil {
			return err
		}
		results = append(results, result{name, rate, rps, p50, p99})
		return nil
	}
	if err := streams("TCP, no TLS, no multiplexer", func() (net.Conn, net.Conn, func(), error) {
		c, s, err := pair()
		if err != nil {
			return nil, nil, nil, err
		}
		rc, rs := c.NetConn(), s.NetConn() // the same sockets, after the handshake
		return rc, rs, func() { rc.Close(); rs.Close() }, nil
	}); err != nil {
		return err
	}
	if err := streams("TLS, no multiplexer", func() (net.Conn, net.Conn, func(), error) {
		c, s, err := pair()
		return c, s, func() { c.Close(); s.Close() }, err
	}); err != nil {
		return err
	}
	if err := streams("yamux over TLS (one stream, 256 KiB window)", func() (net.Conn, net.Conn, func(), error) {
		c, s, err := pair()
		if err != nil {
			return nil, nil, nil, err
		}
		cfg := yamux.DefaultConfig()
		cfg.MaxStreamWindowSize = 256 << 10
		cfg.LogOutput = io.Discard
		cs, _ := yamux.Client(c, cfg)
		ss, _ := yamux.Server(s, cfg)
		accepted := make(chan net.Conn, 1)
		go func() { st, _ := ss.Accept(); accepted <- st }()
		st, err := cs.Open()
		if err != nil {
			return nil, nil, nil, err
		}
		return st, <-accepted, func() { cs.Close(); ss.Close() }, nil
	}); err != nil {
		return err
	}

	// HTTP/2: one request whose body is the client's writes and whose
	// response is the server's.
	h2 := func(handler http.HandlerFunc) (w io.WriteCloser, r io.ReadCloser, closeAll func(), err error) {
		c, s, err := pair()
		if err != nil {
			return nil, nil, nil, err
		}
		srv := &http.Server{Handler: handler, Protocols: new(http.Protocols)}
		srv.Protocols.SetHTTP2(true)
		go srv.Serve(&oneConnListener{c: s, done: make(chan struct{})})
		tr := &http.Transport{TLSClientConfig: clientTLS, ForceAttemptHTTP2: true,
			DialTLSContext: func(context.Context, string, string) (net.Conn, error) { return c, nil }}
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetHTTP2(true)
		pr, pw := io.Pipe()
		req, _ := http.NewRequest(http.MethodPost, "https://127.0.0.1/", pr)
		type answer struct {
			resp *http.Response
			err  error
		}
		got := make(chan answer, 1)
		go func() { resp, err := tr.RoundTrip(req); got <- answer{resp, err} }()
		return pw, &lazyBody{got: func() (io.ReadCloser, error) {
				a := <-got
				if a.err != nil {
					return nil, a.err
				}
				if a.resp.ProtoMajor != 2 {
					return nil, fmt.Errorf("HTTP/%d, not HTTP/2", a.resp.ProtoMajor)
				}
				return a.resp.Body, nil
			}}, func() {
				pw.Close()
				tr.CloseIdleConnections()
				srv.Close()
				c.Close()
			}, nil
	}
	w, r, closeAll, err := h2(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		io.Copy(io.Discard, r.Body)
	})
	if err != nil {
		return err
	}
	go r.Read(make([]byte, 1)) // starts the round trip's response side
	rate, err := pushBulk(w, chunk, bulkMB)
	closeAll()
	if err != nil {
		return err
	}
	w, r, closeAll, err = h2(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		buf := make([]byte, 64)
		for {
			if _, err := io.ReadFull(r.Body, buf); err != nil {
				return
			}
			w.Write(buf)
			w.(http.Flusher).Flush()
		}
	})
	if err != nil {
		return err
	}
	rps, p50, p99, err := pingPong(w, r, rtts)
	closeAll()
	if err != nil {
		return err
	}
	results = append(results, result{"HTTP/2 over TLS (standard library, one stream)", rate, rps, p50, p99})

	fmt.Printf("Multiplexers alone, one TLS connection on loopback, one stream (%d MiB bulk, %d round trips of 64 bytes)\n\n", bulkMB, rtts)
	fmt.Println("| multiplexer | bulk MiB/s | vs TCP | vs bare TLS | round trips/s | p50 | p99 |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		fmt.Printf("| %s | %.0f | %.2f | %.2f | %.0f | %s | %s |\n", r.name, r.bulk, r.bulk/results[0].bulk, r.bulk/results[1].bulk, r.rps,
			r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond))
	}
	fmt.Println()
	return nil
}

// pushBulk writes mb MiB of chunk to w and returns MiB/s; the reader on
// the other side discards.
func pushBulk(w io.Writer, chunk []byte, mb int) (float64, error) {
	start := time.Now()
	for range mb * (1 << 20) / len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return 0, err
		}
	}
	return float64(mb) / time.Since(start).Seconds(), nil
}

// pingPong sends n 64-byte messages on w, each after the last one's echo
// came back on r, and returns the rate and the p50 and p99 round trip.
func pingPong(w io.Writer, r io.Reader, n int) (float64, time.Duration, time.Duration, error) {
	msg, back := bytes.Repeat([]byte("p"), 64), make([]byte, 64)
	lat := make([]time.Duration, 0, n)
	start := time.Now()
	for range n {
		t := time.Now()
		if _, err := w.Write(msg); err != nil {
			return 0, 0, 0, err
		}
		if _, err := io.ReadFull(r, back); err != nil {
			return 0, 0, 0, err
		}
		lat = append(lat, time.Since(t))
	}
	rate := float64(n) / time.Since(start).Seconds()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return rate, lat[len(lat)/2], lat[len(lat)*99/100], nil
}

// oneConnListener hands out one connection, then blocks until closed.
type oneConnListener struct {
	c    net.Conn
	done chan struct{}
	used bool
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	if !l.used {
		l.used = true
		return l.c, nil
	}
	<-l.done
	return nil, net.ErrClosed
}

func (l *oneConnListener) Close() error {
	select {
	case <-l.done:
	default:
		close(l.done)
	}
	return nil
}

func (l *oneConnListener) Addr() net.Addr { return l.c.LocalAddr() }

// lazyBody is a response body that waits for the response on first use.
type lazyBody struct {
	got  func() (io.ReadCloser, error)
	body io.ReadCloser
	err  error
}

func (b *lazyBody) Read(p []byte) (int, error) {
	if b.body == nil && b.err == nil {
		b.body, b.err = b.got()
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.body.Read(p)
}

func (b *lazyBody) Close() error {
	if b.body != nil {
		return b.body.Close()
	}
	return nil
}
