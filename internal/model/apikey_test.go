package model

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"
)

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestParseAPIKeys(t *testing.T) {
	got, err := ParseAPIKeys(map[string][]byte{"zed": []byte("k2"), "alice.v1": []byte("k1")})
	if err != nil {
		t.Fatal(err)
	}
	if want := "alice.v1:" + sha256Hex("k1") + "\nzed:" + sha256Hex("k2") + "\n"; string(got) != want {
		t.Errorf("got %q, want %q (sorted by client, keys hashed)", got, want)
	}
	many := map[string][]byte{}
	for i := 0; i <= MaxAuthUsers; i++ {
		many["c"+strings.Repeat("x", i%200)+string(rune('a'+i%26))+string(rune('a'+i/26%26))] = []byte{byte(i), byte(i >> 8), 1}
	}
	for _, tc := range []struct {
		name string
		data map[string][]byte
		want string
	}{
		{"no client", nil, "holds no client"},
		{"empty key", map[string][]byte{"a": nil}, `client "a": want a key`},
		{"long key", map[string][]byte{"a": []byte(strings.Repeat("k", maxAPIKeyLen+1))}, `client "a": want a key`},
		{"shared key, named by clients only", map[string][]byte{"a": []byte("secret-k"), "b": []byte("secret-k")}, `clients "a" and "b" have the same key`},
		{"client with a colon", map[string][]byte{"a:b": []byte("k")}, `holds ':'`},
		{"client with a newline", map[string][]byte{"a\nb": []byte("k")}, `client ID`},
		{"long client", map[string][]byte{strings.Repeat("c", 254): []byte("k")}, "want client IDs of 1 to 253 bytes"},
		{"too many clients", many, "more than 1000 clients"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseAPIKeys(tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "secret-k") {
				t.Errorf("error %q shows a key", err)
			}
		})
	}
	if len(many) != MaxAuthUsers+1 {
		t.Fatalf("test data: %d clients", len(many))
	}
}

func TestParseAPIKeyHeader(t *testing.T) {
	for _, s := range []string{"X-API-Key", "apikey", "A1-b2"} {
		if got, err := ParseAPIKeyHeader(s); err != nil || got != s {
			t.Errorf("ParseAPIKeyHeader(%q) = %q, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "x_api_key", "x.key", "x key", "x;y", `x"y`, "$http_host", "x\nb", strings.Repeat("h", 129)} {
		if _, err := ParseAPIKeyHeader(s); err == nil {
			t.Errorf("ParseAPIKeyHeader(%q) accepted", s)
		}
	}
	if v := APIKeyVariable("X-API-Key"); v != "http_x_api_key" {
		t.Errorf("APIKeyVariable = %q", v)
	}
}

var apiKeyHeader = regexp.MustCompile(`^[A-Za-z0-9-]{1,128}$`)

func FuzzParseAPIKeyHeader(f *testing.F) {
	seedValues(f, "ParseAPIKeyHeader", "X-API-Key", "apikey")
	f.Fuzz(func(t *testing.T, in string) {
		out, err := ParseAPIKeyHeader(in)
		if err != nil {
			return
		}
		if out != in || !apiKeyHeader.MatchString(out) {
			t.Fatalf("accepted %q as %q", in, out)
		}
	})
}

// FuzzParseAPIKeys checks that the file holds only "client:sha256hex"
// lines, whatever the keys hold.
func FuzzParseAPIKeys(f *testing.F) {
	f.Add("alice", "k1", "bob", "k2")
	f.Add("a:b", "k\n", "c", "")
	f.Add("x\ny:0", "k", "z", "k")
	line := regexp.MustCompile(`^[A-Za-z0-9._-]{1,253}:[0-9a-f]{64}$`)
	f.Fuzz(func(t *testing.T, c1, k1, c2, k2 string) {
		out, err := ParseAPIKeys(map[string][]byte{c1: []byte(k1), c2: []byte(k2)})
		if err != nil {
			return
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
			if !line.MatchString(l) {
				t.Fatalf("line %q", l)
			}
		}
		if !strings.HasSuffix(string(out), "\n") {
			t.Fatalf("output %q", out)
		}
	})
}

// FuzzParseQueryParam: a query argument name that carries an API key
// reaches nginx.conf inside a quoted variable value.
func FuzzParseQueryParam(f *testing.F) {
	seedValues(f, "ParseQueryParam", "apikey", "api-key.v1")
	name := regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	f.Fuzz(func(t *testing.T, in string) {
		out, err := ParseQueryParam(in)
		if err != nil {
			return
		}
		if out != in || !name.MatchString(out) {
			t.Fatalf("accepted %q as %q", in, out)
		}
	})
}
