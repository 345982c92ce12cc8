// Package externalname resolves the names of ExternalName Services for
// the controller, which hands their addresses to nginx as the backend's
// endpoints: over the dynamic channel with the Lua balancer, so a changed
// address never reloads nginx. Each name in use is resolved again when its
// records' TTL runs out, and the controller is told when addresses change.
//
// As ingress-nginx's Lua resolver does, a name is asked for A records, and
// for AAAA records only when it has none; without configured servers the
// nameservers, search domains and ndots of /etc/resolv.conf apply (the
// cluster's DNS, in a Pod). Unlike it, a failed lookup (a timeout, a
// server failure) keeps the last addresses until the name is known to be
// gone (NXDOMAIN, or no records).
package externalname

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/causeway/causeway/internal/due"
	"github.com/causeway/causeway/internal/model"
)

// Options configure a Resolver; zero values take the defaults.
type Options struct {
	// ResolvConf is the resolv.conf read when no servers are configured;
	// default /etc/resolv.conf.
	ResolvConf string
	// Timeout bounds one query to one server; default 2s.
	Timeout time.Duration
	// MinTTL and MaxTTL bound how long an answer is kept; default 1s
	// (ingress-nginx re-resolves at most once a second) and 1h.
	MinTTL, MaxTTL time.Duration
	// Retry is how soon a failed lookup is tried again; default 5s.
	Retry time.Duration
	// Parallel bounds the lookups in flight; default 8.
	Parallel int
	Log      *slog.Logger
}

// Answer is what a name resolved to.
type Answer struct {
	// Addrs are the usable addresses, sorted; they outlive a failed
	// lookup (Err set, Gone false).
	Addrs []netip.Addr
	// Err is why the last lookup failed; nil after a good one.
	Err error
	// Gone says that the name has no address: no such name, or no A or
	// AAAA records. Addrs is then empty.
	Gone bool
	// Resolved is false until the first lookup finished.
	Resolved bool
}

// Settings are the servers and switches the ConfigMap sets.
type Settings struct {
	// Servers, when set, are asked instead of resolv.conf's nameservers,
	// and names are looked up as written (no search domains).
	Servers []netip.AddrPort
	// NoIPv6 never asks for AAAA records (disable-ipv6-dns).
	NoIPv6 bool
}

// Resolver keeps the names in use resolved. It is safe for concurrent
// use; Run drives the lookups.
type Resolver struct {
	opts Options

	mu       sync.Mutex
	settings Settings
	entries  map[string]*entry
	wake     chan struct{}
	changed  chan struct{}
	// now is time.Now; resolvPort, when set, replaces port 53 of
	// resolv.conf's nameservers (both for tests).
	now        func() time.Time
	resolvPort uint16
}

type entry struct {
	due.Task
	ans Answer
}

// New returns a Resolver; nothing is looked up before Run.
func New(opts Options) *Resolver {
	if opts.ResolvConf == "" {
		opts.ResolvConf = "/etc/resolv.conf"
	}
	if opts.Timeout == 0 {
		opts.Timeout = 2 * time.Second
	}
	if opts.MinTTL == 0 {
		opts.MinTTL = time.Second
	}
	if opts.MaxTTL == 0 {
		opts.MaxTTL = time.Hour
	}
	if opts.Retry == 0 {
		opts.Retry = 5 * time.Second
	}
	if opts.Parallel == 0 {
		opts.Parallel = 8
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Resolver{opts: opts, entries: map[string]*entry{}, wake: make(chan struct{}, 1),
		changed: make(chan struct{}, 1), now: time.Now}
}

// Changed receives a value when a name's addresses (or its failure)
// changed. Several changes may collapse into one signal.
func (r *Resolver) Changed() <-chan struct{} { return r.changed }

// Configure sets the servers; a change resolves every name again.
func (r *Resolver) Configure(s Settings) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.Equal(s.Servers, r.settings.Servers) && s.NoIPv6 == r.settings.NoIPv6 {
		return
	}
	r.settings = Settings{Servers: slices.Clone(s.Servers), NoIPv6: s.NoIPv6}
	for _, e := range r.entries {
		e.Next = time.Time{}
	}
	due.Signal(r.wake)
}

// Keep makes names the set resolved: new ones are looked up at once,
// names not listed are forgotten.
func (r *Resolver) Keep(names []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	added := due.Keep(r.entries, names, func(n string) string { return n }, func(string) *entry { return &entry{} })
	if added {
		due.Signal(r.wake)
	}
}

// Lookup returns what name resolved to so far (the zero Answer for a
// name not kept).
func (r *Resolver) Lookup(name string) Answer {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.entries[name]; e != nil {
		return e.ans
	}
	return Answer{}
}

// Run resolves the kept names when they are due, until ctx is done.
func (r *Resolver) Run(ctx context.Context) {
	due.Loop[string]{Lock: &r.mu, Parallel: r.opts.Parallel, Wake: r.wake, Now: r.now,
		Tasks: due.In(r.entries, func(e *entry) *due.Task { return &e.Task }),
		Begin: func(name string) func() {
			settings := r.settings
			return func() {
				addrs, ttl, err := r.resolve(ctx, name, settings)
				r.store(name, settings, addrs, ttl, err)
			}
		},
	}.Run(ctx)
}

// store records a lookup's result and tells the controller when it
// changed what the name serves.
func (r *Resolver) store(name string, settings Settings, addrs []netip.Addr, ttl time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.entries[name]
	if e == nil {
		return // forgotten meanwhile
	}
	if !slices.Equal(settings.Servers, r.settings.Servers) || settings.NoIPv6 != r.settings.NoIPv6 {
		e.Finish(time.Time{}) // asked the old servers: ask again
		return
	}
	old := e.ans
	ans := Answer{Addrs: addrs, Resolved: true}
	var gone *goneError
	switch {
	case errors.As(err, &gone):
		ans = Answer{Err: err, Gone: true, Resolved: true}
		e.Finish(r.now().Add(r.opts.Retry))
	case err != nil:
		ans = Answer{Addrs: old.Addrs, Err: err, Resolved: true}
		e.Finish(r.now().Add(r.opts.Retry))
	default:
		e.Finish(r.now().Add(min(max(ttl, r.opts.MinTTL), r.opts.MaxTTL)))
	}
	e.ans = ans
	if !slices.Equal(old.Addrs, ans.Addrs) || due.ErrText(old.Err) != due.ErrText(ans.Err) || !old.Resolved {
		if err != nil {
			r.opts.Log.Warn("an ExternalName could not be resolved", "name", name, "err", err, "addresses kept", len(ans.Addrs))
		} else {
			r.opts.Log.Info("an ExternalName resolved", "name", name, "addresses", ans.Addrs)
		}
		due.Signal(r.changed)
	}
}

// goneError says that a name has no address: the servers answered, and
// the answer was no such name or no records.
type goneError struct{ msg string }

func (e *goneError) Error() string { return e.msg }

// resolve looks a name up: the candidates resolv.conf's search domains
// make of it (none with configured servers), each asked for A records,
// then AAAA, at each server in turn until one answers.
func (r *Resolver) resolve(ctx context.Context, name string, s Settings) ([]netip.Addr, time.Duration, error) {
	servers := make([]string, len(s.Servers))
	for i, a := range s.Servers {
		servers[i] = a.String()
	}
	candidates := []string{dns.Fqdn(name)}
	if len(servers) == 0 {
		conf, err := dns.ClientConfigFromFile(r.opts.ResolvConf)
		if err != nil {
			return nil, 0, fmt.Errorf("no resolver servers are configured and %s cannot be read: %w", r.opts.ResolvConf, err)
		}
		for _, srv := range conf.Servers {
			addr, err := netip.ParseAddr(srv)
			if err != nil {
				continue
			}
			port := portOf(conf.Port)
			if r.resolvPort != 0 {
				port = r.resolvPort
			}
			servers = append(servers, netip.AddrPortFrom(addr, port).String())
		}
		if len(servers) == 0 {
			return nil, 0, fmt.Errorf("%s lists no nameserver", r.opts.ResolvConf)
		}
		candidates = conf.NameList(name)
	}
	types := []uint16{dns.TypeA, dns.TypeAAAA}
	if s.NoIPv6 {
		types = types[:1]
	}
	var failed error
	for _, fqdn := range candidates {
		for _, qtype := range types {
			addrs, ttl, noName, err := r.ask(ctx, servers, fqdn, qtype)
			if err != nil {
				failed = err // no server answered: try what is left
				continue
			}
			if len(addrs) > 0 {
				return addrs, ttl, nil
			}
			if noName {
				break // no AAAA either
			}
		}
	}
	if failed != nil {
		return nil, 0, fmt.Errorf("%s: %w", name, failed)
	}
	return nil, 0, &goneError{fmt.Sprintf("%s: no such name, or no A or AAAA record of a usable address", name)}
}

func portOf(s string) uint16 {
	var p uint16
	if _, err := fmt.Sscan(s, &p); err != nil || p == 0 {
		return 53
	}
	return p
}

// ask sends one question to the servers in turn until one answers, and
// returns the answer's usable addresses, or that the name does not exist
// (NXDOMAIN). A server that fails (no answer, SERVFAIL, REFUSED) makes the
// next one be asked; err is set when none answered.
func (r *Resolver) ask(ctx context.Context, servers []string, fqdn string, qtype uint16) (addrs []netip.Addr, ttl time.Duration, noName bool, err error) {
	q := new(dns.Msg)
	q.SetQuestion(fqdn, qtype)
	q.RecursionDesired = true
	for _, srv := range servers {
		c := &dns.Client{Timeout: r.opts.Timeout}
		in, _, xerr := c.ExchangeContext(ctx, q, srv)
		if xerr == nil && in.Truncated {
			c.Net = "tcp"
			in, _, xerr = c.ExchangeContext(ctx, q, srv)
		}
		switch {
		case xerr != nil:
			err = fmt.Errorf("server %s: %v", srv, xerr)
		case in.Rcode == dns.RcodeNameError:
			return nil, 0, true, nil
		case in.Rcode != dns.RcodeSuccess:
			err = fmt.Errorf("server %s answered %s", srv, dns.RcodeToString[in.Rcode])
		default:
			addrs, ttl = addresses(in.Answer, qtype)
			return addrs, ttl, false, nil
		}
	}
	return nil, 0, false, err
}

// addresses are the usable addresses of the answer's records of qtype,
// sorted and without duplicates, and the least TTL of the answer's
// records (its CNAMEs included).
func addresses(rrs []dns.RR, qtype uint16) ([]netip.Addr, time.Duration) {
	var out []netip.Addr
	ttl := uint32(1<<31 - 1)
	for _, rr := range rrs {
		var ip []byte
		switch v := rr.(type) {
		case *dns.A:
			if qtype == dns.TypeA {
				ip = v.A
			}
		case *dns.AAAA:
			if qtype == dns.TypeAAAA {
				ip = v.AAAA
			}
		case *dns.CNAME:
		default:
			continue
		}
		ttl = min(ttl, rr.Header().Ttl)
		if ip == nil {
			continue
		}
		a, ok := netip.AddrFromSlice(ip)
		if !ok {
			continue
		}
		if a = a.Unmap(); model.UsableExternalAddr(a) == "" {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b netip.Addr) int { return a.Compare(b) })
	return slices.Compact(out), time.Duration(ttl) * time.Second
}
