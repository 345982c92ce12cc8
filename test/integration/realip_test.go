package integration

import (
	"bufio"
	"context"
	"crypto/tls"
	be "encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/causeway/causeway/test/echo"
)

// The real client address: what the backend is told (X-Real-IP,
// X-Forwarded-*) and what the access log shows, for spoofed headers from
// untrusted peers, forwarded headers from trusted ones, and the PROXY
// protocol (ConfigMap: use-forwarded-headers, enable-real-ip,
// compute-full-forwarded-for, proxy-real-ip-cidr, use-proxy-protocol,
// proxy-protocol-header-timeout).

// spoofed are the headers a client sends, claiming another address,
// scheme, host and port.
var spoofed = map[string]string{
	"X-Forwarded-For":   "198.51.100.1, 203.0.113.9",
	"X-Real-IP":         "203.0.113.66",
	"X-Forwarded-Proto": "https",
	"X-Forwarded-Host":  "evil.test, other.test",
	"X-Forwarded-Port":  "8443",
}

// seen is what the backend saw of one request.
type seen struct {
	Status                         int
	Location                       string
	RealIP, For, Proto, Host, Port string
}

func seenOf(status int, location string, body []byte) seen {
	var r echo.Reply
	json.Unmarshal(body, &r)
	return seen{Status: status, Location: location, RealIP: r.Headers["X-Real-IP"], For: r.ForwardedFor, Proto: r.ForwardedProto,
		Host: r.Headers["X-Forwarded-Host"], Port: r.Headers["X-Forwarded-Port"]}
}

// getFrom sends GET http://host/path to addr from the local address from,
// with the given headers.
func getFrom(from, addr, host, path string, header map[string]string) (seen, error) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 3 * time.Second}
	client := &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, addr)
			},
			DisableKeepAlives: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, err := http.NewRequest(http.MethodGet, "http://"+host+path, nil)
	if err != nil {
		return seen{}, err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return seen{}, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return seenOf(resp.StatusCode, resp.Header.Get("Location"), body), nil
}

// logLine returns the access log line of the request for path.
func logLine(c *controller, path string) string {
	for line := range strings.Lines(c.log.String()) {
		if strings.Contains(line, `"GET `+path+` HTTP/1.1"`) {
			return line
		}
	}
	return ""
}

func realIPConfigMap(data string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: config, namespace: causeway}\ndata: {" + data + "}\n"
}

func TestRealIPForwardedHeaders(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	m := ingressClass + serviceYAML("default", "web", 80, web) +
		ingressYAML("default", "web", "web.test", "Prefix / web") +
		tlsSecretYAML(t, "default", "tls", "tls.test", 0) +
		tlsIngressYAML("default", "tls", "tls.test", "tls", "web")
	// Forwarded headers on, but the trusted range excludes the clients.
	c := startController(t, map[string]string{"app.yaml": m,
		"config.yaml": realIPConfigMap(`use-forwarded-headers: "true", proxy-real-ip-cidr: "10.0.0.0/8"`)})
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort))
	port := strconv.Itoa(c.HTTPPort)
	const trusted, untrusted = "127.0.0.2", "127.0.0.3"

	ignored := func(from string) seen {
		return seen{Status: 200, RealIP: from, For: from, Proto: "http", Host: "web.test", Port: port}
	}
	check := func(what, from, path string, want seen) {
		t.Helper()
		got, err := getFrom(from, addr, "web.test", path, spoofed)
		if err != nil || got != want {
			t.Errorf("%s: from %s: %+v (%v), want %+v", what, from, got, err, want)
		}
	}
	check("untrusted peer", trusted, "/excluded", ignored(trusted))
	// The redirect goes by the scheme of the connection, not the header.
	if got, err := getFrom(trusted, addr, "tls.test", "/", spoofed); err != nil || got.Status != 308 {
		t.Errorf("untrusted X-Forwarded-Proto: https must not stop the redirect: %+v %v", got, err)
	}

	// One peer trusted: its forwarded headers are believed, another's are not.
	c.WriteManifest("config.yaml", realIPConfigMap(`use-forwarded-headers: "true", proxy-real-ip-cidr: "10.0.0.0/8,127.0.0.2"`))
	trustedSeen := seen{Status: 200, RealIP: "203.0.113.9", For: "203.0.113.9", Proto: "https", Host: "evil.test", Port: "8443"}
	eventually(t, 10*time.Second, func() error {
		if got, err := getFrom(trusted, addr, "web.test", "/", spoofed); err != nil || got != trustedSeen {
			return fmt.Errorf("trusted peer: %+v (%v), want %+v", got, err, trustedSeen)
		}
		return nil
	})
	check("trusted peer", trusted, "/trusted", trustedSeen)
	check("untrusted peer", untrusted, "/untrusted", ignored(untrusted))
	// A trusted peer without headers is the client itself.
	if got, err := getFrom(trusted, addr, "web.test", "/", nil); err != nil || got != ignored(trusted) {
		t.Errorf("trusted peer without headers: %+v (%v)", got, err)
	}
	// A TLS-offloading proxy's X-Forwarded-Proto: https stops the redirect.
	if got, err := getFrom(trusted, addr, "tls.test", "/", spoofed); err != nil || got.Status != 200 || got.Proto != "https" {
		t.Errorf("trusted X-Forwarded-Proto: https: %+v %v, want no redirect", got, err)
	}
	if got, err := getFrom(untrusted, addr, "tls.test", "/", spoofed); err != nil || got.Status != 308 {
		t.Errorf("untrusted X-Forwarded-Proto: https: %+v %v, want the redirect", got, err)
	}
	// The access log shows the address the realip module chose.
	eventually(t, 5*time.Second, func() error {
		if l := logLine(c, "/trusted"); !strings.HasPrefix(l, "203.0.113.9 ") {
			return fmt.Errorf("access log of the trusted request: %q", l)
		}
		if l := logLine(c, "/untrusted"); !strings.HasPrefix(l, untrusted+" ") {
			return fmt.Errorf("access log of the untrusted request: %q", l)
		}
		return nil
	})

	// compute-full-forwarded-for: the trusted chain goes on, the peer appended.
	c.WriteManifest("config.yaml", realIPConfigMap(`use-forwarded-headers: "true", compute-full-forwarded-for: "true", proxy-real-ip-cidr: "127.0.0.2/32"`))
	full := trustedSeen
	full.For = "198.51.100.1, 203.0.113.9, 127.0.0.2"
	eventually(t, 10*time.Second, func() error {
		if got, err := getFrom(trusted, addr, "web.test", "/", spoofed); err != nil || got != full {
			return fmt.Errorf("full chain: %+v (%v), want %+v", got, err, full)
		}
		return nil
	})
	check("full chain, untrusted peer", untrusted, "/untrusted-full", ignored(untrusted))
	noChain := ignored(trusted)
	if got, err := getFrom(trusted, addr, "web.test", "/", nil); err != nil || got != noChain {
		t.Errorf("full chain, no incoming header: %+v (%v), want %+v", got, err, noChain)
	}

	// enable-real-ip alone: the address from a custom header, nothing else.
	c.WriteManifest("config.yaml", realIPConfigMap(`enable-real-ip: "true", forwarded-for-header: "X-Client-Address", proxy-real-ip-cidr: "127.0.0.2/32"`))
	custom := map[string]string{"X-Client-Address": "192.0.2.44"}
	for k, v := range spoofed {
		custom[k] = v
	}
	realOnly := seen{Status: 200, RealIP: "192.0.2.44", For: "192.0.2.44", Proto: "http", Host: "web.test", Port: port}
	eventually(t, 10*time.Second, func() error {
		if got, err := getFrom(trusted, addr, "web.test", "/", custom); err != nil || got != realOnly {
			return fmt.Errorf("enable-real-ip: %+v (%v), want %+v", got, err, realOnly)
		}
		return nil
	})
	if got, err := getFrom(untrusted, addr, "web.test", "/", custom); err != nil || got != ignored(untrusted) {
		t.Errorf("enable-real-ip, untrusted peer: %+v (%v)", got, err)
	}

	// Back to the defaults: nothing a client sends is believed.
	c.WriteManifest("config.yaml", realIPConfigMap(``))
	eventually(t, 10*time.Second, func() error {
		if got, err := getFrom(trusted, addr, "web.test", "/", custom); err != nil || got != ignored(trusted) {
			return fmt.Errorf("defaults: %+v (%v), want %+v", got, err, ignored(trusted))
		}
		return nil
	})
	check("defaults", trusted, "/defaults", ignored(trusted))
	eventually(t, 5*time.Second, func() error {
		if l := logLine(c, "/defaults"); !strings.HasPrefix(l, trusted+" ") {
			return fmt.Errorf("access log with the defaults: %q", l)
		}
		return nil
	})
}

// proxyV1 is a PROXY protocol v1 header.
func proxyV1(src, dst netip.AddrPort) string {
	family := "TCP4"
	if src.Addr().Is6() {
		family = "TCP6"
	}
	return fmt.Sprintf("PROXY %s %s %s %d %d\r\n", family, src.Addr(), dst.Addr(), src.Port(), dst.Port())
}

// proxyV2 is a PROXY protocol v2 header, command PROXY, over TCP.
func proxyV2(src, dst netip.AddrPort) []byte {
	h := []byte("\r\n\r\n\x00\r\nQUIT\n")
	h = append(h, 0x21) // version 2, command PROXY
	var addrs []byte
	if src.Addr().Is4() {
		h = append(h, 0x11) // AF_INET, STREAM
		s, d := src.Addr().As4(), dst.Addr().As4()
		addrs = append(append(addrs, s[:]...), d[:]...)
	} else {
		h = append(h, 0x21) // AF_INET6, STREAM
		s, d := src.Addr().As16(), dst.Addr().As16()
		addrs = append(append(addrs, s[:]...), d[:]...)
	}
	addrs = be.BigEndian.AppendUint16(addrs, src.Port())
	addrs = be.BigEndian.AppendUint16(addrs, dst.Port())
	h = be.BigEndian.AppendUint16(h, uint16(len(addrs)))
	return append(h, addrs...)
}

// viaProxyProtocol opens a connection to addr, writes header, then sends
// one request for host (over TLS when tlsName is set).
func viaProxyProtocol(addr string, header []byte, host string, useTLS bool, extra map[string]string) (seen, error) {
	conn, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return seen{}, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write(header); err != nil {
		return seen{}, err
	}
	var rw net.Conn = conn
	if useTLS {
		tc := tls.Client(conn, &tls.Config{ServerName: host, InsecureSkipVerify: true})
		if err := tc.Handshake(); err != nil {
			return seen{}, err
		}
		rw = tc
	}
	req := "GET / HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n"
	for k, v := range extra {
		req += k + ": " + v + "\r\n"
	}
	if _, err := io.WriteString(rw, req+"\r\n"); err != nil {
		return seen{}, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(rw), nil)
	if err != nil {
		return seen{}, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return seenOf(resp.StatusCode, resp.Header.Get("Location"), body), nil
}

func TestRealIPProxyProtocol(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	m := ingressClass + serviceYAML("default", "web", 80, web) +
		ingressYAML("default", "web", "web.test", "Prefix / web") +
		tlsSecretYAML(t, "default", "tls", "tls.test", 0) +
		tlsIngressYAML("default", "tls", "tls.test", "tls", "web")
	c := startController(t, map[string]string{"app.yaml": m,
		"config.yaml": realIPConfigMap(`use-proxy-protocol: "true", proxy-real-ip-cidr: "127.0.0.0/8", proxy-protocol-header-timeout: "2s"`)})
	httpAddr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort))
	httpsAddr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPSPort))
	lb := netip.MustParseAddrPort("10.0.0.1:80")

	for _, tc := range []struct {
		name   string
		addr   string
		header []byte
		host   string
		tls    bool
		want   seen
	}{
		{"v1 TCP4", httpAddr, []byte(proxyV1(netip.MustParseAddrPort("203.0.113.7:51234"), lb)), "web.test", false,
			seen{Status: 200, RealIP: "203.0.113.7", For: "203.0.113.7", Proto: "http", Host: "web.test", Port: "80"}},
		{"v1 TCP6", httpAddr, []byte(proxyV1(netip.MustParseAddrPort("[2001:db8::5]:51234"), netip.MustParseAddrPort("[2001:db8::1]:8080"))), "web.test", false,
			seen{Status: 200, RealIP: "2001:db8::5", For: "2001:db8::5", Proto: "http", Host: "web.test", Port: "8080"}},
		{"v2 TCP4", httpAddr, proxyV2(netip.MustParseAddrPort("198.51.100.20:40000"), lb), "web.test", false,
			seen{Status: 200, RealIP: "198.51.100.20", For: "198.51.100.20", Proto: "http", Host: "web.test", Port: "80"}},
		{"v2 TCP6 over TLS", httpsAddr, proxyV2(netip.MustParseAddrPort("[2001:db8::7]:40000"), netip.MustParseAddrPort("[2001:db8::1]:443")), "tls.test", true,
			seen{Status: 200, RealIP: "2001:db8::7", For: "2001:db8::7", Proto: "https", Host: "tls.test", Port: "443"}},
		// A load balancer that offloads TLS on its port 443: no redirect.
		{"v2 TLS offloaded", httpAddr, proxyV2(netip.MustParseAddrPort("198.51.100.21:40000"), netip.MustParseAddrPort("10.0.0.1:443")), "tls.test", false,
			seen{Status: 200, RealIP: "198.51.100.21", For: "198.51.100.21", Proto: "https", Host: "tls.test", Port: "443"}},
	} {
		got, err := viaProxyProtocol(tc.addr, tc.header, tc.host, tc.tls, spoofed)
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v (%v), want %+v", tc.name, got, err, tc.want)
		}
	}

	// Without a PROXY header the connection is closed unanswered.
	for _, a := range []string{httpAddr, httpsAddr} {
		conn, err := net.Dial("tcp", a)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(conn, "GET / HTTP/1.1\r\nHost: web.test\r\nX-Forwarded-For: 203.0.113.1\r\n\r\n")
		// Closed with unread data, the connection may also be reset.
		if b, err := io.ReadAll(conn); len(b) != 0 || err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("%s: a request without the PROXY header got %q (%v), want the connection closed", a, b, err)
		}
		conn.Close()
	}

	// A silent connection is closed after proxy-protocol-header-timeout.
	conn, err := net.Dial("tcp", httpAddr)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	b, err := io.ReadAll(conn)
	conn.Close()
	if took := time.Since(start); err != nil || len(b) != 0 || took < 1500*time.Millisecond || took > 4*time.Second {
		t.Errorf("silent connection: closed after %s with %q (%v), want about 2s", took, b, err)
	}

	// A load balancer outside proxy-real-ip-cidr is not believed: the client
	// is the TCP peer.
	c.WriteManifest("config.yaml", realIPConfigMap(`use-proxy-protocol: "true", proxy-real-ip-cidr: "10.0.0.0/8"`))
	eventually(t, 10*time.Second, func() error {
		got, err := viaProxyProtocol(httpAddr, []byte(proxyV1(netip.MustParseAddrPort("203.0.113.7:51234"), lb)), "web.test", false, spoofed)
		if err != nil || got.RealIP != "127.0.0.1" || got.For != "127.0.0.1" {
			return fmt.Errorf("untrusted load balancer: %+v (%v), want 127.0.0.1", got, err)
		}
		return nil
	})

	// use-proxy-protocol off again: plain requests are served.
	c.WriteManifest("config.yaml", realIPConfigMap(``))
	eventually(t, 10*time.Second, func() error {
		if r, err := c.get("http", "web.test", "/"); err != nil || r.Status != 200 || r.Reply.Headers["X-Real-IP"] != "127.0.0.1" {
			return fmt.Errorf("plain request after PROXY protocol is off: %d %v (%v)", r.Status, r.Reply.Headers, err)
		}
		return nil
	})
}
