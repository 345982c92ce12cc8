package balancer

import (
	"encoding/json"
	"strings"
	"testing"
)

type validationCase struct {
	name  string
	b     Backend
	valid bool
}

// validationCases is shared by the Go unit test and the Go/Lua parity test.
// A nil Endpoints list is replaced by one valid endpoint.
func validationCases() []validationCase {
	no, yes := false, true
	ep := func(addr string, port int) []Endpoint { return []Endpoint{{Address: addr, Port: port, Ready: true}} }
	cases := []validationCase{
		{"minimal", Backend{Key: "default/web/80"}, true},
		{"all key characters", Backend{Key: "a-b_c.d:e/f@g"}, true},
		{"key starts with dash", Backend{Key: "-a"}, false},
		{"key with space", Backend{Key: "a b"}, false},
		{"key with dollar", Backend{Key: "a$b"}, false},
		{"key with brace", Backend{Key: "a{b"}, false},
		{"key with semicolon", Backend{Key: "a;b"}, false},
		{"key too long", Backend{Key: strings.Repeat("k", MaxKeyLen+1)}, false},
		{"key at limit", Backend{Key: strings.Repeat("k", MaxKeyLen)}, true},
		{"every method", Backend{Key: "k", Method: EWMA}, true},
		{"unknown method", Backend{Key: "k", Method: "random"}, false},
		{"retries 0", Backend{Key: "k", Retries: intp(0)}, true},
		{"retries 5", Backend{Key: "k", Retries: intp(5)}, true},
		{"retries 6", Backend{Key: "k", Retries: intp(6)}, false},
		{"chash uri", Backend{Key: "k", Method: CHash, HashKey: "$request_uri"}, true},
		{"chash two variables", Backend{Key: "k", Method: CHash, HashKey: "$host$request_uri"}, true},
		{"chash header", Backend{Key: "k", Method: CHash, HashKey: "$http_x_user"}, true},
		{"chash cookie", Backend{Key: "k", Method: CHash, HashKey: "$cookie_id"}, true},
		{"chash cookie upper case", Backend{Key: "k", Method: CHash, HashKey: "$cookie_SessionID"}, true},
		{"chash arg", Backend{Key: "k", Method: CHash, HashKey: "$arg_user"}, true},
		{"chash remote addr", Backend{Key: "k", Method: CHash, HashKey: "$remote_addr"}, true},
		{"chash missing key", Backend{Key: "k", Method: CHash}, false},
		{"chash literal", Backend{Key: "k", Method: CHash, HashKey: "$host:$uri"}, false},
		{"chash bare name", Backend{Key: "k", Method: CHash, HashKey: "uri"}, false},
		{"chash dollar only", Backend{Key: "k", Method: CHash, HashKey: "$"}, false},
		{"chash trailing dollar", Backend{Key: "k", Method: CHash, HashKey: "$uri$"}, false},
		{"chash braces", Backend{Key: "k", Method: CHash, HashKey: "${uri}"}, false},
		{"chash unknown variable", Backend{Key: "k", Method: CHash, HashKey: "$document_root"}, false},
		{"chash upper-case header", Backend{Key: "k", Method: CHash, HashKey: "$http_X_User"}, false},
		{"chash empty header name", Backend{Key: "k", Method: CHash, HashKey: "$http_"}, false},
		{"hash key on round robin", Backend{Key: "k", HashKey: "$uri"}, false},
		{"sticky defaults", Backend{Key: "k", Method: Sticky}, true},
		{"sticky full", Backend{Key: "k", Method: Sticky, Sticky: &StickyOptions{Cookie: "route", Path: "/app", MaxAge: 3600, SameSite: "Strict", Secure: true, HTTPOnly: &no}}, true},
		{"sticky None secure", Backend{Key: "k", Method: Sticky, Sticky: &StickyOptions{SameSite: "None", Secure: true, HTTPOnly: &yes}}, true},
		{"sticky None insecure", Backend{Key: "k", Method: Sticky, Sticky: &StickyOptions{SameSite: "None"}}, false},
		{"sticky same_site lower", Backend{Key: "k", Method: Sticky, Sticky: &StickyOptions{SameSite: "lax"}}, false},
		{"sticky cookie with =", Backend{Key: "k", Method: Sticky, Sticky: &StickyOptions{Cookie: "a=b"}}, false},
		{"sticky cookie too long", Backend{Key: "k", Method: Sticky, Sticky: &StickyOptions{Cookie: strings.Repeat("c", 65)}}, false},
		{"sticky path relative", Backend{Key: "k", Method: Sticky, Sticky: &StickyOptions{Path: "app"}}, false},
		{"sticky path with ;", Backend{Key: "k", Method: Sticky, Sticky: &StickyOptions{Path: "/a;b"}}, false},
		{"sticky path with space", Backend{Key: "k", Method: Sticky, Sticky: &StickyOptions{Path: "/a b"}}, false},
		{"sticky max age negative", Backend{Key: "k", Method: Sticky, Sticky: &StickyOptions{MaxAge: -1}}, false},
		{"sticky max age too big", Backend{Key: "k", Method: Sticky, Sticky: &StickyOptions{MaxAge: MaxCookieAge + 1}}, false},
		{"sticky options on p2c", Backend{Key: "k", Method: P2C, Sticky: &StickyOptions{}}, false},
		{"no endpoints", Backend{Key: "k", Endpoints: []Endpoint{}}, true},
		{"IPv6", Backend{Key: "k", Endpoints: ep("2001:db8::1", 80)}, true},
		{"IPv6 upper case", Backend{Key: "k", Endpoints: ep("2001:DB8::A", 80)}, true},
		{"IPv4-mapped IPv6", Backend{Key: "k", Endpoints: ep("::ffff:10.0.0.1", 80)}, true},
		{"IPv6 embedded IPv4 not last", Backend{Key: "k", Endpoints: ep("1.2.3.4::", 80)}, false},
		{"IPv6 zone", Backend{Key: "k", Endpoints: ep("fe80::1%eth0", 80)}, false},
		{"IPv6 brackets", Backend{Key: "k", Endpoints: ep("[::1]", 80)}, false},
		{"IPv6 five hex digits", Backend{Key: "k", Endpoints: ep("2001:db8::12345", 80)}, false},
		{"IPv6 triple colon", Backend{Key: "k", Endpoints: ep(":::1", 80)}, false},
		{"IPv4 leading zero", Backend{Key: "k", Endpoints: ep("10.0.0.01", 80)}, false},
		{"IPv4 short", Backend{Key: "k", Endpoints: ep("10.0.1", 80)}, false},
		{"IPv4 large octet", Backend{Key: "k", Endpoints: ep("10.0.0.256", 80)}, false},
		{"hostname", Backend{Key: "k", Endpoints: ep("localhost", 80)}, false},
		{"empty address", Backend{Key: "k", Endpoints: ep("", 80)}, false},
		{"port 0", Backend{Key: "k", Endpoints: ep("10.0.0.1", 0)}, false},
		{"port 65535", Backend{Key: "k", Endpoints: ep("10.0.0.1", 65535)}, true},
		{"port 65536", Backend{Key: "k", Endpoints: ep("10.0.0.1", 65536)}, false},
		{"weight 100", Backend{Key: "k", Endpoints: []Endpoint{{Address: "10.0.0.1", Port: 1, Weight: 100}}}, true},
		{"weight 101", Backend{Key: "k", Endpoints: []Endpoint{{Address: "10.0.0.1", Port: 1, Weight: 101}}}, false},
		{"weight negative", Backend{Key: "k", Endpoints: []Endpoint{{Address: "10.0.0.1", Port: 1, Weight: -1}}}, false},
		{"zone", Backend{Key: "k", Endpoints: []Endpoint{{Address: "10.0.0.1", Port: 1, Zone: "eu-west-1a"}}}, true},
		{"zone with space", Backend{Key: "k", Endpoints: []Endpoint{{Address: "10.0.0.1", Port: 1, Zone: "eu west"}}}, false},
		{"duplicate endpoint", Backend{Key: "k", Endpoints: []Endpoint{{Address: "10.0.0.1", Port: 1}, {Address: "10.0.0.1", Port: 1}}}, false},
		{"duplicate IPv6 spelled twice", Backend{Key: "k", Endpoints: []Endpoint{{Address: "::1", Port: 1}, {Address: "0::0:1", Port: 1}}}, false},
		{"same address other port", Backend{Key: "k", Endpoints: []Endpoint{{Address: "10.0.0.1", Port: 1}, {Address: "10.0.0.1", Port: 2}}}, true},
	}
	return append(cases, limitCases()...)
}

func TestBackendValidate(t *testing.T) {
	for _, tc := range validationCases() {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b
			if b.Endpoints == nil {
				b.Endpoints = []Endpoint{{Address: "127.0.0.2", Port: 80, Ready: true}}
			}
			err := b.Validate()
			if (err == nil) != tc.valid {
				t.Errorf("Validate() = %v, want valid=%v", err, tc.valid)
			}
		})
	}
}

func TestStateValidate(t *testing.T) {
	ok := Backend{Key: "a", Endpoints: []Endpoint{}}
	tests := []struct {
		name  string
		st    State
		valid bool
	}{
		{"empty", State{}, true},
		{"one", State{Generation: 1, Backends: []Backend{ok}}, true},
		{"duplicate key", State{Backends: []Backend{ok, ok}}, false},
		{"negative generation", State{Generation: -1}, false},
		{"generation beyond 2^53", State{Generation: MaxGeneration + 1}, false},
		{"bad backend", State{Backends: []Backend{{Key: "a b"}}}, false},
	}
	for _, tc := range tests {
		if err := tc.st.Validate(); (err == nil) != tc.valid {
			t.Errorf("%s: Validate() = %v, want valid=%v", tc.name, err, tc.valid)
		}
	}
}

// The wire form: nil endpoints become [], zero-valued options are omitted
// so the Lua defaults apply, and Ready is always sent.
func TestWireFormat(t *testing.T) {
	b := Backend{Key: "k", Endpoints: nil}
	got, err := json.Marshal(statePayload{SchemaVersion, 3, wireBackends([]Backend{b})})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"version":1,"generation":3,"backends":[{"key":"k","endpoints":[]}]}`; string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	e, _ := json.Marshal(Endpoint{Address: "10.0.0.1", Port: 80})
	if want := `{"address":"10.0.0.1","port":80,"ready":false}`; string(e) != want {
		t.Errorf("got  %s\nwant %s", e, want)
	}
	u, _ := json.Marshal(updatePayload{Version: 1, Generation: 4, Delete: []string{"x"}})
	if want := `{"version":1,"generation":4,"delete":["x"]}`; string(u) != want {
		t.Errorf("got  %s\nwant %s", u, want)
	}
}
