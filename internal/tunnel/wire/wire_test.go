package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/tunnel/tunneltest"
)

func TestFrameRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	in := Hello{Version: 1, NodeName: "edge-1", NodeIPs: []netip.Addr{netip.MustParseAddr("10.0.0.1")},
		CIDRs: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}, DefaultRoute: true,
		Compression: []Compression{CompressionZstd}}
	if err := WriteFrame(&buf, in); err != nil {
		t.Fatal(err)
	}
	buf.WriteString("raw bytes after the frame")
	var out Hello
	if err := ReadFrame(&buf, &out); err != nil {
		t.Fatal(err)
	}
	if out.NodeName != in.NodeName || out.NodeIPs[0] != in.NodeIPs[0] || out.CIDRs[0] != in.CIDRs[0] || !out.DefaultRoute {
		t.Fatalf("got %+v, want %+v", out, in)
	}
	if rest, _ := io.ReadAll(&buf); string(rest) != "raw bytes after the frame" {
		t.Fatalf("frame consumed trailing data: %q", rest)
	}
}

func TestFrameTooLarge(t *testing.T) {
	hdr := []byte{0xff, 0xff, 0xff, 0xff}
	var v Hello
	if err := ReadFrame(bytes.NewReader(hdr), &v); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("err = %v, want ErrFrameTooLarge", err)
	}
}

// TestHelloLimits: at most MaxClaims node IPs, host names and CIDRs
// together, and at most MaxHelloSize bytes encoded.
func TestHelloLimits(t *testing.T) {
	hello := func(ips, hosts, cidrs int, hostLen int) *Hello {
		h := &Hello{Version: ProtocolVersion, NodeName: "edge-1"}
		for i := range ips {
			h.NodeIPs = append(h.NodeIPs, netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}))
		}
		for i := range hosts {
			h.HostNames = append(h.HostNames, fmt.Sprintf("%0*d", hostLen, i))
		}
		for i := range cidrs {
			h.CIDRs = append(h.CIDRs, netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 1, byte(i), 0}), 24))
		}
		return h
	}
	for _, tc := range []struct {
		name   string
		h      *Hello
		claims string
		size   string
	}{
		{"none", hello(0, 0, 0, 8), "", ""},
		{"256 node IPs", hello(256, 0, 0, 8), "", ""},
		{"257 node IPs", hello(257, 0, 0, 8), "257 claims (257 node IPs, 0 host names, 0 CIDRs) exceed the limit of 256 per agent", ""},
		{"256 mixed", hello(100, 100, 56, 8), "", ""},
		{"257 mixed", hello(100, 100, 57, 8), "257 claims", ""},
		{"256 long host names", hello(0, 256, 0, 253), "", "exceeds the limit of 65536 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []struct {
				err  error
				want string
			}{{tc.h.CheckLimits(), tc.claims}, {tc.h.CheckSize(), tc.size}} {
				if (c.err == nil) != (c.want == "") || (c.err != nil && !strings.Contains(c.err.Error(), c.want)) {
					t.Errorf("err = %v, want %q", c.err, c.want)
				}
			}
		})
	}
}

func TestParseAndNegotiate(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Compression
		wantErr bool
	}{
		{"", CompressionNone, false},
		{"none", CompressionNone, false},
		{"GZIP", CompressionGzip, false},
		{"zstd", CompressionZstd, false},
		{"lz4", "", true},
	} {
		got, err := ParseCompression(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseCompression(%q) = %q, %v", tc.in, got, err)
		}
	}
	if got := Negotiate(CompressionZstd, []Compression{CompressionGzip}); got != CompressionNone {
		t.Errorf("Negotiate unsupported = %q, want none", got)
	}
	if got := Negotiate(CompressionGzip, AllCompressions); got != CompressionGzip {
		t.Errorf("Negotiate supported = %q, want gzip", got)
	}
}

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t testing.TB) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ch := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		ch <- c
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return a, <-ch
}

type count struct{ n atomic.Int64 }

func (c *count) Add(v float64) { c.n.Add(int64(v)) }

// chain builds client ⇄ [Join] ⇄ wire ⇄ [Join] ⇄ backend and returns the
// client end, the backend end and the counters of the first Join.
func chain(t testing.TB, mode Compression) (client, backend net.Conn, st Stats, wireOut, rawOut *count) {
	t.Helper()
	client, p1 := tcpPair(t)
	t1, t2 := tcpPair(t)
	p2, backend := tcpPair(t)
	wireOut, rawOut = &count{}, &count{}
	st = Stats{RawOut: rawOut, WireOut: wireOut}
	go Join(p1, t1, mode, st)
	go Join(p2, t2, mode, Stats{})
	t.Cleanup(func() { client.Close(); backend.Close() })
	return client, backend, st, wireOut, rawOut
}

// TestJoinInteractive checks that small writes arrive without waiting for
// a compressor block to fill, in both directions, for every mode.
func TestJoinInteractive(t *testing.T) {
	for _, mode := range AllCompressions {
		t.Run(string(mode), func(t *testing.T) {
			client, backend, _, _, _ := chain(t, mode)
			deadline := time.Now().Add(5 * time.Second)
			client.SetDeadline(deadline)
			backend.SetDeadline(deadline)
			buf := make([]byte, 64)
			for i := 0; i < 20; i++ {
				if _, err := client.Write([]byte("ping")); err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadFull(backend, buf[:4]); err != nil || string(buf[:4]) != "ping" {
					t.Fatalf("backend read %q, %v", buf[:4], err)
				}
				if _, err := backend.Write([]byte("pong!")); err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadFull(client, buf[:5]); err != nil || string(buf[:5]) != "pong!" {
					t.Fatalf("client read %q, %v", buf[:5], err)
				}
			}
		})
	}
}

// TestJoinHalfClose checks that the client's EOF reaches the backend while
// the backend can still answer.
func TestJoinHalfClose(t *testing.T) {
	for _, mode := range AllCompressions {
		t.Run(string(mode), func(t *testing.T) {
			client, backend, _, _, _ := chain(t, mode)
			client.SetDeadline(time.Now().Add(5 * time.Second))
			backend.SetDeadline(time.Now().Add(5 * time.Second))
			client.Write([]byte("request"))
			client.(*net.TCPConn).CloseWrite()
			got, err := io.ReadAll(backend)
			if err != nil || string(got) != "request" {
				t.Fatalf("backend got %q, %v", got, err)
			}
			backend.Write([]byte("response after half-close"))
			backend.Close()
			got, err = io.ReadAll(client)
			if err != nil || string(got) != "response after half-close" {
				t.Fatalf("client got %q, %v", got, err)
			}
		})
	}
}

// TestCompressionRatio measures bytes on the wire for a 10 MB log-like
// stream; the target is at least 60% fewer bytes than raw.
func TestCompressionRatio(t *testing.T) {
	size := 10 << 20
	if testing.Short() {
		size = 1 << 20
	}
	payload := tunneltest.LogLines(size)
	for _, tc := range []struct {
		mode     Compression
		maxRatio float64 // wire/raw
	}{
		{CompressionNone, 1.0},
		{CompressionGzip, 0.40},
		{CompressionZstd, 0.40},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			client, backend, _, wireOut, rawOut := chain(t, tc.mode)
			done := make(chan error, 1)
			go func() {
				_, err := io.Copy(io.Discard, backend)
				done <- err
			}()
			// Write in 16 KiB pieces, as a log follower would.
			for off := 0; off < len(payload); off += 16 << 10 {
				end := min(off+16<<10, len(payload))
				if _, err := client.Write(payload[off:end]); err != nil {
					t.Fatal(err)
				}
			}
			client.(*net.TCPConn).CloseWrite()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			raw, wire := rawOut.n.Load(), wireOut.n.Load()
			if raw != int64(len(payload)) {
				t.Fatalf("raw bytes = %d, want %d", raw, len(payload))
			}
			ratio := float64(wire) / float64(raw)
			t.Logf("%s: raw %d B, wire %d B, ratio %.3f (%.1f%% fewer bytes)", tc.mode, raw, wire, ratio, 100*(1-ratio))
			if ratio > tc.maxRatio+0.001 {
				t.Errorf("ratio %.3f above %.2f", ratio, tc.maxRatio)
			}
		})
	}
}
