package balancer_test

import (
	"fmt"
	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
	"strings"
	"testing"
)

type validationCase struct {
	name  string
	b     balancer.Backend
	valid bool
}

// validationCases is shared by the Go unit test and the Go/Lua parity test.
// A nil Endpoints list is replaced by one valid endpoint.
func validationCases() []validationCase {
	no, yes := false, true
	ep := func(addr string, port int) []balancer.Endpoint {
		return []balancer.Endpoint{{Address: addr, Port: port, Ready: true}}
	}
	cases := []validationCase{
		{"minimal", balancer.Backend{Key: "default/web/80"}, true},
		{"all key characters", balancer.Backend{Key: "a-b_c.d:e/f@g"}, true},
		{"key starts with dash", balancer.Backend{Key: "-a"}, false},
		{"key with space", balancer.Backend{Key: "a b"}, false},
		{"key with dollar", balancer.Backend{Key: "a$b"}, false},
		{"key with brace", balancer.Backend{Key: "a{b"}, false},
		{"key with semicolon", balancer.Backend{Key: "a;b"}, false},
		{"key too long", balancer.Backend{Key: strings.Repeat("k", balancer.MaxKeyLen+1)}, false},
		{"key at limit", balancer.Backend{Key: strings.Repeat("k", balancer.MaxKeyLen)}, true},
		{"every method", balancer.Backend{Key: "k", Method: balancer.EWMA}, true},
		{"unknown method", balancer.Backend{Key: "k", Method: "random"}, false},
		{"retries 0", balancer.Backend{Key: "k", Retries: new(0)}, true},
		{"retries 5", balancer.Backend{Key: "k", Retries: new(5)}, true},
		{"retries 6", balancer.Backend{Key: "k", Retries: new(6)}, false},
		{"chash uri", balancer.Backend{Key: "k", Method: balancer.CHash, HashKey: "$request_uri"}, true},
		{"chash two variables", balancer.Backend{Key: "k", Method: balancer.CHash, HashKey: "$host$request_uri"}, true},
		{"chash header", balancer.Backend{Key: "k", Method: balancer.CHash, HashKey: "$http_x_user"}, true},
		{"chash cookie", balancer.Backend{Key: "k", Method: balancer.CHash, HashKey: "$cookie_id"}, true},
		{"chash cookie upper case", balancer.Backend{Key: "k", Method: balancer.CHash, HashKey: "$cookie_SessionID"}, true},
		{"chash arg", balancer.Backend{Key: "k", Method: balancer.CHash, HashKey: "$arg_user"}, true},
		{"chash remote addr", balancer.Backend{Key: "k", Method: balancer.CHash, HashKey: "$remote_addr"}, true},
		{"chash missing key", balancer.Backend{Key: "k", Method: balancer.CHash}, false},
		{"chash literal", balancer.Backend{Key: "k", Method: balancer.CHash, HashKey: "$host:$uri"}, false},
		{"chash bare name", balancer.Backend{Key: "k", Method: balancer.CHash, HashKey: "uri"}, false},
		{"chash dollar only", balancer.Backend{Key: "k", Method: balancer.CHash, HashKey: "$"}, false},
		{"chash trailing dollar", balancer.Backend{Key: "k", Method: balancer.CHash, HashKey: "$uri$"}, false},
		{"chash braces", balancer.Backend{Key: "k", Method: balancer.CHash, HashKey: "${uri}"}, false},
		{"chash unknown variable", balancer.Backend{Key: "k", Method: balancer.CHash, HashKey: "$document_root"}, false},
		{"chash upper-case header", balancer.Backend{Key: "k", Method: balancer.CHash, HashKey: "$http_X_User"}, false},
		{"chash empty header name", balancer.Backend{Key: "k", Method: balancer.CHash, HashKey: "$http_"}, false},
		{"hash key on round robin", balancer.Backend{Key: "k", HashKey: "$uri"}, false},
		{"sticky defaults", balancer.Backend{Key: "k", Method: balancer.Sticky}, true},
		{"sticky full", balancer.Backend{Key: "k", Method: balancer.Sticky, Sticky: &balancer.StickyOptions{Cookie: "route", Path: "/app", MaxAge: 3600, SameSite: "Strict", Secure: true, HTTPOnly: &no}}, true},
		{"sticky None secure", balancer.Backend{Key: "k", Method: balancer.Sticky, Sticky: &balancer.StickyOptions{SameSite: "None", Secure: true, HTTPOnly: &yes}}, true},
		{"sticky None insecure", balancer.Backend{Key: "k", Method: balancer.Sticky, Sticky: &balancer.StickyOptions{SameSite: "None"}}, false},
		{"sticky same_site lower", balancer.Backend{Key: "k", Method: balancer.Sticky, Sticky: &balancer.StickyOptions{SameSite: "lax"}}, false},
		{"sticky cookie with =", balancer.Backend{Key: "k", Method: balancer.Sticky, Sticky: &balancer.StickyOptions{Cookie: "a=b"}}, false},
		{"sticky cookie too long", balancer.Backend{Key: "k", Method: balancer.Sticky, Sticky: &balancer.StickyOptions{Cookie: strings.Repeat("c", 65)}}, false},
		{"sticky path relative", balancer.Backend{Key: "k", Method: balancer.Sticky, Sticky: &balancer.StickyOptions{Path: "app"}}, false},
		{"sticky path with ;", balancer.Backend{Key: "k", Method: balancer.Sticky, Sticky: &balancer.StickyOptions{Path: "/a;b"}}, false},
		{"sticky path with space", balancer.Backend{Key: "k", Method: balancer.Sticky, Sticky: &balancer.StickyOptions{Path: "/a b"}}, false},
		{"sticky max age negative", balancer.Backend{Key: "k", Method: balancer.Sticky, Sticky: &balancer.StickyOptions{MaxAge: -1}}, false},
		{"sticky max age too big", balancer.Backend{Key: "k", Method: balancer.Sticky, Sticky: &balancer.StickyOptions{MaxAge: balancer.MaxCookieAge + 1}}, false},
		{"sticky options on p2c", balancer.Backend{Key: "k", Method: balancer.P2C, Sticky: &balancer.StickyOptions{}}, false},
		{"no endpoints", balancer.Backend{Key: "k", Endpoints: []balancer.Endpoint{}}, true},
		{"IPv6", balancer.Backend{Key: "k", Endpoints: ep("2001:db8::1", 80)}, true},
		{"IPv6 upper case", balancer.Backend{Key: "k", Endpoints: ep("2001:DB8::A", 80)}, true},
		{"IPv4-mapped IPv6", balancer.Backend{Key: "k", Endpoints: ep("::ffff:10.0.0.1", 80)}, true},
		{"IPv6 embedded IPv4 not last", balancer.Backend{Key: "k", Endpoints: ep("1.2.3.4::", 80)}, false},
		{"IPv6 zone", balancer.Backend{Key: "k", Endpoints: ep("fe80::1%eth0", 80)}, false},
		{"IPv6 brackets", balancer.Backend{Key: "k", Endpoints: ep("[::1]", 80)}, false},
		{"IPv6 five hex digits", balancer.Backend{Key: "k", Endpoints: ep("2001:db8::12345", 80)}, false},
		{"IPv6 triple colon", balancer.Backend{Key: "k", Endpoints: ep(":::1", 80)}, false},
		{"IPv4 leading zero", balancer.Backend{Key: "k", Endpoints: ep("10.0.0.01", 80)}, false},
		{"IPv4 short", balancer.Backend{Key: "k", Endpoints: ep("10.0.1", 80)}, false},
		{"IPv4 large octet", balancer.Backend{Key: "k", Endpoints: ep("10.0.0.256", 80)}, false},
		{"hostname", balancer.Backend{Key: "k", Endpoints: ep("localhost", 80)}, false},
		{"empty address", balancer.Backend{Key: "k", Endpoints: ep("", 80)}, false},
		{"port 0", balancer.Backend{Key: "k", Endpoints: ep("10.0.0.1", 0)}, false},
		{"port 65535", balancer.Backend{Key: "k", Endpoints: ep("10.0.0.1", 65535)}, true},
		{"port 65536", balancer.Backend{Key: "k", Endpoints: ep("10.0.0.1", 65536)}, false},
		{"weight 100", balancer.Backend{Key: "k", Endpoints: []balancer.Endpoint{{Address: "10.0.0.1", Port: 1, Weight: 100}}}, true},
		{"weight 101", balancer.Backend{Key: "k", Endpoints: []balancer.Endpoint{{Address: "10.0.0.1", Port: 1, Weight: 101}}}, false},
		{"weight negative", balancer.Backend{Key: "k", Endpoints: []balancer.Endpoint{{Address: "10.0.0.1", Port: 1, Weight: -1}}}, false},
		{"zone", balancer.Backend{Key: "k", Endpoints: []balancer.Endpoint{{Address: "10.0.0.1", Port: 1, Zone: "eu-west-1a"}}}, true},
		{"zone with space", balancer.Backend{Key: "k", Endpoints: []balancer.Endpoint{{Address: "10.0.0.1", Port: 1, Zone: "eu west"}}}, false},
		{"duplicate endpoint", balancer.Backend{Key: "k", Endpoints: []balancer.Endpoint{{Address: "10.0.0.1", Port: 1}, {Address: "10.0.0.1", Port: 1}}}, false},
		{"duplicate IPv6 spelled twice", balancer.Backend{Key: "k", Endpoints: []balancer.Endpoint{{Address: "::1", Port: 1}, {Address: "0::0:1", Port: 1}}}, false},
		{"same address other port", balancer.Backend{Key: "k", Endpoints: []balancer.Endpoint{{Address: "10.0.0.1", Port: 1}, {Address: "10.0.0.1", Port: 2}}}, true},
	}
	return append(append(append(append(cases, splitCases()...), answerCases()...), headerCases()...), limitCases()...)
}

// headerCases are splits whose targets edit request headers of their own
// (model.Split.Headers).
func headerCases() []validationCase {
	ch := func(sets [][]balancer.HeaderEdit, ts ...balancer.Target) balancer.Backend {
		return balancer.Backend{Key: "choice@ns/r.0123456789ab", Endpoints: []balancer.Endpoint{},
			Split: &balancer.Split{Targets: ts, Headers: sets}}
	}
	web := func(h int) balancer.Target { return balancer.Target{Backend: "ns/web/80", Weight: 1, Headers: h} }
	set := func(n, v string) balancer.HeaderEdit { return balancer.HeaderEdit{Name: n, Action: "set", Value: v} }
	one := [][]balancer.HeaderEdit{{set("Backend", "v1"), {Name: "X-A", Action: "add", Value: "a"}, {Name: "X-R", Action: "remove"}}}
	many := make([]balancer.HeaderEdit, model.MaxHeaderEdits+1)
	for i := range many {
		many[i] = set(fmt.Sprintf("H%d", i), "v")
	}
	return []validationCase{
		{"headers", ch(one, web(1), web(0)), true},
		{"headers empty set value", ch([][]balancer.HeaderEdit{{set("X", "")}}, web(1)), true},
		{"headers index past the sets", ch(one, web(2)), false},
		{"headers on an answer", balancer.Backend{Key: "choice@ns/r.0123456789ab", Endpoints: []balancer.Endpoint{},
			Split: &balancer.Split{Answers: 1, Headers: one, Targets: []balancer.Target{{Answer: 1, Weight: 1, Headers: 1}}}}, false},
		{"headers empty set", ch([][]balancer.HeaderEdit{{}}, web(0)), false},
		{"headers name", ch([][]balancer.HeaderEdit{{set("X Y", "v")}}, web(1)), false},
		{"headers name twice", ch([][]balancer.HeaderEdit{{set("X", "v"), set("x", "w")}}, web(1)), false},
		{"headers CRLF", ch([][]balancer.HeaderEdit{{set("X", "a\r\nB: c")}}, web(1)), false},
		{"headers dollar", ch([][]balancer.HeaderEdit{{set("X", "$remote_addr")}}, web(1)), false},
		{"headers leading space", ch([][]balancer.HeaderEdit{{set("X", " a")}}, web(1)), false},
		{"headers action", ch([][]balancer.HeaderEdit{{{Name: "X", Action: "append", Value: "v"}}}, web(1)), false},
		{"headers removal value", ch([][]balancer.HeaderEdit{{{Name: "X", Action: "remove", Value: "v"}}}, web(1)), false},
		{"headers too many edits", ch([][]balancer.HeaderEdit{many}, web(1)), false},
	}
}

// answerCases are splits whose targets may be answers (given by named
// locations; the payload has only their number).
func answerCases() []validationCase {
	ch := func(answers int, ts ...balancer.Target) balancer.Backend {
		return balancer.Backend{Key: "choice@ns/vs.0123456789ab", Endpoints: []balancer.Endpoint{},
			Split: &balancer.Split{Targets: ts, Answers: answers}}
	}
	web := func(w int) balancer.Target { return balancer.Target{Backend: "ns/web/80", Weight: w} }
	ans := func(n, w int) balancer.Target { return balancer.Target{Answer: n, Weight: w} }
	return []validationCase{
		{"choice backend and answer", ch(1, web(50), ans(1, 50)), true},
		{"choice every target an answer", ch(2, ans(1, 50), ans(2, 50)), true},
		{"choice answer beyond answers", ch(1, web(50), ans(2, 50)), false},
		{"choice answer without answers", ch(0, web(50), ans(1, 50)), false},
		{"choice answer 0 is no answer", ch(1, web(50), ans(0, 50)), false},
		{"choice target both backend and answer", ch(1, balancer.Target{Backend: "ns/web/80", Answer: 1, Weight: 100}), false},
		{"choice negative answers", ch(-1, web(100)), false},
		{"choice too many answers", ch(model.MaxSplitAnswers+1, web(100)), false},
		{"choice answers at the bound", ch(model.MaxSplitAnswers, web(100)), true},
	}
}

// splitCases are splits (model.Split): canaries made from their rule
// (model.CanaryRule.Split), and rules of every kind of condition.
func splitCases() []validationCase {
	const key = "split@ns/c@ns/web/80@ns/web-canary/80"
	none := []balancer.Endpoint{}
	canary := func(f func(r *model.CanaryRule)) balancer.Backend {
		r := model.CanaryRule{WeightTotal: 100}
		f(&r)
		b := balancer.SplitOf(r.Split(model.ObjectRef{Namespace: "ns", Name: "c"}, "ns/web/80", "ns/web-canary/80"))
		b.Key = key
		return b
	}
	sp := func(f func(s *balancer.Split)) balancer.Backend {
		b := canary(func(r *model.CanaryRule) { r.Header, r.Cookie, r.Weight = "X-Canary", "c", 10 })
		f(b.Split)
		return b
	}
	cond := func(kind, name, match, value string) func(s *balancer.Split) {
		return func(s *balancer.Split) {
			s.Primary = ""
			s.Rules = []balancer.Rule{{Conditions: []balancer.Condition{{Kind: kind, Name: name, Match: match, Value: value}},
				Targets: []balancer.Target{{Backend: "ns/other/80", Weight: 1}}}}
		}
	}
	with := func(b balancer.Backend, f func(b *balancer.Backend)) balancer.Backend { f(&b); return b }
	ok := func(*model.CanaryRule) {}
	return []validationCase{
		{"split canary weight only", canary(ok), true},
		{"split canary full", canary(func(r *model.CanaryRule) {
			r.Header, r.HeaderValue, r.Cookie, r.Weight, r.WeightTotal = "X-Canary_1", "v2.1/b:c~d", "use.canary-1", 5, 1000
		}), true},
		{"split canary pattern", canary(func(r *model.CanaryRule) { r.Header, r.HeaderPattern = "h", "^(v2|v3) [a-z]+\\d{1,3}" }), true},
		{"split canary weight all", canary(func(r *model.CanaryRule) { r.Weight = 100 }), true},
		{"split canary total at the bound", canary(func(r *model.CanaryRule) { r.Weight, r.WeightTotal = 1, model.MaxSplitWeight }), true},
		{"split weight over the bound", sp(func(s *balancer.Split) { s.Targets[1].Weight = model.MaxSplitWeight + 1 }), false},
		{"split weight negative", sp(func(s *balancer.Split) { s.Targets[0].Weight = -1 }), false},
		{"split weights sum to 0", sp(func(s *balancer.Split) { s.Targets[0].Weight, s.Targets[1].Weight = 0, 0 }), false},
		{"split affinity of a rule and the default", sp(func(s *balancer.Split) {
			cond("header", "x", "exact", "1")(s)
			s.Rules[0].Affinity, s.Affinity = true, true
		}), true},
		{"split without targets", sp(func(s *balancer.Split) { s.Targets = nil }), false},
		{"split names itself", sp(func(s *balancer.Split) { s.Targets[0].Backend = key }), false},
		{"split bad backend", sp(func(s *balancer.Split) { s.Targets[0].Backend = "a b" }), false},
		{"split primary not among its backends", sp(func(s *balancer.Split) { s.Primary = "ns/other/80" }), false},
		{"split primary bad key", sp(func(s *balancer.Split) { s.Primary = "a b" }), false},
		{"split canary of three backends", sp(func(s *balancer.Split) {
			s.Targets = append(s.Targets, balancer.Target{Backend: "ns/other/80", Weight: 1})
		}), false},
		{"split without primary", sp(func(s *balancer.Split) { s.Primary = "" }), true},
		{"split rule without conditions", sp(func(s *balancer.Split) { s.Rules[0].Conditions = nil }), false},
		{"split unknown match", sp(func(s *balancer.Split) { s.Rules[0].Conditions[0].Match = "prefix" }), false},
		{"split no match", sp(func(s *balancer.Split) { s.Rules[0].Conditions[0].Match = "" }), false},
		{"split header exact", sp(cond("header", "X-Version", "exact", "v2")), true},
		{"split header caseless empty", sp(cond("header", "X-Version", "caseless", "")), true},
		{"split header regex", sp(cond("header", "X-Version", "regex", `^v[2-3]\.`)), true},
		{"split cookie with dot", sp(cond("cookie", "a.b", "exact", "always")), true},
		{"split argument", sp(cond("argument", "v_1", "caseless", "2")), true},
		{"split method", sp(cond("variable", "request_method", "exact", "GET")), true},
		{"split unknown variable", sp(cond("variable", "host", "exact", "a")), false},
		{"split unknown kind", sp(cond("path", "x", "exact", "a")), false},
		{"split header with dot", sp(cond("header", "x.y", "exact", "a")), false},
		{"split header too long", sp(cond("header", strings.Repeat("h", 65), "exact", "a")), false},
		{"split argument with dash", sp(cond("argument", "a-b", "exact", "a")), false},
		{"split cookie with =", sp(cond("cookie", "a=b", "exact", "a")), false},
		{"split value with quote", sp(cond("header", "h", "exact", `a"b`)), false},
		{"split value with backslash", sp(cond("header", "h", "caseless", `a\b`)), false},
		{"split value too long", sp(cond("header", "h", "exact", strings.Repeat("v", 257))), false},
		{"split empty regex", sp(cond("header", "h", "regex", "")), false},
		{"split regex with dollar", sp(cond("header", "h", "regex", "a$")), false},
		{"split regex optional paren", sp(cond("header", "h", "regex", `\(?x`)), true},
		{"split regex with newline", sp(cond("header", "h", "regex", "a\nb")), false},
		{"split with endpoints", with(canary(ok), func(b *balancer.Backend) { b.Endpoints = []balancer.Endpoint{{Address: "10.0.0.1", Port: 1}} }), false},
		{"split with method", with(canary(ok), func(b *balancer.Backend) { b.Method = balancer.EWMA }), false},
		{"split with retries", with(canary(ok), func(b *balancer.Backend) { b.Retries = new(1) }), false},
		{"split with max_fails", with(canary(ok), func(b *balancer.Backend) { b.MaxFails, b.FailTimeoutMs = 1, 1000 }), false},
		{"split with max_conns", with(canary(ok), func(b *balancer.Backend) { b.MaxConns = 1 }), false},
		{"split of no endpoints", with(canary(ok), func(b *balancer.Backend) { b.Endpoints = none }), true},
	}
}

// goOnlyCases are refused by Go alone: validate.lua checks a regex's
// alphabet, and leaves its syntax, which PCRE and RE2 must read alike,
// to the controller (model.ParseHeaderRegex).
func goOnlyCases() []validationCase {
	sp := func(p string) balancer.Backend {
		return balancer.Backend{Key: "s", Endpoints: []balancer.Endpoint{}, Split: &balancer.Split{
			Rules: []balancer.Rule{{Conditions: []balancer.Condition{{Kind: "header", Name: "h", Match: "regex", Value: p}},
				Targets: []balancer.Target{{Backend: "b", Weight: 1}}}},
			Targets: []balancer.Target{{Backend: "a", Weight: 1}}}}
	}
	return []validationCase{
		{"split regex with flags", sp("(?i)a"), false},
		{"split regex backreference", sp(`(a)\1`), false},
		{"split regex unbalanced", sp("(a"), false},
	}
}

func TestBackendValidate(t *testing.T) {
	for _, tc := range append(validationCases(), goOnlyCases()...) {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b
			if b.Endpoints == nil {
				b.Endpoints = []balancer.Endpoint{{Address: "127.0.0.2", Port: 80, Ready: true}}
			}
			err := b.Validate()
			if (err == nil) != tc.valid {
				t.Errorf("Validate() = %v, want valid=%v", err, tc.valid)
			}
		})
	}
}

func TestStateValidate(t *testing.T) {
	ok := balancer.Backend{Key: "a", Endpoints: []balancer.Endpoint{}}
	tests := []struct {
		name  string
		st    balancer.State
		valid bool
	}{
		{"empty", balancer.State{}, true},
		{"one", balancer.State{Generation: 1, Backends: []balancer.Backend{ok}}, true},
		{"duplicate key", balancer.State{Backends: []balancer.Backend{ok, ok}}, false},
		{"negative generation", balancer.State{Generation: -1}, false},
		{"generation beyond 2^53", balancer.State{Generation: balancer.MaxGeneration + 1}, false},
		{"bad backend", balancer.State{Backends: []balancer.Backend{{Key: "a b"}}}, false},
	}
	for _, tc := range tests {
		if err := tc.st.Validate(); (err == nil) != tc.valid {
			t.Errorf("%s: Validate() = %v, want valid=%v", tc.name, err, tc.valid)
		}
	}
}
