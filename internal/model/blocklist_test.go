package model

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/testcorpus"
)

func TestParseHeaderMatches(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []HeaderMatch
		err  string // part of the error; "" for none
	}{
		// good
		{"curl", []HeaderMatch{{Value: "curl"}}, ""},
		{"Bad Bot/1.0 (compatible; x), ~^curl/[0-9]+", []HeaderMatch{{Value: "Bad Bot/1.0 (compatible; x)"}, {Value: "^curl/[0-9]+", Regex: true}}, ""},
		{"~*(scanner|crawl) v\\d", []HeaderMatch{{Value: "(scanner|crawl) v\\d", Regex: true, Fold: true}}, ""},
		{"~bot|spider", []HeaderMatch{{Value: "bot|spider", Regex: true}}, ""},
		// edge
		{"a, a ,~a,~*a", []HeaderMatch{{Value: "a"}, {Value: "a", Regex: true}, {Value: "a", Regex: true, Fold: true}}, ""},
		{"Default-Agent", []HeaderMatch{{Value: "Default-Agent"}}, ""},
		{strings.Repeat("a,", 255) + "b", []HeaderMatch{{Value: "a"}, {Value: "b"}}, ""},
		// bad
		{"", nil, "no empty items"},
		{"a,,b", nil, "no empty items"},
		{"default", nil, "own parameter"},
		{"INCLUDE", nil, "own parameter"},
		{`\x`, nil, `'\\'`},
		{"~", nil, "regex of 1 to"},
		{"~*", nil, "regex of 1 to"},
		{"~evil$", nil, "'$'"},
		{"~(?=x)", nil, "lookaround"},
		{"~a)(b", nil, "invalid"},
		{"~(((a+)+)+)+b", nil, "nests quantifiers"},
		{"~a{1000}", nil, "repeat count"},
		{"~\\z", nil, `escape \z`},
		{"~a\tb", nil, "tab"},
		{"$http_host", nil, "'$'"},
		{"a\"b", nil, "'\"'"},
	} {
		got, err := ParseHeaderMatches(tc.in)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want one containing %q", tc.in, err, tc.err)
		case !reflect.DeepEqual(got, tc.want):
			t.Errorf("%q: %+v, want %+v", tc.in, got, tc.want)
		}
	}
	var many []string
	for i := 0; i < 257; i++ {
		many = append(many, "a"+strings.Repeat("b", i))
	}
	if _, err := ParseHeaderMatches(strings.Join(many, ",")); err == nil {
		t.Error("257 entries accepted")
	}
}

// TestHeaderMatchesInjection: a hostile value is refused, or holds nothing
// that a quoted map key would expand or that could end it (";" and "#" are
// inert inside quotes, and "include ..." is not the word include).
func TestHeaderMatchesInjection(t *testing.T) {
	for _, v := range testcorpus.Injection {
		for _, in := range []string{v, "~" + v, "~*" + v} {
			l, err := ParseHeaderMatches(in)
			if err != nil {
				continue
			}
			for _, m := range l {
				if strings.ContainsAny(m.Value, "$\"\n\r\x00") || !m.Regex && strings.ContainsAny(m.Value, "\\{}") {
					t.Errorf("%q accepted as %+v", in, m)
				}
			}
		}
	}
}

func TestHeaderMatch(t *testing.T) {
	for _, tc := range []struct {
		m    HeaderMatch
		h    string
		want bool
	}{
		{HeaderMatch{Value: "curl"}, "CURL", true},
		{HeaderMatch{Value: "curl"}, "curl/8", false},
		{HeaderMatch{Value: "^curl", Regex: true}, "curl/8", true},
		{HeaderMatch{Value: "^curl", Regex: true}, "Curl/8", false},
		{HeaderMatch{Value: "^curl", Regex: true, Fold: true}, "Curl/8", true},
		{HeaderMatch{Value: "bot", Regex: true}, "a bot here", true},
	} {
		if got := tc.m.Matches(tc.h); got != tc.want {
			t.Errorf("%+v on %q = %v", tc.m, tc.h, got)
		}
	}
}

func TestParseCIDRList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		ok   bool
	}{
		{"10.0.0.0/8, 192.0.2.1,2001:db8::/32", []string{"10.0.0.0/8", "192.0.2.1/32", "2001:db8::/32"}, true},
		{"::1, ::1/128", []string{"::1/128"}, true},
		{"0.0.0.0/0", []string{"0.0.0.0/0"}, true},
		{"10.0.0.1/8", nil, false},
		{"10.0.0.0/33", nil, false},
		{"fe80::1%eth0", nil, false},
		{"::ffff:10.0.0.1", nil, false},
		{"010.0.0.1", nil, false},
		{"", nil, false},
		{"10.0.0.0/8,", nil, false},
		{"10.0.0.1 10.0.0.2", nil, false},
	} {
		got, err := ParseCIDRList(tc.in, 3)
		if (err == nil) != tc.ok {
			t.Errorf("%q: error %v", tc.in, err)
			continue
		}
		var want []netip.Prefix
		for _, w := range tc.want {
			want = append(want, netip.MustParsePrefix(w))
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q = %v, want %v", tc.in, got, want)
		}
	}
	if _, err := ParseCIDRList("10.0.0.1,10.0.0.2,10.0.0.3,10.0.0.4", 3); err == nil {
		t.Error("4 entries accepted with a bound of 3")
	}
	for _, v := range testcorpus.Injection {
		if _, err := ParseCIDRList("10.0.0.0/8,"+v, 10); err == nil {
			t.Errorf("%q accepted", v)
		}
	}
}

func TestAccessListAllows(t *testing.T) {
	a := &AccessList{Deny: []netip.Prefix{netip.MustParsePrefix("10.0.0.7/32")}, Allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}
	for addr, want := range map[string]bool{"10.0.0.1": true, "10.0.0.7": false, "192.0.2.1": false, "::ffff:10.0.0.1": true} {
		if got := a.Allows(netip.MustParseAddr(addr)); got != want {
			t.Errorf("%s: %v", addr, got)
		}
	}
	if !(*AccessList)(nil).Allows(netip.MustParseAddr("192.0.2.1")) {
		t.Error("nil list refuses")
	}
}
