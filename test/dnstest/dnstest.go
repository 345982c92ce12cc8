// Package dnstest is a tiny DNS server for tests: it answers from records
// the test sets, over UDP and TCP on a loopback address, and counts the
// questions it was asked.
package dnstest

import (
	"net"
	"net/netip"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// Server answers questions from its records. Safe for concurrent use.
type Server struct {
	// Addr is where it listens, UDP and TCP.
	Addr netip.AddrPort

	mu      sync.Mutex
	records map[string][]string // "name. TYPE" -> RRs in zone-file syntax
	rcodes  map[string]int      // "name." -> rcode answered for every type
	// truncate answers UDP questions with TC set and no records.
	truncate bool
	asked    map[string]int // "name. TYPE" -> questions
}

// Start runs a Server on ip (port 0: any) until the test ends.
func Start(t testing.TB, ip string) *Server {
	t.Helper()
	s := &Server{records: map[string][]string{}, rcodes: map[string]int{}, asked: map[string]int{}}
	// The UDP port the kernel picks may be taken for TCP by another
	// process: try other ports until both are free.
	var pc net.PacketConn
	var ln net.Listener
	for attempt := 0; ; attempt++ {
		var err error
		if pc, err = net.ListenPacket("udp", net.JoinHostPort(ip, "0")); err != nil {
			t.Fatal(err)
		}
		s.Addr = netip.MustParseAddrPort(pc.LocalAddr().String())
		if ln, err = net.Listen("tcp", s.Addr.String()); err == nil {
			break
		}
		pc.Close()
		if attempt == 20 {
			t.Fatal(err)
		}
	}
	udp := &dns.Server{PacketConn: pc, Handler: s.handler(true)}
	tcp := &dns.Server{Listener: ln, Handler: s.handler(false)}
	go udp.ActivateAndServe()
	go tcp.ActivateAndServe()
	t.Cleanup(func() { udp.Shutdown(); tcp.Shutdown() })
	return s
}

func (s *Server) handler(udp bool) dns.HandlerFunc {
	return func(w dns.ResponseWriter, q *dns.Msg) {
		s.mu.Lock()
		defer s.mu.Unlock()
		m := new(dns.Msg)
		m.SetReply(q)
		m.Authoritative = true
		name, typ := q.Question[0].Name, dns.TypeToString[q.Question[0].Qtype]
		s.asked[name+" "+typ]++
		if rc, ok := s.rcodes[name]; ok {
			m.Rcode = rc
		} else if udp && s.truncate {
			m.Truncated = true
		} else {
			for _, text := range s.records[name+" "+typ] {
				rr, err := dns.NewRR(text)
				if err != nil {
					panic(err)
				}
				m.Answer = append(m.Answer, rr)
			}
		}
		w.WriteMsg(m)
	}
}

// Set replaces the records of key, "name. TYPE" ("db.test. A"), with rrs
// in zone-file syntax ("db.test. 60 IN A 192.0.2.1"); none for an empty
// answer.
func (s *Server) Set(key string, rrs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records[key] = rrs
}

// Rcode makes every question for name ("db.test.") answer rc;
// dns.RcodeSuccess answers from the records again.
func (s *Server) Rcode(name string, rc int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rc == dns.RcodeSuccess {
		delete(s.rcodes, name)
	} else {
		s.rcodes[name] = rc
	}
}

// Truncate makes UDP answers truncated (so clients ask again over TCP).
func (s *Server) Truncate(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.truncate = on
}

// Queries counts the questions asked for key, "name. TYPE".
func (s *Server) Queries(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked[key]
}
