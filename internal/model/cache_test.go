package model

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestParseCacheTemplate: a row per rule of the cache key and condition
// grammar.
func TestParseCacheTemplate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Template
		err  string
	}{
		{in: "$scheme$host$request_uri", want: Template{{Variable: "scheme"}, {Variable: "host"}, {Variable: "request_uri"}}},
		{in: "${scheme}://${host}${uri}", want: Template{{Variable: "scheme"}, {Literal: "://"}, {Variable: "host"}, {Variable: "uri"}}},
		{in: "$cookie_Session|$http_x_user", want: Template{{Variable: "cookie_session"}, {Literal: "|"}, {Variable: "http_x_user"}}},
		{in: "v1-$arg_lang", want: Template{{Literal: "v1-"}, {Variable: "arg_lang"}}},
		{in: "$proxy_host$request_uri", want: Template{{Variable: "proxy_host"}, {Variable: "request_uri"}}},
		{in: "", err: "empty"},
		{in: "$request_body", err: "not a variable allowed"},
		{in: "$upstream_addr", err: "not a variable allowed"},
		{in: "$", err: "not a variable allowed"},
		{in: "${host", err: "without }"},
		{in: "$host $uri", err: "space"},
		{in: `$host"`, err: `"`},
		{in: `$host;`, err: "outside"},
		{in: `$host\$uri`, err: "outside"},
		{in: "$host{x}", err: "outside"},
		{in: "$host\n", err: "outside"},
		{in: "$hostélan", err: "outside"},
		{in: strings.Repeat("a", MaxTemplateLen+1), err: "at most"},
	} {
		got, err := ParseCacheTemplate(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: %v, want an error with %q", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || !reflect.DeepEqual(got, tc.want)):
			t.Errorf("%q: %+v (%v), want %+v", tc.in, got, err, tc.want)
		}
	}
}

// TestCacheTimes: a row per rule of the cache and manager times.
func TestCacheTimes(t *testing.T) {
	for in, want := range map[string]time.Duration{"30s": 30 * time.Second, "10m": 10 * time.Minute, "1h": time.Hour, "2d": 48 * time.Hour,
		"365d": MaxCacheTime, "366d": 0, "0s": 0, "1w": 0, "1.5h": 0, "10": 0, "-1s": 0, "1M": 0} {
		if got, err := ParseCacheTime(in); got != want || (err == nil) != (want != 0) {
			t.Errorf("ParseCacheTime(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for in, want := range map[string]time.Duration{"50ms": 50 * time.Millisecond, "1s": time.Second, "2000us": 2 * time.Millisecond,
		"60s": time.Minute, "61s": 0, "500us": 0, "1500us": 0, "0ms": 0, "1m": 0, "10": 0} {
		if got, err := ParseCacheManagerTime(in); got != want || (err == nil) != (want != 0) {
			t.Errorf("ParseCacheManagerTime(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
}

// TestCacheZoneValidate: what the renderer refuses of a zone.
func TestCacheZoneValidate(t *testing.T) {
	ok := CacheZone{Name: "cw_0a1b2c3d4e5f_pages", Size: 10 << 20, Levels: "1:2"}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*CacheZone){
		"a name that needs quoting": func(z *CacheZone) { z.Name = "a b" },
		"a name starting with _":    func(z *CacheZone) { z.Name = "_a" },
		"a keys zone too large":     func(z *CacheZone) { z.Size = MaxCacheZoneSize + 1 },
		"a keys zone too small":     func(z *CacheZone) { z.Size = 1024 },
		"levels of 3":               func(z *CacheZone) { z.Levels = "3" },
		"a negative max size":       func(z *CacheZone) { z.MaxSize = -1 },
	} {
		z := ok
		change(&z)
		if z.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzParseCacheTemplate: whatever it accepts holds only allowed
// variables and literals of the grammar's characters, so nothing can end
// the quoted string or the directive it is printed in.
func FuzzParseCacheTemplate(f *testing.F) {
	for _, s := range []string{"$scheme$host$request_uri", "${cookie_a}|x", "$host\";", "${", "$http_", "a$$b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tpl, err := ParseCacheTemplate(s)
		if err != nil {
			return
		}
		for _, p := range tpl {
			if p.Variable != "" {
				if _, ok := CacheVariables.allows(p.Variable); !ok {
					t.Fatalf("%q: variable %q", s, p.Variable)
				}
				continue
			}
			for i := 0; i < len(p.Literal); i++ {
				if !cacheLiteralChars[p.Literal[i]] {
					t.Fatalf("%q: literal %q", s, p.Literal)
				}
			}
		}
	})
}
