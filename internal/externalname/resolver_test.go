package externalname

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/causeway/causeway/test/dnstest"
)

func startZone(t *testing.T) *dnstest.Server { return dnstest.Start(t, "127.0.0.1") }

// runningOn starts a Resolver asking z, keeping names, and stops it when
// the test ends.
func runningOn(t *testing.T, z *dnstest.Server, names ...string) *Resolver {
	r := New(fast())
	r.Configure(Settings{Servers: []netip.AddrPort{z.Addr}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	r.Keep(names)
	return r
}

// await waits for name's answer to satisfy ok.
func await(t *testing.T, r *Resolver, name string, ok func(Answer) bool) Answer {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		a := r.Lookup(name)
		if ok(a) {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: answer %+v", name, a)
		}
		select {
		case <-r.Changed():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func fast() Options {
	return Options{MinTTL: 20 * time.Millisecond, Retry: 50 * time.Millisecond, Timeout: 300 * time.Millisecond}
}

func TestResolveARecords(t *testing.T) {
	z := startZone(t)
	z.Set("db.test. A", "db.test. 60 IN A 192.0.2.2", "db.test. 60 IN A 192.0.2.1", "db.test. 60 IN A 192.0.2.1")
	r := runningOn(t, z, "db.test")
	a := await(t, r, "db.test", func(a Answer) bool { return a.Resolved })
	if !slices.Equal(a.Addrs, addrs("192.0.2.1", "192.0.2.2")) || a.Err != nil || a.Gone {
		t.Fatalf("answer %+v, want 192.0.2.1 and .2, sorted and once each", a)
	}
	if n := z.Queries("db.test. AAAA"); n != 0 {
		t.Fatalf("AAAA asked %d times though A answered", n)
	}
}

// TestResolveFollowsTTL: a name is asked again when its TTL runs out, and
// a new address is noticed.
func TestResolveFollowsTTL(t *testing.T) {
	z := startZone(t)
	z.Set("db.test. A", "db.test. 0 IN A 192.0.2.1")
	r := runningOn(t, z, "db.test")
	await(t, r, "db.test", func(a Answer) bool { return slices.Equal(a.Addrs, addrs("192.0.2.1")) })
	z.Set("db.test. A", "db.test. 0 IN A 192.0.2.9")
	await(t, r, "db.test", func(a Answer) bool { return slices.Equal(a.Addrs, addrs("192.0.2.9")) })

	// A long TTL holds the answer.
	z.Set("long.test. A", "long.test. 3600 IN A 192.0.2.3")
	r.Keep([]string{"db.test", "long.test"})
	await(t, r, "long.test", func(a Answer) bool { return a.Resolved })
	time.Sleep(200 * time.Millisecond)
	if n := z.Queries("long.test. A"); n != 1 {
		t.Fatalf("long.test asked %d times within its TTL", n)
	}
}

// TestResolveFailures: NXDOMAIN and an empty answer empty the addresses;
// a server failure keeps them, with the error.
func TestResolveFailures(t *testing.T) {
	z := startZone(t)
	z.Set("db.test. A", "db.test. 0 IN A 192.0.2.1")
	r := runningOn(t, z, "db.test")
	await(t, r, "db.test", func(a Answer) bool { return len(a.Addrs) == 1 })

	z.Rcode("db.test.", dns.RcodeServerFailure)
	a := await(t, r, "db.test", func(a Answer) bool { return a.Err != nil })
	if a.Gone || !slices.Equal(a.Addrs, addrs("192.0.2.1")) {
		t.Fatalf("after SERVFAIL: %+v, want the last address kept", a)
	}
	z.Rcode("db.test.", dns.RcodeNameError)
	a = await(t, r, "db.test", func(a Answer) bool { return a.Gone })
	if len(a.Addrs) != 0 || a.Err == nil {
		t.Fatalf("after NXDOMAIN: %+v", a)
	}
	before := z.Queries("db.test. AAAA")
	time.Sleep(200 * time.Millisecond) // a few retries
	if n := z.Queries("db.test. AAAA"); n != before || z.Queries("db.test. A") < 3 {
		t.Fatalf("AAAA asked %d more times after NXDOMAIN; A %d", n-before, z.Queries("db.test. A"))
	}
	z.Rcode("db.test.", dns.RcodeSuccess)
	z.Set("db.test. A")
	a = await(t, r, "db.test", func(a Answer) bool { return a.Gone && z.Queries("db.test. AAAA") > 0 })
	if len(a.Addrs) != 0 {
		t.Fatalf("no records: %+v", a)
	}
	z.Set("db.test. A", "db.test. 0 IN A 192.0.2.5")
	await(t, r, "db.test", func(a Answer) bool { return slices.Equal(a.Addrs, addrs("192.0.2.5")) && a.Err == nil })
}

// TestResolveAAAAAndUnusable: AAAA records serve a name without A ones
// (not with NoIPv6); unspecified, multicast and link-local addresses are
// never used.
func TestResolveAAAAAndUnusable(t *testing.T) {
	z := startZone(t)
	z.Set("v6.test. AAAA", "v6.test. 60 IN AAAA 2001:db8::1", "v6.test. 60 IN AAAA fe80::1")
	z.Set("bad.test. A", "bad.test. 60 IN A 0.0.0.0", "bad.test. 60 IN A 169.254.169.254", "bad.test. 60 IN A 224.0.0.1", "bad.test. 60 IN A 127.0.0.5")
	r := runningOn(t, z, "v6.test", "bad.test")
	if a := await(t, r, "v6.test", func(a Answer) bool { return a.Resolved }); !slices.Equal(a.Addrs, addrs("2001:db8::1")) {
		t.Fatalf("v6.test: %+v", a)
	}
	if a := await(t, r, "bad.test", func(a Answer) bool { return a.Resolved }); !slices.Equal(a.Addrs, addrs("127.0.0.5")) {
		t.Fatalf("bad.test: %+v, want the loopback address only (ingress-nginx uses it too)", a)
	}
	r.Configure(Settings{Servers: []netip.AddrPort{z.Addr}, NoIPv6: true})
	if a := await(t, r, "v6.test", func(a Answer) bool { return a.Gone }); len(a.Addrs) != 0 {
		t.Fatalf("v6.test without IPv6: %+v", a)
	}
}

// TestResolveCNAMEAndTCP: the addresses behind a CNAME are the name's,
// with the least TTL of the chain; a truncated UDP answer is asked again
// over TCP.
func TestResolveCNAMEAndTCP(t *testing.T) {
	z := startZone(t)
	z.Set("alias.test. A", "alias.test. 3600 IN CNAME db.test.", "db.test. 3600 IN A 192.0.2.7")
	z.Truncate(true)
	r := New(fast())
	r.Configure(Settings{Servers: []netip.AddrPort{z.Addr}})
	ans, ttl, err := r.resolve(context.Background(), "alias.test", r.settings)
	if err != nil || !slices.Equal(ans, addrs("192.0.2.7")) || ttl != time.Hour {
		t.Fatalf("resolve: %v %v %v", ans, ttl, err)
	}
}

// TestResolveServersInTurn: a server that does not answer makes the next
// be asked; with none answering the error names the last.
func TestResolveServersInTurn(t *testing.T) {
	z := startZone(t)
	z.Set("db.test. A", "db.test. 60 IN A 192.0.2.1")
	dead := netip.MustParseAddrPort("127.0.0.1:9") // discard: no answer
	r := New(fast())
	s := Settings{Servers: []netip.AddrPort{dead, z.Addr}}
	if ans, _, err := r.resolve(context.Background(), "db.test", s); err != nil || len(ans) != 1 {
		t.Fatalf("dead then live: %v %v", ans, err)
	}
	if _, _, err := r.resolve(context.Background(), "db.test", Settings{Servers: []netip.AddrPort{dead}}); err == nil {
		t.Fatal("no live server: no error")
	}
}

// TestResolveSearchDomains: without servers, resolv.conf's search
// domains and ndots apply, as ingress-nginx's resolver applies them; a
// name with a trailing dot is asked as it is.
func TestResolveSearchDomains(t *testing.T) {
	z := startZone(t)
	z.Set("db.ns.svc.cluster.local. A", "db.ns.svc.cluster.local. 60 IN A 192.0.2.4")
	z.Set("db.ns. A", "db.ns. 60 IN A 192.0.2.8")
	conf := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("nameserver %s\nsearch svc.cluster.local cluster.local\noptions ndots:5\n", z.Addr.Addr())), 0o600); err != nil {
		t.Fatal(err)
	}
	r := New(Options{ResolvConf: conf, Timeout: 300 * time.Millisecond})
	r.resolvPort = z.Addr.Port()
	for name, want := range map[string]string{"db.ns": "192.0.2.4", "db.ns.": "192.0.2.8"} {
		ans, _, err := r.resolve(context.Background(), name, Settings{})
		if err != nil || !slices.Equal(ans, addrs(want)) {
			t.Errorf("%s: %v %v, want %s", name, ans, err, want)
		}
	}
	r = New(Options{ResolvConf: filepath.Join(t.TempDir(), "missing")})
	if _, _, err := r.resolve(context.Background(), "db.ns", Settings{}); err == nil {
		t.Error("a missing resolv.conf: no error")
	}
}

// TestKeepForgets: names no longer kept are forgotten, and their late
// answers dropped.
func TestKeepForgets(t *testing.T) {
	z := startZone(t)
	z.Set("db.test. A", "db.test. 60 IN A 192.0.2.1")
	r := runningOn(t, z, "db.test")
	await(t, r, "db.test", func(a Answer) bool { return a.Resolved })
	r.Keep(nil)
	if a := r.Lookup("db.test"); a.Resolved {
		t.Fatalf("forgotten name still answers %+v", a)
	}
}
