package render

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/model"
)

// hostileValues break out of a token or inject a directive or variable
// unless a generator stops them.
var hostileValues = []string{
	`"`, `'`, `{`, `}`, `;`, "\n", `$`, `#`, `\`, " ",
	`x"; return 200 "pwned`, "x;}\nserver { listen 9999; }\n#",
	`${host}`, `$host`, `\"; deny all; #`, "ünï\u202ecödé", "\x00", "\r\n",
	strings.Repeat("a", 5000), strings.Repeat("/a", 3000),
}

// safeToken reports whether out is one nginx token that cannot end early
// or expand anything but what want allows: quoted, no raw quote, newline
// or control character inside.
func safeToken(t *testing.T, what, in, out string) {
	t.Helper()
	if len(out) < 2 || out[0] != '"' || out[len(out)-1] != '"' {
		t.Errorf("%s(%q) = %s: not one quoted token", what, in, out)
		return
	}
	body := out[1 : len(out)-1]
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '\\':
			i++
		case c == '"' || c < 0x20:
			t.Errorf("%s(%q) = %s: breaks out of its quotes", what, in, out)
		}
	}
}

func TestRegexLocation(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/api/(.*)", "/api/(.*)"},
		{"/id/[0-9]+$", `/id/[0-9]+\z`},
		{"/a$|/b$", `/a\z|/b\z`},
		{"/x{2,3}", "/x{2,3}"},
		{`/[]a]`, `/[]a]`},
		{`/[[:alpha:]]+$`, `/[[:alpha:]]+\z`},
		{`/\.json$`, `/\.json\z`},
		{"$", `\z`},
	} {
		got, err := regexLocation(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("regexLocation(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range append([]string{
		`/a\$`, `/[$]`, `/[a$]`, `/[^$]`, `/[[:alpha:]$]`, `/a(`, `/a\`, `/[a`, `/a b`, "/a\tb", `/a"`, `/a;b`, `/a%20`, "",
	}, hostileValues...) {
		if got, err := regexLocation(bad); err == nil {
			if strings.Contains(got, "$") {
				t.Errorf("regexLocation(%q) = %q holds a '$'", bad, got)
			}
			if _, err := Quote(got); err != nil {
				t.Errorf("regexLocation(%q) = %q, which Quote refuses", bad, got)
			}
			if strings.ContainsAny(bad, "\"';# \n\\") || len(bad) > maxQuoted {
				t.Errorf("regexLocation(%q) = %q: must be refused", bad, got)
			}
		}
	}
}

func TestRewriteReplacement(t *testing.T) {
	for in, want := range map[string]string{
		"/":               `"/"`,
		"/new/$1":         `"/new/$1"`,
		"$2":              `"$2"`,
		"/a/$1/b/$9c":     `"/a/$1/b/$9c"`,
		"/x-y_z.~!*()+,=": `"/x-y_z.~!*()+,="`,
	} {
		if got, err := rewriteReplacement(in); err != nil || got != want {
			t.Errorf("rewriteReplacement(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range append([]string{
		"", "new", "http://evil/", "$0", "$10x", "/$", "/$x", "/${1}", "/$host", "/a?b", "/a%20", "$scheme://x", "/a{1}",
	}, hostileValues...) {
		if got, err := rewriteReplacement(bad); err == nil {
			t.Errorf("rewriteReplacement(%q) = %q: must be refused", bad, got)
		}
	}
}

func TestOriginRegex(t *testing.T) {
	for in, want := range map[string]string{
		"https://a.example.com":       `^https://a\.example\.com\z`,
		"http://*.example.com:8080":   `^http://[A-Za-z0-9-]+\.example\.com:8080\z`,
		"null":                        `^null\z`,
		"chrome-extension://abc-def0": `^chrome-extension://abc-def0\z`,
	} {
		if got, err := originRegex(in); err != nil || got != want {
			t.Errorf("originRegex(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range append([]string{
		"example.com", "https://", "https://a.com/", "https://a.com/path", "https://*.*.a.com", "https://a.*.com",
		"https://a.com:port", "https://a.com:123456", "*", "https://user@a.com", "HTTPS://a.com",
	}, hostileValues...) {
		if got, err := originRegex(bad); err == nil {
			t.Errorf("originRegex(%q) = %q: must be refused", bad, got)
		}
	}
}

func TestMirrorURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://10.0.0.1:8080/mirror":       `"http://10.0.0.1:8080/mirror"`,
		"https://m.example.com$request_uri": `"https://m.example.com${request_uri}"`,
		"http://[::1]:81/a?b=c%20d":         `"http://[::1]:81/a?b=c%20d"`,
	} {
		if got, err := mirrorURL(in); err != nil || got != want {
			t.Errorf("mirrorURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{
		"", "/relative", "ftp://a/", "http://", "http://a/$host", "http://a/$request_uri$request_uri", "http://a$request_urix",
		"http://u:p@a/", "http://a/#frag", "http://a/{x}", "$request_uri",
	} {
		if got, err := mirrorURL(bad); err == nil {
			t.Errorf("mirrorURL(%q) = %q: must be refused", bad, got)
		}
	}
	for _, v := range hostileValues {
		for _, in := range []string{v, "http://a/" + v, "http://" + v + "/", "http://a/" + v + "$request_uri"} {
			if got, err := mirrorURL(in); err == nil {
				safeToken(t, "mirrorURL", in, got)
				if strings.Count(got, "$") > 1 || strings.Contains(got, "$") && !strings.HasSuffix(got, `${request_uri}"`) {
					t.Errorf("mirrorURL(%q) = %s: a variable besides $request_uri", in, got)
				}
			}
		}
	}
}

func TestJoinVars(t *testing.T) {
	got, err := appRootURL("/app/x")
	if want := `"${scheme}://${http_host}/app/x"`; err != nil || got != want {
		t.Errorf("appRootURL = %q, %v; want %q", got, err, want)
	}
	got, err = hostRedirectURL("www.a.com", true, varRedirectURI)
	if want := `"${scheme}://www.a.com:${server_port}${causeway_redirect_uri}"`; err != nil || got != want {
		t.Errorf("hostRedirectURL = %q, %v; want %q", got, err, want)
	}
	if _, err := joinVars(nginxVar("host")); err == nil {
		t.Error("joinVars takes a variable outside its list")
	}
	if _, err := joinVars(42); err == nil {
		t.Error("joinVars takes an int")
	}
	for _, v := range append([]string{"app", "/a b", "/a{b}", "/a?b", "/a%2F"}, hostileValues...) {
		if got, err := appRootURL(v); err == nil {
			t.Errorf("appRootURL(%q) = %q: must be refused", v, got)
		}
		if got, err := appRootURL("/" + v); err == nil {
			safeToken(t, "appRootURL", v, got)
			if strings.Count(got, "$") != 2 {
				t.Errorf("appRootURL(%q) = %s: a variable of its own", v, got)
			}
		}
		if got, err := hostRedirectURL(v, false, varRequestURI); err == nil && v != "app" {
			t.Errorf("hostRedirectURL(%q) = %q: must be refused", v, got)
		}
		if got, err := joinVars(v); err == nil {
			safeToken(t, "joinVars", v, got)
			if strings.ContainsAny(got[1:len(got)-1], `$"\{}`) {
				t.Errorf("joinVars(%q) = %s", v, got)
			}
		}
	}
}

func TestTokenGenerators(t *testing.T) {
	if got, err := tokenList("method", []string{"GET", "POST"}, false); err != nil || got != `"GET, POST"` {
		t.Errorf("tokenList = %q, %v", got, err)
	}
	if got, err := tokenList("header", []string{"*"}, true); err != nil || got != `"*"` {
		t.Errorf("tokenList(*) = %q, %v", got, err)
	}
	if got, err := fixedTokens("cond", []string{"error", "http_502", "non_idempotent"}, nextUpstreamTokens); err != nil || got != "error http_502 non_idempotent" {
		t.Errorf("fixedTokens = %q, %v", got, err)
	}
	if got, err := ciphers("ECDHE+AESGCM:!aNULL:@SECLEVEL=1"); err != nil || got != `"ECDHE+AESGCM:!aNULL:@SECLEVEL=1"` {
		t.Errorf("ciphers = %q, %v", got, err)
	}
	for _, v := range append([]string{"a b", "a,b", "*x"}, hostileValues...) {
		if got, err := tokenList("method", []string{"GET", v}, false); err == nil {
			t.Errorf("tokenList(%q) = %q: must be refused", v, got)
		}
		if got, err := fixedTokens("cond", []string{v}, nextUpstreamTokens); err == nil {
			t.Errorf("fixedTokens(%q) = %q: must be refused", v, got)
		}
		if got, err := fixedTokens("protocol", []string{v}, sslProtocols); err == nil {
			t.Errorf("fixedTokens(%q) = %q: must be refused", v, got)
		}
		if got, err := ciphers(v); err == nil && v != "{" && v != "}" {
			t.Errorf("ciphers(%q) = %q: must be refused", v, got)
		}
		if headerName(v) {
			t.Errorf("header name %q accepted", v)
		}
	}
}

func TestTimesAndSizes(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "", time.Second: "1s", 90 * time.Second: "90s", 1500 * time.Millisecond: "1500ms", time.Microsecond: "1ms",
	} {
		if got, err := nginxTime(d); err != nil || got != want {
			t.Errorf("nginxTime(%s) = %q, %v; want %q", d, got, err, want)
		}
	}
	if _, err := nginxTime(-time.Second); err == nil {
		t.Error("negative duration rendered")
	}
	for n, want := range map[model.Size]string{0: "0", 100: "100", 4096: "4k", 1 << 20: "1m", 3 << 30: "3072m", 1536: "1536"} {
		if got, err := nginxSize(n); err != nil || got != want {
			t.Errorf("nginxSize(%d) = %q, %v; want %q", n, got, err, want)
		}
	}
	if _, err := nginxSize(-1); err == nil {
		t.Error("negative size rendered")
	}
}

// TestHeaderNameIsTheTokenGrammar: the loop accepts exactly
// ^[A-Za-z0-9._-]{1,256}$.
func TestHeaderNameIsTheTokenGrammar(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9._-]{1,256}$`)
	for _, s := range append([]string{"", "X-Frame-Options", "a.b_c-9", "a b", "ü", "K\u212a", "a\x00", strings.Repeat("a", 256), strings.Repeat("a", 257), "*", "a:b"}, hostileValues...) {
		if got, want := headerName(s), re.MatchString(s); got != want {
			t.Errorf("headerName(%q) = %v, want %v", s, got, want)
		}
	}
}
