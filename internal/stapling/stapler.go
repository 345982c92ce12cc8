// Package stapling fetches the OCSP responses that nginx staples to the
// certificates it serves (the ConfigMap's enable-ocsp). The controller,
// not nginx, asks each certificate's OCSP responder: nginx then needs no
// resolver and no way out, and with certificates served by Lua (which
// nginx's own ssl_stapling cannot see) the response reaches the handshake
// as a file next to the certificate. A response is checked against the
// issuer, kept while it is valid, and fetched again halfway to its
// nextUpdate; the controller is told when one changes.
package stapling

import (
	"bytes"
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ocsp"

	"github.com/causeway/causeway/internal/due"
	"github.com/causeway/causeway/internal/model"
)

// Options configure a Stapler; zero values take the defaults.
type Options struct {
	// Timeout bounds one request to a responder; default 10s.
	Timeout time.Duration
	// Retry is how soon a failed fetch is tried again; default 1m.
	Retry time.Duration
	// MinRefresh and MaxRefresh bound when a response is fetched again
	// (halfway to its nextUpdate); default 1m and 24h.
	MinRefresh, MaxRefresh time.Duration
	// Parallel bounds the fetches in flight; default 4.
	Parallel int
	Log      *slog.Logger
	// Client, when set, replaces the HTTP client (tests).
	Client *http.Client
}

// Cert is a certificate to staple: Key names it (its Secret and its
// content), Issuer signed it.
type Cert struct {
	Key          string
	Leaf, Issuer *x509.Certificate
}

// Staple is what the responder said of a certificate.
type Staple struct {
	// DER is a response of status good that is valid now; nil for none.
	DER []byte
	// Err is why the last fetch gave no usable response (DER may still
	// hold an earlier one, while it is valid).
	Err error
	// Fetched is false until the first fetch ended.
	Fetched bool
}

// Stapler keeps the responses of the certificates kept. Safe for
// concurrent use; Run drives the fetches.
type Stapler struct {
	opts    Options
	client  *http.Client
	mu      sync.Mutex
	entries map[string]*entry
	wake    chan struct{}
	changed chan struct{}
	now     func() time.Time
}

type entry struct {
	due.Task
	cert   Cert
	staple Staple
	// nextUpdate is the kept response's.
	nextUpdate time.Time
}

// New returns a Stapler; nothing is fetched before Run.
func New(opts Options) *Stapler {
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.Retry == 0 {
		opts.Retry = time.Minute
	}
	if opts.MinRefresh == 0 {
		opts.MinRefresh = time.Minute
	}
	if opts.MaxRefresh == 0 {
		opts.MaxRefresh = 24 * time.Hour
	}
	if opts.Parallel == 0 {
		opts.Parallel = 4
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	s := &Stapler{opts: opts, client: opts.Client, entries: map[string]*entry{}, wake: make(chan struct{}, 1),
		changed: make(chan struct{}, 1), now: time.Now}
	if s.client == nil {
		d := &net.Dialer{Timeout: opts.Timeout, Control: refuseNodeLocal}
		s.client = &http.Client{Timeout: opts.Timeout, Transport: &http.Transport{DialContext: d.DialContext, Proxy: nil},
			CheckRedirect: func(*http.Request, []*http.Request) error { return errors.New("an OCSP responder does not redirect") }}
	}
	return s
}

// refuseNodeLocal keeps the responder URL a certificate names from
// reaching what only the node should: a link-local address (a cloud's
// metadata service), or an unspecified or multicast one.
func refuseNodeLocal(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return err
	}
	if why := model.UsableExternalAddr(ap.Addr()); why != "" {
		return fmt.Errorf("OCSP responder address %s is %s", ap.Addr(), why)
	}
	return nil
}

// Changed receives a value when a certificate's staple changed.
func (s *Stapler) Changed() <-chan struct{} { return s.changed }

// Keep makes certs the set stapled: new ones are fetched at once, the
// others forgotten.
func (s *Stapler) Keep(certs []Cert) {
	s.mu.Lock()
	defer s.mu.Unlock()
	added := due.Keep(s.entries, certs, func(c Cert) string { return c.Key }, func(c Cert) *entry { return &entry{cert: c} })
	if added {
		due.Signal(s.wake)
	}
}

// Lookup returns the staple of a certificate kept (the zero Staple for
// another), without a response past its nextUpdate.
func (s *Stapler) Lookup(key string) Staple {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[key]
	if e == nil {
		return Staple{}
	}
	st := e.staple
	if st.DER != nil && !e.nextUpdate.IsZero() && !s.now().Before(e.nextUpdate) {
		st.DER = nil
	}
	return st
}

// Run fetches the responses when they are due, until ctx is done.
func (s *Stapler) Run(ctx context.Context) {
	due.Loop[string]{Lock: &s.mu, Parallel: s.opts.Parallel, Wake: s.wake, Now: s.now,
		Tasks: due.In(s.entries, func(e *entry) *due.Task { return &e.Task }),
		Begin: func(key string) func() {
			c := s.entries[key].cert
			return func() {
				der, resp, err := s.fetch(ctx, c)
				s.store(key, der, resp, err)
			}
		},
	}.Run(ctx)
}

// store records a fetch's result and signals a changed staple.
func (s *Stapler) store(key string, der []byte, resp *ocsp.Response, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[key]
	if e == nil {
		return // forgotten meanwhile
	}
	old := e.staple
	now := s.now()
	if err != nil {
		e.staple = Staple{DER: old.DER, Err: err, Fetched: true}
		if errors.Is(err, errRevoked) {
			e.staple.DER = nil // never staple a good answer after a revocation
		}
		e.Finish(now.Add(s.opts.Retry))
		s.opts.Log.Warn("no OCSP response to staple", "certificate", key, "err", err)
	} else {
		e.staple = Staple{DER: der, Fetched: true}
		e.nextUpdate = resp.NextUpdate
		half := time.Hour
		if !resp.NextUpdate.IsZero() {
			half = resp.NextUpdate.Sub(now) / 2
		}
		e.Finish(now.Add(min(max(half, s.opts.MinRefresh), s.opts.MaxRefresh)))
	}
	if !bytes.Equal(old.DER, e.staple.DER) || due.ErrText(old.Err) != due.ErrText(e.staple.Err) || !old.Fetched {
		due.Signal(s.changed)
	}
}

var errRevoked = errors.New("the responder says the certificate is revoked")

// maxResponse bounds a responder's answer.
const maxResponse = 64 << 10

// fetch asks the certificate's first responder and checks the answer:
// signed by the issuer (or a responder it delegated to), about this
// certificate, of status good, and valid now.
func (s *Stapler) fetch(ctx context.Context, c Cert) ([]byte, *ocsp.Response, error) {
	if len(c.Leaf.OCSPServer) == 0 {
		return nil, nil, errors.New("the certificate names no OCSP responder")
	}
	u, err := url.Parse(c.Leaf.OCSPServer[0])
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, nil, fmt.Errorf("OCSP responder %q is not an http or https URL", model.Truncate(c.Leaf.OCSPServer[0]))
	}
	req, err := ocsp.CreateRequest(c.Leaf, c.Issuer, &ocsp.RequestOptions{Hash: crypto.SHA1})
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(req))
	if err != nil {
		return nil, nil, err
	}
	hr.Header.Set("Content-Type", "application/ocsp-request")
	res, err := s.client.Do(hr)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("OCSP responder %s answered %s", u.Host, res.Status)
	}
	der, err := io.ReadAll(io.LimitReader(res.Body, maxResponse+1))
	if err != nil {
		return nil, nil, err
	}
	if len(der) > maxResponse {
		return nil, nil, fmt.Errorf("OCSP response larger than %d bytes", maxResponse)
	}
	resp, err := ocsp.ParseResponseForCert(der, c.Leaf, c.Issuer)
	if err != nil {
		return nil, nil, fmt.Errorf("OCSP response: %w", err)
	}
	now := s.now()
	switch {
	case resp.Status == ocsp.Revoked:
		return nil, nil, errRevoked
	case resp.Status != ocsp.Good:
		return nil, nil, errors.New("the responder does not know the certificate")
	case resp.ThisUpdate.After(now.Add(5 * time.Minute)):
		return nil, nil, errors.New("the OCSP response is not valid yet")
	case !resp.NextUpdate.IsZero() && !now.Before(resp.NextUpdate):
		return nil, nil, errors.New("the OCSP response has expired")
	}
	return der, resp, nil
}
