// Package harness holds what the integration and end-to-end tiers share
// when they drive a running controller: one-shot HTTP exchanges with its
// nginx, reading its Prometheus metrics, and a log buffer safe for
// concurrent writes.
package harness

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/test/echo"
)

// Result is one HTTP exchange through nginx.
type Result struct {
	Status   int
	Reply    echo.Reply // decoded when the backend answered JSON
	Location string
	Body     string
	PeerCN   string // the served certificate's common name, over HTTPS
	// Header is the response's header.
	Header http.Header
}

// Request is one request for Do.
type Request struct {
	Method, Scheme, Host, Path string
	Header                     map[string]string
	// Body is the number of bytes of request body to send.
	Body int
	// From is the local address to send from ("" for the system's
	// choice), such as another 127.x address to stand for another client.
	From string
	// ServerName is the TLS server name (SNI) to send, when it is to
	// differ from Host.
	ServerName string
	// Certificate is the TLS client certificate to show when asked.
	Certificate *tls.Certificate
}

// Get sends one GET for host+path to addr over scheme ("http" or
// "https", with SNI host and any certificate accepted). Every call opens
// a new connection, so requests spread over nginx workers, and redirects
// are returned, not followed.
func Get(scheme, addr, host, path string) (Result, error) {
	return Do(addr, Request{Method: http.MethodGet, Scheme: scheme, Host: host, Path: path})
}

// Do sends one request to addr, as Get does.
func Do(addr string, r Request) (Result, error) {
	client := &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				var d net.Dialer
				if r.From != "" {
					d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(r.From)}
				}
				return d.DialContext(ctx, network, addr)
			},
			TLSClientConfig:   tlsConfig(r),
			DisableKeepAlives: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	var reqBody io.Reader
	if r.Body > 0 {
		reqBody = bytes.NewReader(bytes.Repeat([]byte("x"), r.Body))
	}
	req, err := http.NewRequest(method, r.Scheme+"://"+r.Host+r.Path, reqBody)
	if err != nil {
		return Result{}, err
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return Result{}, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	out := Result{Status: resp.StatusCode, Location: resp.Header.Get("Location"), Body: string(body), Header: resp.Header}
	if resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
		out.PeerCN = resp.TLS.PeerCertificates[0].Subject.CommonName
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		json.Unmarshal(body, &out.Reply)
	}
	return out, nil
}

// tlsConfig is the TLS client of request r: any server certificate
// accepted, r's server name and client certificate.
func tlsConfig(r Request) *tls.Config {
	c := &tls.Config{InsecureSkipVerify: true, ServerName: cmp.Or(r.ServerName, r.Host)}
	if r.Certificate != nil {
		c.Certificates = []tls.Certificate{*r.Certificate}
	}
	return c
}

// scrapeTimeout bounds one read of a metrics page by Metric:
// Prometheus's default scrape timeout. The controller's scrape may itself
// wait up to 2 s for nginx's status (metrics.stubStatusTimeout), which a
// reload on a loaded machine can take; a 2 s client gave up on such
// scrapes (TestNewHostsWithoutReload, 2026-11-30).
const scrapeTimeout = 10 * time.Second

// Metric returns the sum of the samples of metric name served at url whose
// label sets contain every given pair (e.g. `result="success"`); 0 when
// there are none.
func Metric(url, name string, labels ...string) (float64, error) {
	return MetricWithin(scrapeTimeout, url, name, labels...)
}

// MetricWithin is Metric with its own bound on the read, for callers that
// need the answer to be recent rather than to come.
func MetricWithin(timeout time.Duration, url, name string, labels ...string) (float64, error) {
	client := &http.Client{Timeout: timeout}
	resp, err := client.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return 0, err
	}
	return SumMetric(string(text), name, labels...)
}

// SumMetric adds up the samples of name in a Prometheus text page whose
// label sets contain every given pair.
func SumMetric(text, name string, labels ...string) (float64, error) {
	sum := 0.0
	for line := range strings.Lines(text) {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		match := true
		for _, l := range labels {
			if !strings.Contains(rest, l) {
				match = false
			}
		}
		if !match {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("metric line %q: %w", line, err)
		}
		sum += v
	}
	return sum, nil
}

// SyncBuffer collects a process's output; safe for concurrent use.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Eventually retries check every 50 ms until it returns nil, and fails the
// test with check's last error when timeout passes first.
func Eventually(t testing.TB, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not true within %s: %v", timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
