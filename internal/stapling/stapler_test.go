package stapling

import (
	"context"
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ocsp"

	"github.com/causeway/causeway/test/ocsptest"
)

func running(t *testing.T, s *Stapler) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func await(t *testing.T, s *Stapler, key string, ok func(Staple) bool) Staple {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := s.Lookup(key)
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: staple %+v", key, st)
		}
		select {
		case <-s.Changed():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func fast() Options {
	return Options{Retry: 50 * time.Millisecond, MinRefresh: 50 * time.Millisecond, Timeout: time.Second}
}

// TestStaple: a good response is kept and checked; a revoked one is
// never stapled; a responder failing keeps the last good response while
// it is valid; a new response is fetched halfway to nextUpdate.
func TestStaple(t *testing.T) {
	ca := ocsptest.New(t, "127.0.0.1")
	_, _, leaf := ca.Issue(t, "a.test")
	ca.SetValidity(3 * time.Second) // OCSP times have whole seconds
	s := New(fast())
	running(t, s)
	s.Keep([]Cert{{Key: "a", Leaf: leaf, Issuer: ca.Cert}})
	st := await(t, s, "a", func(st Staple) bool { return st.Fetched })
	if st.Err != nil || st.DER == nil {
		t.Fatalf("staple %+v", st)
	}
	r, err := ocsp.ParseResponseForCert(st.DER, leaf, ca.Cert)
	if err != nil || r.Status != ocsp.Good {
		t.Fatalf("the staple does not parse as good: %v %v", r, err)
	}

	ca.Fail(true)
	// The refresh halfway to nextUpdate fails: the staple stays.
	if st := await(t, s, "a", func(st Staple) bool { return st.Err != nil }); st.DER == nil {
		t.Fatalf("a failing responder dropped a valid staple: %+v", st)
	}
	await(t, s, "a", func(st Staple) bool { return st.DER == nil }) // past its nextUpdate
	ca.Fail(false)
	await(t, s, "a", func(st Staple) bool { return st.DER != nil && st.Err == nil })
	asked := ca.Asked()
	// Responses valid 2 to 3s are fetched again halfway.
	time.Sleep(3 * time.Second)
	if n := ca.Asked() - asked; n < 2 || n > 4 {
		t.Fatalf("asked %d times in 3s for responses valid 2 to 3s", n)
	}

	ca.SetStatus(leaf, ocsp.Revoked)
	st = await(t, s, "a", func(st Staple) bool { return st.Err != nil })
	if st.DER != nil || !strings.Contains(st.Err.Error(), "revoked") {
		t.Fatalf("after revocation: %+v", st)
	}
	s.Keep(nil)
	if st := s.Lookup("a"); st.Fetched {
		t.Fatal("a forgotten certificate still answers")
	}
}

// TestStapleRefuses: answers that must not be stapled.
func TestStapleRefuses(t *testing.T) {
	ca := ocsptest.New(t, "127.0.0.1")
	other := ocsptest.New(t, "127.0.0.1")
	_, _, leaf := ca.Issue(t, "a.test")
	s := New(fast())
	for _, tc := range []struct {
		name string
		cert Cert
		want string
	}{
		{"unknown", func() Cert { ca.SetStatus(leaf, ocsp.Unknown); return Cert{Leaf: leaf, Issuer: ca.Cert} }(), "does not know"},
		{"another issuer's signature", Cert{Leaf: leaf, Issuer: other.Cert}, "OCSP response"},
		{"no responder", Cert{Leaf: &x509.Certificate{}, Issuer: ca.Cert}, "names no OCSP responder"},
		{"a link-local responder", Cert{Leaf: withResponder(leaf, "http://169.254.169.254/"), Issuer: ca.Cert}, "link-local"},
		{"a file URL", Cert{Leaf: &x509.Certificate{OCSPServer: []string{"file:///etc/passwd"}}, Issuer: ca.Cert}, "not an http or https URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := s.fetch(context.Background(), tc.cert)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("fetch: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func withResponder(c *x509.Certificate, url string) *x509.Certificate {
	cp := *c
	cp.OCSPServer = []string{url}
	return &cp
}
