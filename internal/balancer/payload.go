package balancer

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// SchemaVersion is the payload version this package speaks; the Lua side
// rejects any other.
const SchemaVersion = 1

// Method is a load-balancing method, chosen per backend. The model owns
// the methods and their option grammars; the payload carries them.
type Method = model.BalanceMethod

// The methods. docs/load-balancing.md describes each.
const (
	RoundRobin = model.RoundRobin
	LeastConn  = model.LeastConn
	EWMA       = model.EWMA
	P2C        = model.P2C
	CHash      = model.CHash
	Sticky     = model.Sticky
)

// State is the complete set of backends, sent with Client.Replace.
type State struct {
	// Generation labels this state. The Lua side records it but applies
	// a full state whatever its generation; only updates (Client.Update,
	// Client.Delete) older than the current generation are refused.
	Generation int64     `json:"generation"`
	Backends   []Backend `json:"backends"`
	// Hosts is the whole hosts table (Host); nil empties it.
	Hosts []Host `json:"hosts,omitempty"`
}

// Backend is the endpoint set and balancing policy behind one backend key.
type Backend struct {
	// Key is what locations name with BackendDirective, typically
	// "namespace/service/port". Opaque, but restricted to
	// [A-Za-z0-9._:/@-] so it can sit inside an nginx string.
	Key string `json:"key"`
	// Method defaults to RoundRobin.
	Method Method `json:"method,omitempty"`
	// Retries is how many other endpoints a failed attempt may move on to
	// (0..5, nil = 1). Which failures count is proxy_next_upstream's
	// choice; nginx's default retries connection errors and timeouts of
	// idempotent requests only.
	Retries *int `json:"retries,omitempty"`
	// HashKey is required for CHash and forbidden otherwise: nginx
	// variables written back to back, from $request_uri, $uri, $args,
	// $host, $scheme, $remote_addr, $binary_remote_addr,
	// $realip_remote_addr, $request_method, $server_name, $http_*,
	// $cookie_* and $arg_*.
	HashKey string `json:"hash_key,omitempty"`
	// Sticky configures the cookie for the Sticky method (nil = defaults);
	// forbidden for other methods.
	Sticky *StickyOptions `json:"sticky,omitempty"`
	// MaxFails, FailTimeoutMs and MaxConns are model.PeerLimits: failed
	// attempts that take an endpoint out for a while (0 = never), that
	// window in milliseconds, and the requests one endpoint may have in
	// flight (0 = no bound). Counted per nginx worker.
	MaxFails      int `json:"max_fails,omitempty"`
	FailTimeoutMs int `json:"fail_timeout_ms,omitempty"`
	MaxConns      int `json:"max_conns,omitempty"`
	// Endpoints may be empty: requests then get 503.
	Endpoints []Endpoint `json:"endpoints"`
	// Split, when set, makes this key a split (model.Split) instead of a
	// backend: a location naming it is served by the backend (or answer)
	// its rules and weights pick per request. A split has no endpoints,
	// method or options of its own.
	Split *Split `json:"split,omitempty"`
}

// StickyOptions configures the affinity cookie.
type StickyOptions struct {
	// Cookie is the cookie name, 1-64 of [A-Za-z0-9_.-]
	// ("causeway_affinity").
	Cookie string `json:"cookie,omitempty"`
	// Path is the cookie's Path ("/").
	Path string `json:"path,omitempty"`
	// MaxAge in seconds; 0 makes a session cookie.
	MaxAge int `json:"max_age,omitempty"`
	// SameSite is "", "Lax", "Strict" or "None" (which requires Secure).
	SameSite string `json:"same_site,omitempty"`
	Secure   bool   `json:"secure,omitempty"`
	// HTTPOnly defaults to true.
	HTTPOnly *bool `json:"http_only,omitempty"`
}

// Endpoint is one address of a backend.
type Endpoint struct {
	// Address is an IPv4 or IPv6 address (no zone, no brackets).
	Address string `json:"address"`
	Port    int    `json:"port"`
	// Weight is 1..100; 0 means 1.
	Weight int `json:"weight,omitempty"`
	// Ready must be true for the endpoint to receive new requests.
	Ready bool `json:"ready"`
	// Zone is the endpoint's topology zone. Recorded, not yet used for
	// routing.
	Zone string `json:"zone,omitempty"`
}

var (
	keyRe  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@-]*$`)
	zoneRe = regexp.MustCompile(`^[A-Za-z0-9._:/-]+$`)
)

// ValidateKey checks a backend key's grammar.
func ValidateKey(key string) error {
	if len(key) == 0 || len(key) > MaxKeyLen || !keyRe.MatchString(key) {
		return fmt.Errorf("backend key %q must be 1 to %d of [A-Za-z0-9._:/@-] starting with a letter or digit", key, MaxKeyLen)
	}
	return nil
}

// ValidateHashKey checks a CHash key expression (model.ValidateHashKey).
func ValidateHashKey(expr string) error { return model.ValidateHashKey(expr) }

// Validate applies the checks the Lua side applies, so that the controller
// can drop (and report) one bad backend instead of having the whole push
// refused.
func (b *Backend) Validate() error {
	if err := ValidateKey(b.Key); err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return fmt.Errorf("backend %s: %w", b.Key, err)
	}
	return nil
}

func (b *Backend) validate() error {
	if b.Split != nil {
		if b.ownsPeers() {
			return errors.New("a split has no method, retries, hash_key, sticky, limits or endpoints of its own")
		}
		return b.Split.validate(b.Key)
	}
	method := b.Method
	if method == "" {
		method = RoundRobin
	}
	if !method.Valid() {
		return fmt.Errorf("unknown method %q", b.Method)
	}
	if b.Retries != nil {
		if err := model.ValidateRetries(*b.Retries); err != nil {
			return err
		}
	}
	if err := b.validateLimits(); err != nil {
		return err
	}
	if method == CHash {
		if err := ValidateHashKey(b.HashKey); err != nil {
			return err
		}
	} else if b.HashKey != "" {
		return errors.New("hash_key is only allowed when method is chash")
	}
	if method == Sticky {
		if b.Sticky != nil {
			if err := b.Sticky.validate(); err != nil {
				return err
			}
		}
	} else if b.Sticky != nil {
		return errors.New("sticky is only allowed when method is sticky")
	}
	if len(b.Endpoints) > MaxEndpoints {
		return &LimitError{What: "endpoints", Got: len(b.Endpoints), Limit: MaxEndpoints}
	}
	seen := make(map[netip.AddrPort]int, len(b.Endpoints))
	for i, e := range b.Endpoints {
		ap, err := e.validate()
		if err != nil {
			return fmt.Errorf("endpoints[%d]: %w", i, err)
		}
		if j, dup := seen[ap]; dup {
			return fmt.Errorf("endpoints[%d] duplicates endpoints[%d] (%s)", i, j, ap)
		}
		seen[ap] = i
	}
	return nil
}

// ownsPeers reports whether b sets anything only a backend with
// endpoints may set.
func (b *Backend) ownsPeers() bool {
	return b.Method != "" || b.Retries != nil || b.HashKey != "" || b.Sticky != nil || len(b.Endpoints) > 0 ||
		b.MaxFails != 0 || b.FailTimeoutMs != 0 || b.MaxConns != 0
}

// validateLimits checks the peer limits as validate.lua does: the model's
// bounds, with fail_timeout_ms in milliseconds (the model's whole
// seconds are nginx's rule, not the balancer's).
func (b *Backend) validateLimits() error {
	if b.MaxFails < 0 || b.MaxFails > model.MaxPeerFails {
		return fmt.Errorf("max_fails %d out of range 0..%d", b.MaxFails, model.MaxPeerFails)
	}
	if most := model.MaxPeerFailTimeout.Milliseconds(); b.FailTimeoutMs < 0 || int64(b.FailTimeoutMs) > most {
		return fmt.Errorf("fail_timeout_ms %d out of range 0..%d", b.FailTimeoutMs, most)
	}
	if b.MaxFails > 0 && b.FailTimeoutMs == 0 {
		return errors.New("fail_timeout_ms is required with max_fails")
	}
	if b.MaxConns < 0 || b.MaxConns > model.MaxPeerConns {
		return fmt.Errorf("max_conns %d out of range 0..%d", b.MaxConns, model.MaxPeerConns)
	}
	return nil
}

func (s *StickyOptions) validate() error {
	c := model.StickyCookie{Name: s.Cookie, Path: s.Path, MaxAge: s.MaxAge, SameSite: s.SameSite, Secure: s.Secure}
	return c.Validate()
}

func (e *Endpoint) validate() (netip.AddrPort, error) {
	addr, err := netip.ParseAddr(e.Address)
	if err != nil || addr.Zone() != "" || strings.ContainsAny(e.Address, "[]") {
		return netip.AddrPort{}, fmt.Errorf("address %q must be an IPv4 or IPv6 address", e.Address)
	}
	if e.Port < 1 || e.Port > 65535 {
		return netip.AddrPort{}, fmt.Errorf("port %d out of range 1..65535", e.Port)
	}
	if e.Weight < 0 || e.Weight > MaxWeight {
		return netip.AddrPort{}, fmt.Errorf("weight %d out of range 1..%d", e.Weight, MaxWeight)
	}
	if e.Zone != "" && (len(e.Zone) > MaxZoneLen || !zoneRe.MatchString(e.Zone)) {
		return netip.AddrPort{}, fmt.Errorf("zone %q must be 1 to %d of [A-Za-z0-9._:/-]", e.Zone, MaxZoneLen)
	}
	return netip.AddrPortFrom(addr, uint16(e.Port)), nil
}

// Validate checks the whole state: every backend and unique keys.
func (s *State) Validate() error {
	if s.Generation < 0 || s.Generation > MaxGeneration {
		return fmt.Errorf("generation %d out of range 0..%d", s.Generation, int64(MaxGeneration))
	}
	if len(s.Backends) > MaxBackends {
		return &LimitError{What: "backends", Got: len(s.Backends), Limit: MaxBackends}
	}
	seen := make(map[string]bool, len(s.Backends))
	for i := range s.Backends {
		b := &s.Backends[i]
		if err := b.Validate(); err != nil {
			return err
		}
		if seen[b.Key] {
			return fmt.Errorf("backend %s appears twice", b.Key)
		}
		seen[b.Key] = true
	}
	return ValidateHosts(s.Hosts)
}

// wire returns b as sent: a nil endpoint list becomes [] because the Lua
// side (rightly) refuses null.
func (b Backend) wire() Backend {
	if b.Endpoints == nil {
		b.Endpoints = []Endpoint{}
	}
	return b
}
