package model

import (
	"fmt"
	"github.com/causeway/causeway/internal/testcorpus"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
)

// valueCase is one row of a parser table: the input and either the wanted
// result or, when bad is set, that the input is refused.
type valueCase[T any] struct {
	in   string
	want T
	bad  bool
}

// refused makes a bad row for each input.
func refused[T any](ins ...string) []valueCase[T] {
	cases := make([]valueCase[T], len(ins))
	for i, in := range ins {
		cases[i] = valueCase[T]{in: in, bad: true}
	}
	return cases
}

// accepted makes a row for each input that must come back unchanged.
func accepted(ins ...string) []valueCase[string] {
	cases := make([]valueCase[string], len(ins))
	for i, in := range ins {
		cases[i] = valueCase[string]{in: in, want: in}
	}
	return cases
}

// checkValues runs a parser table.
func checkValues[T any](t *testing.T, parse func(string) (T, error), cases []valueCase[T]) {
	t.Helper()
	for _, tc := range cases {
		got, err := parse(tc.in)
		switch {
		case tc.bad && err == nil:
			t.Errorf("%+q: accepted as %+v, want an error", Truncate(tc.in), got)
		case !tc.bad && err != nil:
			t.Errorf("%+q: %v", Truncate(tc.in), err)
		case !tc.bad && !reflect.DeepEqual(got, tc.want):
			t.Errorf("%+q: got %+v, want %+v", Truncate(tc.in), got, tc.want)
		}
		checkErrorMessage(t, tc.in, err)
	}
}

// checkErrorMessage checks that an error is short and echoes no control
// or invisible characters of hostile input.
func checkErrorMessage(t *testing.T, in string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	if len(msg) > 300 {
		t.Errorf("%+q: error is %d bytes long: %s", Truncate(in), len(msg), msg)
	}
	if i := strings.IndexFunc(msg, func(r rune) bool { return !unicode.IsPrint(r) }); i >= 0 {
		t.Errorf("%+q: error holds an unprintable character: %+q", Truncate(in), msg)
	}
}

// long returns n bytes: prefix followed by "a"s.
func long(prefix string, n int) string {
	return prefix + strings.Repeat("a", n-len(prefix))
}

// injectionCorpus is the shared corpus (package testcorpus).
var injectionCorpus = testcorpus.Injection

// corpusParsers are the parsers every corpus entry must be refused by,
// with string results.
var corpusParsers = map[string]func(string) (string, error){
	"ParseHeaderValue": func(s string) (string, error) {
		v, err := ParseHeaderValue(s)
		return string(v), err
	},
	"ParseRewriteTarget": func(s string) (string, error) { return ParseRewriteTarget(s, maxRegexGroups) },
	"ParseRedirectURL":   ParseRedirectURL,
	"ParseMirrorURL":     ParseMirrorURL,
	"ParseAuthURL":       parseAuthURLOnly,
	"ParseSigninURL":     ParseSigninURL,
	"ParseCORSOrigin":    ParseCORSOrigin,
	"ParseCipherList":    ParseCipherList,
	"ParseServerCiphers": ParseServerCiphers,
	"ParseRegex":         ParseRegex,
}

// harmlessCorpus are the corpus entries a parser accepts, and why each is
// harmless there. They still have to pass unsafeOutput.
var harmlessCorpus = map[string]map[string]string{
	"ParseHeaderValue": {
		"#":                          "printed inside double quotes, where # starts no comment",
		"`id`":                       "backticks mean nothing to nginx, which runs no shell",
		"%00":                        "nginx does not decode escapes in header values; clients get three bytes",
		"..":                         "plain text in a header",
		"/../../etc/passwd":          "plain text in a header; nginx opens no file named by it",
		"(?=a)":                      "plain text in a header",
		"((a*)*)*b":                  "plain text in a header; nothing matches against it",
		"' or '1'='1":                "single quotes inside double quotes are plain characters",
		"https://a.example/#frag":    "plain text in a header",
		"https://user:pw@a.example/": "plain text in a header",
		"javascript:alert(1)":        "plain text to nginx; which header carries it is the Ingress author's choice",
		"//evil.example":             "plain text to nginx; which header carries it is the Ingress author's choice",
		";":                          "inert inside double quotes; header values such as max-age=1; preload need it",
		"lua_need_request_body on;":  "plain text inside double quotes: the directive skeleton cannot change (see the render hostile tests)",
		"include /etc/passwd;":       "plain text inside double quotes: the directive skeleton cannot change (see the render hostile tests)",
	},
	"ParseRegex": {
		"/../../etc/passwd": "a regex matching request paths; nginx opens no file named by it",
		"//evil.example":    "a regex matching request paths, never a URL",
		"/$host":            "$ is an end anchor here; nginx expands no variables in location regexes",
	},
	"ParseAuthURL": {
		"https://a.example/$host": "an allowlisted variable in the path, printed braced inside the quoted proxy_pass URL; nginx expands it per request and a value cannot leave the quotes",
	},
	"ParseSigninURL": {
		"https://a.example/$host": "an allowlisted variable in the path, printed braced inside the quoted return URL; nginx expands it per request and a value cannot leave the quotes",
	},
	"ParseCipherList": {
		"..": "only bytes of OpenSSL's cipher grammar; OpenSSL refuses a list naming no cipher, which nginx -t reports",
	},
}

func TestInjectionCorpusRefused(t *testing.T) {
	if len(injectionCorpus) < 25 {
		t.Fatalf("the corpus has %d entries, want at least 25", len(injectionCorpus))
	}
	for name, parse := range corpusParsers {
		for _, e := range injectionCorpus {
			out, err := parse(e)
			reason, harmless := harmlessCorpus[name][e]
			switch {
			case err == nil && !harmless:
				t.Errorf("%s accepted %+q as %+q", name, Truncate(e), Truncate(out))
			case err != nil && harmless:
				t.Errorf("%s refuses %+q, which harmlessCorpus says it accepts because %s", name, Truncate(e), reason)
			case err == nil:
				if why := unsafeOutput(name, out); why != "" {
					t.Errorf("%s accepted %+q: %s", name, Truncate(e), why)
				}
			}
			checkErrorMessage(t, e, err)
		}
	}
}

// corpusTemplates put a corpus entry where each parser would otherwise
// accept its input; "%s" stands for the entry.
var corpusTemplates = map[string][]string{
	"ParseHeaderValue":   {"x%sx", "%sx"},
	"ParseRewriteTarget": {"/a/%s", "/a?q=%s", "/a%s"},
	"ParseRedirectURL":   {"https://a.example/%s", "https://a.example/?q=%s", "https://%s.example/", "https://a.example%s", "https://a.example:%s/"},
	"ParseMirrorURL":     {"https://a.example/%s", "https://a.example/?q=%s", "https://%s.example/", "https://a.example%s", "https://a.example/x%s$request_uri"},
	"ParseAuthURL":       {"https://a.example/%s", "https://a.example/?q=%s", "https://%s.example/", "https://a.example%s", "http://a.example:%s/", "https://$host/?q=%s"},
	"ParseSigninURL":     {"https://$host/start?rd=%s", "https://$host/%s", "https://%s.example/", "$scheme://$host%s", "https://a.example:%s/"},
	"ParseCORSOrigin":    {"https://%s.example", "https://a.example:%s", "https://a.example%s"},
	"ParseCipherList":    {"HIGH:%s", "%s:HIGH"},
	"ParseServerCiphers": {"HIGH:%s", "%s:HIGH"},
	"ParseRegex":         {"/%s", "/(%s)", "/[%s]", "/a%s"},
}

// TestInjectionCorpusEmbedded checks that a corpus entry inside an
// otherwise valid value is refused or comes out harmless.
func TestInjectionCorpusEmbedded(t *testing.T) {
	for name, templates := range corpusTemplates {
		parse := corpusParsers[name]
		for _, tmpl := range templates {
			for _, e := range injectionCorpus {
				in := strings.Replace(tmpl, "%s", e, 1)
				out, err := parse(in)
				checkErrorMessage(t, in, err)
				if err != nil {
					continue
				}
				if why := unsafeOutput(name, out); why != "" {
					t.Errorf("%s accepted %+q: %s", name, Truncate(in), why)
				}
			}
		}
	}
}

// unsafeOutput returns why out, accepted by the named parser, breaks the
// parser's grammar or could do harm in nginx.conf, or "" if it does not.
// The fuzz targets share it.
func unsafeOutput(parser, out string) string {
	// Nothing may hold a line break, a NUL, another control byte, a
	// non-ASCII byte or a double quote.
	for i := 0; i < len(out); i++ {
		if c := out[i]; (c < ' ' && c != '\t') || c >= 0x7f || c == '"' {
			return fmt.Sprintf("holds %s", describeByte(c))
		}
	}
	switch parser {
	case "ParseHeaderValue":
		if len(out) > maxHeaderValueLen {
			return "longer than the bound"
		}
		if strings.ContainsAny(out, `$\{}`) {
			return `holds one of $\{}`
		}
		if out != "" && (isBlank(out[0]) || isBlank(out[len(out)-1])) {
			return "starts or ends with a blank"
		}
		if v, err := ParseHeaderValue(out); err != nil || string(v) != out {
			return "does not parse to itself"
		}
	case "ParseRegex":
		if !strings.HasPrefix(out, "/") || len(out) > maxRegexLen {
			return "does not start with / or is too long"
		}
		if strings.ContainsAny(out, "\"';#% \t") {
			return `holds one of "';#% or a blank`
		}
		if strings.Contains(out, `\\`) {
			return `holds \\`
		}
		if n := len(repeatBraces.FindAllString(out, -1)); n != strings.Count(out, "{") || n != strings.Count(out, "}") {
			return "has a brace that is no repeat count"
		}
		for _, expr := range []string{out, "(?i)^" + out} {
			if _, err := regexp.Compile(expr); err != nil {
				return fmt.Sprintf("does not compile: %v", err)
			}
		}
		if RegexGroups(out) > maxRegexGroups {
			return "has too many groups"
		}
	case "ParseRewriteTarget":
		if !strings.HasPrefix(out, "/") || strings.HasPrefix(out, "//") || len(out) > maxRewriteLen {
			return "does not start with a single / or is too long"
		}
		if strings.ContainsAny(out, "'; \t{}#%\\") {
			return `holds one of '; {}#%\ or a blank`
		}
		for i := strings.IndexByte(out, '$'); i >= 0; i = nextByte(out, '$', i) {
			if i+1 == len(out) || out[i+1] < '1' || out[i+1] > '9' {
				return "holds a $ that is no capture reference"
			}
		}
	case "ParseRedirectURL", "ParseMirrorURL", "ParseAuthURL", "ParseSigninURL":
		base := out
		switch parser {
		case "ParseMirrorURL":
			base = strings.TrimSuffix(out, requestURI)
		case "ParseAuthURL", "ParseSigninURL":
			// Only braced, allowlisted variables; the rest is a URL.
			if b, ok := strings.CutPrefix(base, "${scheme}://"); ok {
				base = "http://" + b
			}
			base = bracedVar.ReplaceAllStringFunc(base, func(v string) string {
				if URLTemplateVar(v[2 : len(v)-1]) {
					return "v"
				}
				return v
			})
		}
		if len(out) > maxURLLen {
			return "longer than the bound"
		}
		if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
			return "is no http or https URL"
		}
		if strings.ContainsAny(base, "$'#; \t{}\\<>^`|") {
			return "holds $ or a byte outside the URL grammar"
		}
		authority := strings.SplitN(base, "/", 4)[2]
		if i := strings.IndexByte(authority, '?'); i >= 0 {
			authority = authority[:i]
		}
		if strings.Contains(authority, "@") {
			return "has user information"
		}
		again := ParseRedirectURL
		switch parser {
		case "ParseMirrorURL":
			again = ParseMirrorURL
		case "ParseAuthURL":
			again = parseAuthURLOnly
		case "ParseSigninURL":
			again = ParseSigninURL
		}
		if o, err := again(out); err != nil || o != out {
			return "does not parse to itself"
		}
	case "ParseCORSOrigin":
		if out == "*" {
			break
		}
		if i := strings.IndexFunc(out, func(r rune) bool { return !strings.ContainsRune("abcdefghijklmnopqrstuvwxyz0123456789.:/*-", r) }); i >= 0 {
			return "holds a byte outside the origin grammar"
		}
		if strings.Count(out, "/") != 2 {
			return "has a path"
		}
		if o, err := ParseCORSOrigin(out); err != nil || o != out {
			return "does not parse to itself"
		}
	case "ParseCipherList", "ParseServerCiphers":
		for i := 0; i < len(out); i++ {
			if !cipherChars[out[i]] {
				return "holds a byte outside the cipher grammar"
			}
		}
	default:
		return "unknown parser " + parser
	}
	return ""
}

// bracedVar is a URL template's variable as its parsers print it.
var bracedVar = regexp.MustCompile(`\$\{[a-z0-9_]*\}`)

// repeatBraces is a repeat count in a regex.
var repeatBraces = regexp.MustCompile(`\{[0-9]+(,[0-9]*)?\}`)

// nextByte returns the index of the next c in s after i, or -1.
func nextByte(s string, c byte, i int) int {
	j := strings.IndexByte(s[i+1:], c)
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

func TestParseSize(t *testing.T) {
	cases := []valueCase[int64]{
		{in: "0", want: 0},
		{in: "0k", want: 0},
		{in: "1", want: 1},
		{in: "007", want: 7},
		{in: "1536", want: 1536},
		{in: "512k", want: 512 << 10},
		{in: "512K", want: 512 << 10},
		{in: "1m", want: 1 << 20},
		{in: "1M", want: 1 << 20},
		{in: "2g", want: 2 << 30},
		{in: "2G", want: 2 << 30},
		{in: "999999999", want: 999999999},
		{in: "999999999g", want: 999999999 << 30},
	}
	cases = append(cases, refused[int64](
		"", " 1", "1 ", "1 m", "-1", "+1", "1.5m", ".5m", "1e3", "0x10",
		"1000000000", "1000000000k", // 10 digits
		"1b", "1kb", "1KiB", "1t", "1mm", "k", "m",
		"1m;", "\uff11m", // fullwidth digit
	)...)
	checkValues(t, ParseSize, cases)
}

func TestFormatSize(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0"}, {1, "1"}, {1023, "1023"}, {1024, "1k"}, {1536, "1536"},
		{512 << 10, "512k"}, {1536 << 10, "1536k"}, {1 << 20, "1m"}, {3 << 30, "3g"},
		{1 << 40, "1024g"}, {999999999 << 30, "999999999g"},
	} {
		got := FormatSize(tc.n)
		if got != tc.want {
			t.Errorf("FormatSize(%d) = %q, want %q", tc.n, got, tc.want)
		}
		if n, err := ParseSize(got); err != nil || n != tc.n {
			t.Errorf("ParseSize(FormatSize(%d)) = %d, %v", tc.n, n, err)
		}
	}
}

func TestParseSeconds(t *testing.T) {
	cases := []valueCase[time.Duration]{
		{in: "0", want: 0},
		{in: "0s", want: 0},
		{in: "0ms", want: 0},
		{in: "60", want: time.Minute},
		{in: "007", want: 7 * time.Second},
		{in: "5s", want: 5 * time.Second},
		{in: "500ms", want: 500 * time.Millisecond},
		{in: "2m", want: 2 * time.Minute},
		{in: "1h", want: time.Hour},
		{in: "24h", want: maxSeconds},
		{in: "1440m", want: maxSeconds},
		{in: "86400", want: maxSeconds},
		{in: "86400s", want: maxSeconds},
		{in: "86400000ms", want: maxSeconds},
	}
	cases = append(cases, refused[time.Duration](
		"", "s", "ms", " 1", "1 ", "5 s", "-1", "+1", "1.5", "1.5s", "0x10",
		"1m30s", "5M", "5S", "5MS", "1d", "1w", "1y", "5us", "5ns", "\uff15s",
		"86401", "86401s", "1441m", "25h", "86400001ms",
		"999999999h", "1000000000", // overflow and 10 digits
	)...)
	checkValues(t, ParseSeconds, cases)
}

func TestParseTimeout(t *testing.T) {
	cases := []valueCase[time.Duration]{
		{in: "1ms", want: time.Millisecond},
		{in: "60", want: time.Minute},
		{in: "24h", want: maxSeconds},
	}
	cases = append(cases, refused[time.Duration]("0", "0s", "0ms", "00", "", "25h", "-5")...)
	checkValues(t, ParseTimeout, cases)
}

func TestFormatDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"}, {time.Second, "1s"}, {time.Minute, "60s"}, {maxSeconds, "86400s"},
		{500 * time.Millisecond, "500ms"}, {1500 * time.Millisecond, "1500ms"},
		{1500 * time.Microsecond, "1ms"}, {time.Nanosecond, "0ms"},
	} {
		if got := FormatDuration(tc.d); got != tc.want {
			t.Errorf("FormatDuration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
	// Round trip over everything ParseSeconds can return, sampled.
	for _, s := range []string{"0", "1", "59", "60", "61", "3600", "86400", "1ms", "999ms", "1000ms", "1001ms", "86399999ms", "1m", "24h"} {
		d, err := ParseSeconds(s)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := ParseSeconds(FormatDuration(d)); err != nil || back != d {
			t.Errorf("%q: ParseSeconds(FormatDuration(%v)) = %v, %v", s, d, back, err)
		}
	}
}

func TestParseHeaderName(t *testing.T) {
	cases := accepted("X-Request-ID", "x_forwarded_for", "a.b", "A", "0", long("X-", maxHeaderNameLen))
	cases = append(cases, refused[string](
		"", long("X-", maxHeaderNameLen+1), "X Y", " X", "X ", "X:Y", "X;", "$x", "x$", "x'", "x`", "x#",
		"x!", "x%", "x&", "x*", "x+", "x^", "x|", "x~", `x"`, "x\\", "x{", "x}",
		"x\n", "x\r", "x\x00", "X-\u00dcber", "\u212a", "x\u200b",
	)...)
	checkValues(t, ParseHeaderName, cases)
}

func TestParseHeaderValue(t *testing.T) {
	var cases []valueCase[HeaderValue]
	for _, in := range []string{
		"", "nosniff", "DENY", "max-age=31536000", "a b\tc", "#x", "'self'", "`x`",
		"https://a.example/?a=b&c=d", "!~*()[]<>|^%", long("x", maxHeaderValueLen),
		"a;b", "max-age=31536000; includeSubDomains", "text/html; charset=utf-8",
	} {
		cases = append(cases, valueCase[HeaderValue]{in: in, want: HeaderValue(in)})
	}
	cases = append(cases, refused[HeaderValue](
		" a", "a ", "\ta", "a\t", " ", "$x", "a$", "a\"b", `a\b`, "{", "}",
		"a\nb", "a\rb", "\x00", "a\x7f", "\x1b", "caf\u00e9", long("x", maxHeaderValueLen+1),
	)...)
	checkValues(t, ParseHeaderValue, cases)
}

func TestParseRegex(t *testing.T) {
	nine := "/" + strings.Repeat("(a)", 9)
	cases := accepted(
		"/", "/api", "/api/(.*)", "/foo/bar/[a-z]+", "/(api|web)/(\\d+)", `/\.well-known/.*`,
		"/a{2,5}", "/a{0}", "/a{1,}", "/a{100}", "/a{0,100}", "/a{2}?", "/a*?", "/a+?", "/a??",
		"/[[:alpha:]]+", "/[[:^digit:]]", "/[^/]+", "/[]a]", "/[^]a]", "/[a-]", "/[-a]", `/[\]]`, `/[\d\w.-]`,
		`/[\.-\/]`, "/x$", "/a^", `/\$\^\(\)\[\]\|\*\+\?\-\/`, "/((a*)*)*", "/(((a)))", nine,
		"/!~_,=:@&", long("/", maxRegexLen), "/]", "/{2}", "/*", "/[a-z-]", "/[\\d-]", "/(^)*", "/a{0,0}",
		"/[.]", "/[.a]", "/[:]", "/[:a]", "/[^:alpha:]", "/[=]",
	)
	cases = append(cases, refused[string](
		"", "api", "^/api", "(/api)", ".*", long("/", maxRegexLen+1),
		// bytes outside the grammar
		"/a b", "/a\tb", "/a\"", "/a'", "/a;", "/a#", "/a%20", "/a\n", "/a\x00", "/\u0430", "/a<", "/a`",
		// groups, flags and lookaround
		"/(?i)a", "/(?:a)", "/(?P<n>a)", "/(?<n>a)", "/(?=a)", "/(?!a)", "/(?<=a)", "/a(?#x)",
		// escapes
		`/(a)\1`, `/\\`, `/\b`, `/\B`, `/\A`, `/\z`, `/\x41`, `/\Q.\E`, `/\pL`, `/\n`, `/\t`, `/\{`, `/\}`, `/\`, `/\0`,
		// braces
		"/a{1001}", "/a{101}", "/a{0,101}", "/a{,3}", "/a{01}", "/a{1,02}", "/a{2", "/a}", "/a{}", "/a{x}", "/a{+1}", "/a{1,+2}", "/a{-1}", "/a{ 1}", "/a{,}",
		"/[{]", "/[}]", "/(a){2}{3}",
		// classes
		"/[[.a.]]", "/[[=a=]]", "/[a[b]", `/[\d-z]`, `/[a-\d]`, "/[[:alpha:]-z]", "/[[:foo:]]", "/[", "/[]", "/[^]", "/[z-a]", "/[a-z-0]", "/[a--]", "/[:alpha:]", "/[.a.]", "/[=a=]", "/[::]", "/[..]", "/[:a:]x]", `/[:\]:]`,
		// quantified assertions
		"/$*", "/a$?", "/${1}", "/^+", "/x$*",
		// alternation, nesting, groups
		"/a|/b", "/a|b", "/(a)|(b)", "/(((a*)*)*)*", "/(((a+)?)*){2}", nine+"(a)",
		// what Go refuses
		"/a**", "/a*+", "/a{2}+", "/(", "/)", "/(*ACCEPT)", "/(a))(", "/(a|*)",
	)...)
	checkValues(t, ParseRegex, cases)
}

func TestRegexGroups(t *testing.T) {
	for in, want := range map[string]int{"/": 0, "/(a)(b)": 2, "/((a)|b)": 2, `/\(a\)`: 0, "/[(]": 0, "/(": 0} {
		if got := RegexGroups(in); got != want {
			t.Errorf("RegexGroups(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestParseRegexProperty checks every short regex over an alphabet of
// troublesome bytes, and random longer ones: whatever ParseRegex accepts
// compiles in Go and holds none of "';#%, blanks or control bytes.
func TestParseRegexProperty(t *testing.T) {
	const alphabet = "a/.(){}[]|*+?\\d-^$,1:\"';#% \n"
	var walk func(prefix string, n int)
	count := 0
	walk = func(prefix string, n int) {
		if out, err := ParseRegex(prefix); err == nil {
			count++
			if why := unsafeOutput("ParseRegex", out); why != "" {
				t.Fatalf("ParseRegex accepted %q, which %s", prefix, why)
			}
		}
		if n == 0 {
			return
		}
		for i := 0; i < len(alphabet); i++ {
			walk(prefix+alphabet[i:i+1], n-1)
		}
	}
	depth := 4
	if testing.Short() {
		depth = 3
	}
	walk("/", depth)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := []byte{'/'}
		for range 1 + rng.IntN(30) {
			b = append(b, alphabet[rng.IntN(len(alphabet))])
		}
		if out, err := ParseRegex(string(b)); err == nil {
			count++
			if why := unsafeOutput("ParseRegex", out); why != "" {
				t.Fatalf("ParseRegex accepted %q, which %s", b, why)
			}
		}
	}
	if count == 0 {
		t.Fatal("ParseRegex accepted nothing")
	}
}

func TestParseRewriteTarget(t *testing.T) {
	for _, tc := range []struct {
		groups int
		cases  []valueCase[string]
	}{
		{0, append(accepted("/", "/api", "/x?", "/x?a=b&c=d/e", "/a:b@c!*()+,=~_.-", "/a.b/c..d/.e", long("/", maxRewriteLen)),
			refused[string]("/$1", "/x?a=$1", long("/", maxRewriteLen+1))...)},
		{2, append(accepted("/$1", "/api/$1", "/$1/$2", "/$2", "/x?a=b&c=$2", "/$12", "/$1$2", "/v$1.json"),
			refused[string](
				"", "api", "$1", "http://a.example/$1", "https://a.example", "//evil.example/$1", "/a//b", "/./a", "/a/..", "/a/../b",
				"/$", "/$0", "/$3", "/$9", "/$x", "/$host", "/${1}", "/$$1", "/a$", "/a?q=$host", "/a?q=$",
				"/a?b?c", "/a b", "/a\tb", "/a\"", "/a'", "/a;", "/a{", "/a}", "/a#", "/a%20", "/a\\", "/a\n", "/a?q=\n",
				"/a\x00", "/\u0430", "/a<b>", "/a[1]", "/a`", "/a|b", "/a^", long("/", maxRewriteLen+1),
			)...)},
		{9, accepted("/$9")},
		{15, accepted("/$9", "/$10")}, // more than 9 groups count as 9; "$10" is $1 followed by "0"
		{-1, refused[string]("/$1")},
	} {
		t.Run(strconv.Itoa(tc.groups), func(t *testing.T) {
			checkValues(t, func(s string) (string, error) { return ParseRewriteTarget(s, tc.groups) }, tc.cases)
		})
	}
}

func TestParseRedirectURL(t *testing.T) {
	path := long("https://a.example/", maxURLLen)
	cases := accepted(
		"https://example.com", "http://example.com/", "https://a.example/x/y.html", "http://a.example:8080/x",
		"https://a.example/p%20q?x=%2F&y=a/b?c", "https://a.example/a:b@c!*()+,=~_.-", "https://1.2.3.4/",
		"https://[2001:db8::1]:8443/x", "https://a.example?x=1", "https://localhost:65535/", path,
	)
	cases = append(cases, []valueCase[string]{
		{in: "HTTPS://Example.COM/Path?Q=1", want: "https://example.com/Path?Q=1"},
		{in: "https://[2001:DB8:0::1]/", want: "https://[2001:db8::1]/"},
		{in: "http://a.example:080/x", want: "http://a.example:80/x"},
		{in: "https://a.example/?", want: "https://a.example/"},
		{in: "https://a.example:/x", want: "https://a.example/x"},
		{in: "http://A?@", want: "http://a?@"}, // fuzz: "@" in the query is no user information
	}...)
	cases = append(cases, refused[string](
		"", "a.example", "/path", "a.example/path", "ftp://a.example/", "javascript://a.example/%0aalert(1)",
		"https://", "https:///x", "https:a.example", "https:/a.example", path+"a",
		"https://a.example/$x", "https://a.example/?q=$1", "https://a.example/#x", "https://a.example/?q#x",
		"https://u@a.example/", "https://u:p@a.example/", "https://a.example@evil.example/",
		"https://a.example/ x", "https://a.example/\"", "https://a.example/'", "https://a.example/;", "https://a.example/{",
		"https://a.example/}", "https://a.example/\\", "https://a.example/<", "https://a.example/|", "https://a.example/^",
		"https://a.example/%zz", "https://a.example/%2", "https://a.example/?q=%zz", "https://a.example/?q=%2",
		"https://a.example/[x]", "https://a.example/?q=[x]",
		"https://a.example:0/", "https://a.example:65536/", "https://a.example:1x/", "https://a.example:123456/",
		"https://a_b.example/", "https://a.example./", "https://0x7f.1/", "https://127.1/", "https://1.2.3.256/",
		"https://[::1%25eth0]/", "https://[1.2.3.4]/", "https://[fe80::1]x/", "https://a%41.example/",
		"https://*.example/", "https://\u0430.example/", "https://a.example/\u202e", "https://a.example/\n",
		"https://a.example\r\n/", "https://a.example/\x00",
	)...)
	checkValues(t, ParseRedirectURL, cases)
}

func TestParseMirrorURL(t *testing.T) {
	cases := accepted(
		"https://mirror.example.com$request_uri", "https://m.example:8443/prefix$request_uri",
		"http://10.0.0.1$request_uri", "https://m.example/x", "https://m.example",
		long("https://m.example/", maxURLLen-len(requestURI))+requestURI,
	)
	cases = append(cases, valueCase[string]{in: "HTTPS://M.Example$request_uri", want: "https://m.example$request_uri"})
	cases = append(cases, refused[string](
		"$request_uri", "https://$request_uri", "https://m.example/$request_uri", "https://m.example?x=1$request_uri",
		"https://m.example?$request_uri", "https://m.example#$request_uri", "https://m.example$request_uri/x",
		"https://m.example$request_uri?x", "https://m.example$host", "https://m.example$request_uri$request_uri",
		"https://m.example$REQUEST_URI", "https://m.example${request_uri}", "https://m.example/x$args",
		"https://m.example$request_urix", "https://u@m.example$request_uri", "/x$request_uri",
		long("https://m.example/", maxURLLen-len(requestURI)+1)+requestURI,
	)...)
	checkValues(t, ParseMirrorURL, cases)
}

func TestParseCORSOrigin(t *testing.T) {
	cases := accepted(
		"*", "https://a.example", "http://localhost:3000", "https://*.example.com", "https://a.example:8443",
		"http://a.example:443", "https://a.example:65535", "http://127.0.0.1:8080", "https://a-b.c-d.example",
	)
	cases = append(cases, []valueCase[string]{
		{in: "HTTPS://A.Example", want: "https://a.example"},
		{in: "https://a.example:443", want: "https://a.example"},
		{in: "http://a.example:80", want: "http://a.example"},
		{in: "HTTPS://*.EXAMPLE.COM", want: "https://*.example.com"},
	}...)
	cases = append(cases, refused[string](
		"", "**", "a.example", "//a.example", "https://a.example/", "https://a.example/path", "ftp://a.example", "null",
		"https://", "https://*", "https://*.", "https://a.*.example", "https://*a.example", "https://*.*.example",
		"https://a.example:0", "https://a.example:65536", "https://a.example:080", "https://a.example:-1",
		"https://a.example:", "https://a.example:1:2", "https://[::1]", "https://a_b.example", "https://0x7f.1",
		"https://127.1", "https://a.example.", "https://user@a.example", "https://\u212aelvin.example",
		"https://a.example ", " https://a.example", "https://a.example,https://b.example",
		"https://"+long("a", 254), long("https://", maxOriginLen+1),
	)...)
	checkValues(t, ParseCORSOrigin, cases)
}

func TestParseCORSOrigins(t *testing.T) {
	var many []string
	for i := range maxOrigins + 1 {
		many = append(many, fmt.Sprintf("https://a%d.example", i))
	}
	cases := []valueCase[[]string]{
		{in: "*", want: []string{"*"}},
		{in: "https://a.example", want: []string{"https://a.example"}},
		{in: "https://a.example, https://b.example", want: []string{"https://a.example", "https://b.example"}},
		{in: " https://b.example ,\thttps://a.example ", want: []string{"https://b.example", "https://a.example"}},
		{in: "https://a.example,HTTPS://A.example,https://a.example:443", want: []string{"https://a.example"}},
		{in: strings.Join(many[:maxOrigins], ","), want: many[:maxOrigins]},
	}
	cases = append(cases, refused[[]string](
		"", " ", ",", "https://a.example,", ",https://a.example", "https://a.example,,https://b.example",
		"*, https://a.example", "https://a.example,*", "https://a.example https://b.example",
		"https://a.example;https://b.example", "https://a.example,ftp://b.example",
		strings.Join(many, ","), strings.Repeat("*,", maxOrigins)+"*",
	)...)
	checkValues(t, ParseCORSOrigins, cases)
}

func TestParseTokenList(t *testing.T) {
	methods := map[string]bool{"GET": true, "POST": true, "PUT": true, "DELETE": true, "OPTIONS": true, "TRACE": false}
	protocols := map[string]bool{"TLSv1.2": true, "TLSv1.3": true}
	parse := func(allowed map[string]bool, max int) func(string) ([]string, error) {
		return func(s string) ([]string, error) { return ParseTokenList(s, allowed, max) }
	}
	checkValues(t, parse(methods, 3), append([]valueCase[[]string]{
		{in: "GET", want: []string{"GET"}},
		{in: "get, post", want: []string{"GET", "POST"}},
		{in: "POST GET", want: []string{"POST", "GET"}},
		{in: "  GET \t", want: []string{"GET"}},
		{in: "GET,POST PUT", want: []string{"GET", "POST", "PUT"}},
		{in: "GET, get,Get", want: []string{"GET"}},
	}, refused[[]string](
		"", " ", ",", "GET,", ",GET", "GET,,POST", "GET, ,POST", "FOO", "TRACE", "GET;", "GET\nPOST", "GET\x00",
		"G\u212aT", "\u0430GET", "GET,POST,PUT,DELETE", "GET GET GET GET", `GET"`, "$request_method",
	)...))
	checkValues(t, parse(protocols, 2), append([]valueCase[[]string]{
		{in: "TLSv1.2 TLSv1.3", want: []string{"TLSv1.2", "TLSv1.3"}},
		{in: "tlsv1.3", want: []string{"TLSv1.3"}},
	}, refused[[]string]("TLSv1.1", "TLSv1.2 TLSv1.3 TLSv1.2", "SSLv3")...))
	checkValues(t, parse(methods, 0), refused[[]string]("GET"))
}

func TestParseHeaderNameList(t *testing.T) {
	parse := func(s string) ([]string, error) { return ParseHeaderNameList(s, 3) }
	checkValues(t, parse, append([]valueCase[[]string]{
		{in: "*", want: []string{"*"}},
		{in: " * ", want: []string{"*"}},
		{in: "X-A", want: []string{"X-A"}},
		{in: "X-A, X-B,x_c", want: []string{"X-A", "X-B", "x_c"}},
		{in: "X-A,x-a", want: []string{"X-A"}},
	}, refused[[]string](
		"", " ", ",", "X-A,", "X-A,,X-B", "*, X-A", "X-A,*", "**", "X-A X-B", "$x", "X-A;X-B", "X-A,X-B,X-C,X-D",
		"X-\u00dc", "X-A\n",
	)...))
}

func TestParseStatusCodes(t *testing.T) {
	var fifty []string
	var fiftyInts []int
	for c := 400; c < 400+maxStatusCodes; c++ {
		fifty = append(fifty, strconv.Itoa(c))
		fiftyInts = append(fiftyInts, c)
	}
	checkValues(t, ParseStatusCodes, append([]valueCase[[]int]{
		{in: "404", want: []int{404}},
		{in: "503, 404,404", want: []int{404, 503}},
		{in: "599,400", want: []int{400, 599}},
		{in: strings.Join(fifty, ","), want: fiftyInts},
	}, refused[[]int](
		"", " ", ",", "399", "600", "200", "4040", "0404", "+404", "-404", "404,", ",404", " ,404", "40a", "4 04",
		"404;", "404 503", "\uff14\uff10\uff14", strings.Join(fifty, ",")+",450",
	)...))
}

func TestParseServerCiphers(t *testing.T) {
	cases := accepted("HIGH:!aNULL:!MD5", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE+AESGCM:@SECLEVEL=1", "+RSA:-DHE:@STRENGTH", long("A", maxCipherListLen))
	cases = append(cases, refused[string]("", "..", "HIGH::MEDIUM", "HIGH:", "!", "@SECLEVEL=9", "@FOO", "HIGH+", "+", "HIGH MEDIUM", "HIGH;",
		`HIGH"`, long("A", maxCipherListLen+1), "HIGH\n", "-.x")...)
	checkValues(t, ParseServerCiphers, cases)
}

func TestParseCipherList(t *testing.T) {
	cases := accepted("HIGH:!aNULL:!MD5", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE+AESGCM:@SECLEVEL=1", "a.b_c", long("A", maxCipherListLen))
	cases = append(cases, refused[string](
		"", long("A", maxCipherListLen+1), "HIGH !aNULL", "HIGH;", "HIGH\"", "HIGH'", "$x", "a#", "a{", "a\\", "a\n",
		"a\x00", "a%", "a,b", "a/b", "\u0430",
	)...)
	checkValues(t, ParseCipherList, cases)
}

func TestParseBool(t *testing.T) {
	var cases []valueCase[bool]
	for _, in := range []string{"true", "TRUE", "True", "tRuE", "1", "t", "T"} {
		cases = append(cases, valueCase[bool]{in: in, want: true})
	}
	for _, in := range []string{"false", "FALSE", "False", "fAlSe", "0", "f", "F"} {
		cases = append(cases, valueCase[bool]{in: in, want: false})
	}
	cases = append(cases, refused[bool]("", "yes", "no", "on", "off", "2", "-1", " true", "true ", "truee", "tru\u212a", "\u0442rue")...)
	checkValues(t, ParseBool, cases)
}
