package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// measureTLS compares full TLS handshakes per second to a host with its
// own certificate. The generated config names the certificate with a
// variable (ssl_certificate /path$causeway_cert_reload), so nginx reads
// and parses it at every handshake, which is what lets a renewed secret
// apply without a reload; the hand-written config loads it once at start,
// and for a second host the same way as the generated one.
func measureTLS(ctx context.Context, c *config, sides []side, cert *certificate, rep *report) error {
	fmt.Fprintf(os.Stderr, "(e) TLS handshakes, %s: %d clients, %d rounds of %s per side ...\n", cert.kind, c.tlsConns, c.rounds, c.tlsDuration)
	load := func(sd side, d time.Duration) (sample, error) {
		return tlsLoad(ctx, sd.httpsAddr, sd.tlsHost(cert), cert.host, c.tlsConns, d)
	}
	res, err := abRounds(ctx, c.rounds, sides, 500*time.Millisecond, c.tlsDuration, load)
	if err != nil {
		return err
	}
	// The static hand-written side is the reference.
	const ref = 1
	t := &table{title: "(e) TLS handshakes, " + cert.kind + " certificate: loaded per handshake vs at start", left: 2, header: []string{"config", "certificate"}}
	ratios, cpuRatios := compareTable(t, "handshake", sides, res, ref, func(i int) []string {
		switch {
		case i == 0:
			return []string{"generated: `ssl_certificate_by_lua`, parsed once per worker"}
		case i == ref:
			return []string{"static `ssl_certificate`"}
		case sides[i].luaCert:
			return []string{"`ssl_certificate_by_lua`, parsed once per worker"}
		}
		return []string{"variable path, read per handshake"}
	})
	t.note("%d Go clients for %s per run, rounds alternating the configs; each connection is a full TLS 1.3 handshake (no session cache, so no resumption; X25519) followed by one proxied `GET /` with `Connection: close`. \"vs\" columns are the median over rounds of the ratio to the static hand-written config in the same round.", c.tlsConns, c.tlsDuration)
	t.note("All: one nginx worker, `ssl_protocols TLSv1.2 TLSv1.3`, a shared session cache. The hand-written rows are one nginx, three server names, one certificate file: static, with a `$variable` appended to the path, and through `ssl_certificate_by_lua` handing nginx a certificate parsed once per worker. The generated row (ssl_certificate_by_lua, the default with the Lua module) also runs the Lua balancer and its headers for the request (see (d)); without the Lua module the controller falls back to the variable path.")
	t.note("The Go clients' own handshake work shares the machine's cores with nginx, so handshakes/s understates the difference; nginx CPU/handshake (the worker's CPU per connection) does not. \"nginx worker busy\" well below 100%% means the clients, not nginx, limited the rate.")
	t.note("%s", failureNote(res))
	rep.addTable(t)
	rep.target("(e) TLS handshakes/s, "+cert.kind+", generated / hand-written", "informational",
		fmt.Sprintf("%s (nginx CPU %.2f×)", pct(ratios[0]), cpuRatios[0]), nil)
	rep.target("(e) TLS handshakes/s, "+cert.kind+", ssl_certificate_by_lua / static", "informational",
		fmt.Sprintf("%s (nginx CPU %.2f×)", pct(ratios[3]), cpuRatios[3]), nil)
	return nil
}

// tlsLoad runs conns clients that each connect to addr with server name
// host, handshake, send one request and close, over and over, for d. A
// handshake counts when the certificate's common name is wantCN and the
// answer is a 200.
func tlsLoad(parent context.Context, addr, host, wantCN string, conns int, d time.Duration) (sample, error) {
	start := time.Now()
	end := start.Add(d)
	ctx, cancel := context.WithDeadline(parent, end)
	defer cancel()
	cfg := tlsConfig(host)
	var mu sync.Mutex
	s := sample{why: map[string]int{}}
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			ok, why := 0, map[string]int{}
			// The clock, not ctx.Err, ends the loop: a dial past the
			// deadline fails at once, possibly before ctx notices.
			for time.Now().Before(end) {
				cn, status, err := tlsRequest(ctx, addr, cfg)
				switch {
				case err != nil && (ctx.Err() != nil || !time.Now().Before(end)):
					// cut off by the end of the run
				case err != nil:
					why[err.Error()]++
				case status != http.StatusOK || cn != wantCN:
					why[fmt.Sprintf("HTTP %d, certificate %q", status, cn)]++
				default:
					ok++
				}
			}
			mu.Lock()
			s.count += ok
			for k, v := range why {
				s.bad += v
				s.why[k] += v
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	s.elapsed = time.Since(start)
	return s, parent.Err()
}

// tlsRequest opens a new TLS connection, sends one request and returns the
// certificate's common name and the answer's status.
func tlsRequest(ctx context.Context, addr string, cfg *tls.Config) (string, int, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", 0, fmt.Errorf("dial: %w", err)
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(5 * time.Second))
	conn := tls.Client(raw, cfg)
	if err := conn.HandshakeContext(ctx); err != nil {
		return "", 0, fmt.Errorf("handshake: %w", err)
	}
	cn := ""
	if pcs := conn.ConnectionState().PeerCertificates; len(pcs) > 0 {
		cn = pcs[0].Subject.CommonName
	}
	if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: "+cfg.ServerName+"\r\nConnection: close\r\n\r\n"); err != nil {
		return cn, 0, fmt.Errorf("write request: %w", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return cn, 0, fmt.Errorf("read response: %w", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return cn, resp.StatusCode, nil
}
