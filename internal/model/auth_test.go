package model

import (
	"crypto/sha1"
	"encoding/base64"
	"strings"
	"testing"
)

// shaHash is htpasswd -s: {SHA} and the base64 of the password's SHA-1.
func shaHash(pw string) string {
	d := sha1.Sum([]byte(pw))
	return "{SHA}" + base64.StdEncoding.EncodeToString(d[:])
}

// Hashes of "secret" made by openssl passwd and libcrypt.
const (
	apr1Hash   = "$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/"
	md5Hash    = "$1$abcdefgh$cHJi5PXp/ki/ktXzqlk6I1"
	sha256Hash = "$5$abcdefghijklmnop$i7zHaTeYqXlesRXJ8dXj6o.MEFQdzfIJpJpcWAtszs6"
	sha512Hash = "$6$abcdefgh$ltjgWl6579NluT/Vi1nwEvcil.G5Nbc4NiXZaNGStk8PSwGfQv72N2CKPPrVACtLtip/cZ/1GM/O6IND4WQhG."
	roundsHash = "$5$rounds=6000$saltsalt$JYVzZ0FLiECKxAuiiRAXWC/CtGzKt0JEZwHkJcOigaB"
	bcryptHash = "$2y$05$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a"
)

func TestParseHtpasswd(t *testing.T) {
	good := []struct{ in, want string }{
		{"alice:" + shaHash("secret"), "alice:" + shaHash("secret") + "\n"},
		{"alice:" + apr1Hash + "\r\n\r\n# comment\nbob:" + bcryptHash + "\n",
			"alice:" + apr1Hash + "\nbob:" + bcryptHash + "\n"},
		{"a:" + md5Hash + "\nb:" + sha256Hash + "\nc:" + sha512Hash + "\nd:" + roundsHash,
			"a:" + md5Hash + "\nb:" + sha256Hash + "\nc:" + sha512Hash + "\nd:" + roundsHash + "\n"},
		{"ünïcode.user@example:" + shaHash("x"), "ünïcode.user@example:" + shaHash("x") + "\n"},
		{"u:{SSHA}" + base64.StdEncoding.EncodeToString(make([]byte, 28)), "u:{SSHA}" + base64.StdEncoding.EncodeToString(make([]byte, 28)) + "\n"},
	}
	for _, tc := range good {
		got, err := ParseHtpasswd([]byte(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("ParseHtpasswd(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	bad := []string{
		"",
		"# only a comment\n\n",
		"alice",
		"alice:",
		"alice:secret",
		"alice:{PLAIN}secret",
		"alice:abJnggxhB/yWI", // DES crypt
		":" + shaHash("x"),
		"#alice:" + shaHash("x") + "\nbob", // the second line has no hash
		"al ice:" + shaHash("x"),
		"al\tice:" + shaHash("x"),
		"al\x00ice:" + shaHash("x"),
		"al\x7fice:" + shaHash("x"),
		"alice:" + shaHash("x") + "\nalice:" + shaHash("y"),
		"alice:" + shaHash("x") + " ",
		"alice:" + shaHash("x") + ":extra",
		"alice:{SHA}AAAA",
		"alice:{SHA}" + strings.Repeat("A", 26) + "==",
		"alice:$apr1$$h9FWgUz3n9YxylKLlR5SQ/",
		"alice:$apr1$abcdefghi$h9FWgUz3n9YxylKLlR5SQ/",
		"alice:$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ",
		"alice:$apr1$ab;defgh$h9FWgUz3n9YxylKLlR5SQ/",
		"alice:$5$rounds=999$saltsalt$JYVzZ0FLiECKxAuiiRAXWC/CtGzKt0JEZwHkJcOigaB",
		"alice:$5$rounds=1000000$saltsalt$JYVzZ0FLiECKxAuiiRAXWC/CtGzKt0JEZwHkJcOigaB",
		"alice:$5$rounds=06000$saltsalt$JYVzZ0FLiECKxAuiiRAXWC/CtGzKt0JEZwHkJcOigaB",
		"alice:$2y$13$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a",
		"alice:$2y$5$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a",
		"alice:$2x$05$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a",
		"alice:" + shaHash("x") + "\n\xff",
		strings.Repeat("u", 257) + ":" + shaHash("x"),
	}
	for _, in := range bad {
		if got, err := ParseHtpasswd([]byte(in)); err == nil {
			t.Errorf("ParseHtpasswd(%q) = %q, want an error", in, got)
		}
	}
	var many strings.Builder
	for i := range MaxAuthUsers + 1 {
		many.WriteString("u" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + itoa(i) + ":" + shaHash("x") + "\n")
	}
	if _, err := ParseHtpasswd([]byte(many.String())); err == nil {
		t.Errorf("more than %d users accepted", MaxAuthUsers)
	}
}

func itoa(i int) string { return fmtInt(i) }

func fmtInt(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return fmtInt(i/10) + string(rune('0'+i%10))
}

func TestParseRealm(t *testing.T) {
	for _, s := range []string{"", "Authentication Required", "Staff only - foo@example.com (1)"} {
		if got, err := ParseRealm(s); err != nil || got != s {
			t.Errorf("ParseRealm(%q) = %q, %v", s, got, err)
		}
	}
	for _, s := range []string{"off", `a"b`, `a\b`, "$host", "a\nb", "é", strings.Repeat("r", 129)} {
		if _, err := ParseRealm(s); err == nil {
			t.Errorf("ParseRealm(%q) accepted", s)
		}
	}
}

// FuzzParseHtpasswd checks that what the validator accepts is one
// "user:hash" line per user, free of what could end a line or a user
// early in nginx's parser.
func FuzzParseHtpasswd(f *testing.F) {
	f.Add("alice:" + apr1Hash + "\r\nbob:" + bcryptHash)
	f.Add("# c\nu:" + sha512Hash)
	f.Add("u:" + roundsHash)
	f.Add("u:{PLAIN}x")
	f.Fuzz(func(t *testing.T, in string) {
		out, err := ParseHtpasswd([]byte(in))
		if err != nil {
			return
		}
		lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		if len(lines) == 0 || len(lines) > MaxAuthUsers || !strings.HasSuffix(string(out), "\n") {
			t.Fatalf("%q: %d lines", out, len(lines))
		}
		for _, l := range lines {
			user, hash, ok := strings.Cut(l, ":")
			if !ok || checkAuthUser(user) != nil || CheckPasswordHash(hash) != nil || strings.ContainsAny(hash, ":\r\x00 #") {
				t.Fatalf("accepted line %q", l)
			}
		}
	})
}
