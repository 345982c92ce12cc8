package balancer_test

import (
	"errors"
	"fmt"
	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// luaLimitRe matches a limit's definition in validate.lua, one per line.
var luaLimitRe = regexp.MustCompile(`(?m)^local (MAX_[A-Z0-9_]+) = (.+?)\s*$`)

// TestLimitsMatchLua reads the MAX_* constants of the embedded
// validate.lua and checks each has a Go twin with the same value, and
// that every Go twin is defined there: the two sides can never drift.
func TestLimitsMatchLua(t *testing.T) {
	src, err := fs.ReadFile(balancer.LuaFS(), "causeway/validate.lua")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, m := range luaLimitRe.FindAllStringSubmatch(string(src), -1) {
		name, expr := m[1], m[2]
		found[name] = true
		lua, err := evalLua(expr)
		if err != nil {
			t.Errorf("%s = %s: %v", name, expr, err)
			continue
		}
		goVal, ok := balancer.LuaLimits[name]
		if !ok {
			t.Errorf("validate.lua defines %s = %s, which has no Go twin in limits.go", name, expr)
			continue
		}
		if goVal != lua {
			t.Errorf("%s: Lua %d (%s), Go %d", name, lua, expr, goVal)
		}
	}
	for name := range balancer.LuaLimits {
		if !found[name] {
			t.Errorf("limits.go mirrors %s, which validate.lua does not define (as `local %s = ...`)", name, name)
		}
	}
	if len(found) < 11 {
		t.Fatalf("found only %d limits in validate.lua: has its layout changed?", len(found))
	}
}

func TestEvalLua(t *testing.T) {
	for expr, want := range map[string]int64{
		"100000": 100000, "2 ^ 53 - 1": 1<<53 - 1, "10 * 365 * 24 * 3600": 315360000,
		"1 + 2 * 3": 7, "2 ^ 3 ^ 2": 512, "8 - 2 - 1": 5,
	} {
		if got, err := evalLua(expr); err != nil || got != want {
			t.Errorf("%s = %d, %v; want %d", expr, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "1 +", "1 / 2", "(1)", "1 2"} {
		if _, err := evalLua(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// evalLua evaluates the integer arithmetic the limits use: numbers, + - *
// and right-associative ^, with Lua's precedence.
func evalLua(expr string) (int64, error) {
	toks := strings.Fields(strings.NewReplacer("+", " + ", "-", " - ", "*", " * ", "^", " ^ ").Replace(expr))
	pos := 0
	var sum, product, power func() (int64, error)
	number := func() (int64, error) {
		if pos >= len(toks) {
			return 0, errors.New("unexpected end")
		}
		n, err := strconv.ParseInt(toks[pos], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("not an integer: %q", toks[pos])
		}
		pos++
		return n, nil
	}
	power = func() (int64, error) {
		base, err := number()
		if err != nil || pos >= len(toks) || toks[pos] != "^" {
			return base, err
		}
		pos++
		exp, err := power()
		if err != nil {
			return 0, err
		}
		r := int64(1)
		for range exp {
			r *= base
		}
		return r, nil
	}
	product = func() (int64, error) {
		v, err := power()
		for err == nil && pos < len(toks) && toks[pos] == "*" {
			pos++
			var w int64
			w, err = power()
			v *= w
		}
		return v, err
	}
	sum = func() (int64, error) {
		v, err := product()
		for err == nil && pos < len(toks) && (toks[pos] == "+" || toks[pos] == "-") {
			op := toks[pos]
			pos++
			var w int64
			w, err = product()
			if op == "+" {
				v += w
			} else {
				v -= w
			}
		}
		return v, err
	}
	v, err := sum()
	if err == nil && pos != len(toks) {
		err = fmt.Errorf("unexpected %q", toks[pos])
	}
	return v, err
}

// manyEndpoints returns n distinct ready endpoints.
func manyEndpoints(n int) []balancer.Endpoint {
	eps := make([]balancer.Endpoint, n)
	for i := range eps {
		eps[i] = balancer.Endpoint{Address: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), Port: 8080, Ready: true}
	}
	return eps
}

// limitCases has a row at and a row over every per-backend limit. They
// are part of validationCases, so the parity test sends them to Lua too.
func limitCases() []validationCase {
	sticky := func(o balancer.StickyOptions) balancer.Backend {
		return balancer.Backend{Key: "k", Method: balancer.Sticky, Sticky: &o}
	}
	zone := func(z string) balancer.Backend {
		return balancer.Backend{Key: "k", Endpoints: []balancer.Endpoint{{Address: "10.0.0.1", Port: 1, Ready: true, Zone: z}}}
	}
	weight := func(w int) balancer.Backend {
		return balancer.Backend{Key: "k", Endpoints: []balancer.Endpoint{{Address: "10.0.0.1", Port: 1, Ready: true, Weight: w}}}
	}
	hashKey := func(n int) balancer.Backend {
		return balancer.Backend{Key: "k", Method: balancer.CHash, HashKey: "$http_" + strings.Repeat("a", n-len("$http_"))}
	}
	return []validationCase{
		{"limit: endpoints at MaxEndpoints", balancer.Backend{Key: "k", Endpoints: manyEndpoints(balancer.MaxEndpoints)}, true},
		{"limit: endpoints over MaxEndpoints", balancer.Backend{Key: "k", Endpoints: manyEndpoints(balancer.MaxEndpoints + 1)}, false},
		{"limit: key at MaxKeyLen", balancer.Backend{Key: strings.Repeat("k", balancer.MaxKeyLen)}, true},
		{"limit: key over MaxKeyLen", balancer.Backend{Key: strings.Repeat("k", balancer.MaxKeyLen+1)}, false},
		{"limit: weight at MaxWeight", weight(balancer.MaxWeight), true},
		{"limit: weight over MaxWeight", weight(balancer.MaxWeight + 1), false},
		{"limit: retries at MaxRetries", balancer.Backend{Key: "k", Retries: new(balancer.MaxRetries)}, true},
		{"limit: retries over MaxRetries", balancer.Backend{Key: "k", Retries: new(balancer.MaxRetries + 1)}, false},
		{"limit: hash key at MaxHashKeyLen", hashKey(balancer.MaxHashKeyLen), true},
		{"limit: hash key over MaxHashKeyLen", hashKey(balancer.MaxHashKeyLen + 1), false},
		{"limit: cookie name at MaxCookieNameLen", sticky(balancer.StickyOptions{Cookie: strings.Repeat("c", balancer.MaxCookieNameLen)}), true},
		{"limit: cookie name over MaxCookieNameLen", sticky(balancer.StickyOptions{Cookie: strings.Repeat("c", balancer.MaxCookieNameLen+1)}), false},
		{"limit: cookie path at MaxCookiePathLen", sticky(balancer.StickyOptions{Path: "/" + strings.Repeat("p", balancer.MaxCookiePathLen-1)}), true},
		{"limit: cookie path over MaxCookiePathLen", sticky(balancer.StickyOptions{Path: "/" + strings.Repeat("p", balancer.MaxCookiePathLen)}), false},
		{"limit: max age at MaxCookieAge", sticky(balancer.StickyOptions{MaxAge: balancer.MaxCookieAge}), true},
		{"limit: max age over MaxCookieAge", sticky(balancer.StickyOptions{MaxAge: balancer.MaxCookieAge + 1}), false},
		{"limit: zone at MaxZoneLen", zone(strings.Repeat("z", balancer.MaxZoneLen)), true},
		{"limit: zone over MaxZoneLen", zone(strings.Repeat("z", balancer.MaxZoneLen+1)), false},
		{"limit: max_fails at MaxPeerFails", balancer.Backend{Key: "k", MaxFails: model.MaxPeerFails, FailTimeoutMs: 1}, true},
		{"limit: max_fails over MaxPeerFails", balancer.Backend{Key: "k", MaxFails: model.MaxPeerFails + 1, FailTimeoutMs: 1}, false},
		{"limit: fail_timeout_ms at MaxPeerFailTimeout", balancer.Backend{Key: "k", MaxFails: 1,
			FailTimeoutMs: int(model.MaxPeerFailTimeout.Milliseconds())}, true},
		{"limit: fail_timeout_ms over MaxPeerFailTimeout", balancer.Backend{Key: "k", MaxFails: 1,
			FailTimeoutMs: int(model.MaxPeerFailTimeout.Milliseconds()) + 1}, false},
		{"limit: max_conns at MaxPeerConns", balancer.Backend{Key: "k", MaxConns: model.MaxPeerConns}, true},
		{"limit: max_conns over MaxPeerConns", balancer.Backend{Key: "k", MaxConns: model.MaxPeerConns + 1}, false},
		{"max_fails without fail_timeout_ms", balancer.Backend{Key: "k", MaxFails: 1}, false},
		{"fail_timeout_ms alone", balancer.Backend{Key: "k", FailTimeoutMs: 1000}, true},
		{"negative max_fails", balancer.Backend{Key: "k", MaxFails: -1, FailTimeoutMs: 1000}, false},
		{"negative max_conns", balancer.Backend{Key: "k", MaxConns: -1}, false},
	}
}

// TestLimits has a row at and over every limit; the counted limits fail
// with a *LimitError, which the controller reports as such.
func TestLimits(t *testing.T) {
	for _, tc := range limitCases() {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b
			if b.Endpoints == nil {
				b.Endpoints = manyEndpoints(1)
			}
			err := b.Validate()
			if (err == nil) != tc.valid {
				t.Fatalf("Validate() = %v, want valid=%v", err, tc.valid)
			}
			var le *balancer.LimitError
			if tc.name == "limit: endpoints over MaxEndpoints" &&
				(!errors.As(err, &le) || le.What != "endpoints" || le.Got != balancer.MaxEndpoints+1 || le.Limit != balancer.MaxEndpoints) {
				t.Fatalf("Validate() = %v, want a *LimitError for endpoints", err)
			}
		})
	}
	backends := func(n int) []balancer.Backend {
		bs := make([]balancer.Backend, n)
		for i := range bs {
			bs[i] = balancer.Backend{Key: "b" + strconv.Itoa(i)}
		}
		return bs
	}
	for _, tc := range []struct {
		name  string
		st    balancer.State
		valid bool
	}{
		{"limit: generation at MaxGeneration", balancer.State{Generation: balancer.MaxGeneration}, true},
		{"limit: generation over MaxGeneration", balancer.State{Generation: balancer.MaxGeneration + 1}, false},
		{"limit: backends at MaxBackends", balancer.State{Backends: backends(balancer.MaxBackends)}, true},
		{"limit: backends over MaxBackends", balancer.State{Backends: backends(balancer.MaxBackends + 1)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.st.Validate()
			if (err == nil) != tc.valid {
				t.Fatalf("Validate() = %v, want valid=%v", err, tc.valid)
			}
			var le *balancer.LimitError
			if !tc.valid && len(tc.st.Backends) > balancer.MaxBackends && !errors.As(err, &le) {
				t.Fatalf("Validate() = %v, want a *LimitError", err)
			}
		})
	}
}
