package model

import (
	"regexp"
	"strings"
	"testing"
)

// Fuzz targets for the value parsers. Each is seeded with the injection
// corpus, the corpus placed inside otherwise valid values, and a few good
// values; each checks that what the parser accepts passes unsafeOutput
// (no quotes, line breaks, NUL, braces or "$" outside the grammar) and
// parses to itself. Run one with
//
//	go test ./internal/model -run=XXX -fuzz=FuzzParseRegex -fuzztime=20s

// seedValues adds the corpus, the corpus in the parser's templates, and
// good to f.
func seedValues(f *testing.F, parser string, good ...string) {
	for _, e := range injectionCorpus {
		f.Add(e)
		for _, tmpl := range corpusTemplates[parser] {
			f.Add(strings.Replace(tmpl, "%s", e, 1))
		}
	}
	for _, g := range good {
		f.Add(g)
	}
}

// checkFuzzOutput fails t if out, accepted by the named parser, is unsafe.
func checkFuzzOutput(t *testing.T, parser, in, out string) {
	t.Helper()
	if why := unsafeOutput(parser, out); why != "" {
		t.Fatalf("%s accepted %q as %q, which %s", parser, in, out, why)
	}
}

func FuzzParseRegex(f *testing.F) {
	seedValues(f, "ParseRegex", "/api/(.*)", "/(api|web)/(\\d+)", "/a{2,5}", "/[[:alpha:]-]+", `/\.well-known`, "/((a*)*)*")
	f.Fuzz(func(t *testing.T, s string) {
		out, err := ParseRegex(s)
		if err != nil {
			return
		}
		if out != s {
			t.Fatalf("ParseRegex(%q) = %q, want it unchanged", s, out)
		}
		checkFuzzOutput(t, "ParseRegex", s, out)
		if _, err := regexp.Compile(out); err != nil {
			t.Fatalf("ParseRegex accepted %q, which does not compile: %v", s, err)
		}
	})
}

func FuzzParseHeaderValue(f *testing.F) {
	seedValues(f, "ParseHeaderValue", "nosniff", "max-age=31536000", "a b\tc", "")
	f.Fuzz(func(t *testing.T, s string) {
		out, err := ParseHeaderValue(s)
		if err != nil {
			return
		}
		if string(out) != s {
			t.Fatalf("ParseHeaderValue(%q) = %q, want it unchanged", s, out)
		}
		checkFuzzOutput(t, "ParseHeaderValue", s, string(out))
	})
}

func FuzzParseRewriteTarget(f *testing.F) {
	for _, e := range injectionCorpus {
		f.Add(e, uint8(9))
		for _, tmpl := range corpusTemplates["ParseRewriteTarget"] {
			f.Add(strings.Replace(tmpl, "%s", e, 1), uint8(2))
		}
	}
	for _, g := range []string{"/", "/$1", "/api/$2?x=$1&y=z", "/x?", "/$12"} {
		f.Add(g, uint8(2))
	}
	f.Fuzz(func(t *testing.T, s string, g uint8) {
		groups := int(g%12) - 1 // -1 to 10
		out, err := ParseRewriteTarget(s, groups)
		if err != nil {
			return
		}
		if out != s {
			t.Fatalf("ParseRewriteTarget(%q) = %q, want it unchanged", s, out)
		}
		checkFuzzOutput(t, "ParseRewriteTarget", s, out)
		for i := strings.IndexByte(out, '$'); i >= 0; i = nextByte(out, '$', i) {
			if int(out[i+1]-'0') > groups {
				t.Fatalf("ParseRewriteTarget(%q, %d) accepted a reference to a missing group", s, groups)
			}
		}
	})
}

func FuzzParseRedirectURL(f *testing.F) {
	seedValues(f, "ParseRedirectURL", "https://example.com", "HTTP://A.Example:080/p%20q?x=%2F", "https://[2001:db8::1]:8443/x", "https://a.example/?")
	f.Fuzz(func(t *testing.T, s string) {
		out, err := ParseRedirectURL(s)
		if err != nil {
			return
		}
		checkFuzzOutput(t, "ParseRedirectURL", s, out)
	})
}

func FuzzParseMirrorURL(f *testing.F) {
	seedValues(f, "ParseMirrorURL", "https://mirror.example.com$request_uri", "https://m.example:8443/prefix$request_uri", "https://m.example/x")
	f.Fuzz(func(t *testing.T, s string) {
		out, err := ParseMirrorURL(s)
		if err != nil {
			return
		}
		checkFuzzOutput(t, "ParseMirrorURL", s, out)
		if n := strings.Count(out, "$"); n > 1 || (n == 1 && !strings.HasSuffix(out, requestURI)) {
			t.Fatalf("ParseMirrorURL accepted %q as %q, with a $ other than a final $request_uri", s, out)
		}
	})
}

func FuzzParseCORSOrigin(f *testing.F) {
	seedValues(f, "ParseCORSOrigin", "*", "https://a.example", "HTTPS://*.Example.com:443", "http://localhost:3000")
	f.Fuzz(func(t *testing.T, s string) {
		out, err := ParseCORSOrigin(s)
		if err != nil {
			return
		}
		checkFuzzOutput(t, "ParseCORSOrigin", s, out)
	})
}

func FuzzParseSize(f *testing.F) {
	seedValues(f, "", "0", "1", "1536", "512k", "1M", "999999999g", "1024k")
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d", s, n)
		}
		out := FormatSize(n)
		if !sizeSyntax.MatchString(out) {
			t.Fatalf("FormatSize(%d) = %q, outside the size syntax", n, out)
		}
		if back, err := ParseSize(out); err != nil || back != n {
			t.Fatalf("ParseSize(FormatSize(%d)) = %d, %v", n, back, err)
		}
	})
}

// FuzzParseAccessLogParams: what it accepts prints back as nginx options
// that parse to the same values.
func FuzzParseAccessLogParams(f *testing.F) {
	seedValues(f, "buffer=16k flush=5s", "buffer=1m", "gzip", "flush=1s", "buffer=16k if=$x")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseAccessLogParams(s)
		if err != nil {
			return
		}
		if p.Buffer < 0 || p.Buffer > maxLogBuffer || p.Flush < 0 || p.Flush > 0 && p.Buffer == 0 {
			t.Fatalf("ParseAccessLogParams(%q) = %+v", s, p)
		}
		out := ""
		if p.Buffer > 0 {
			out = "buffer=" + FormatSize(p.Buffer)
		}
		if p.Flush > 0 {
			out += " flush=" + FormatDuration(p.Flush)
		}
		if back, err := ParseAccessLogParams(out); err != nil || back != p {
			t.Fatalf("%q printed as %q parses to %+v, %v", s, out, back, err)
		}
	})
}

func FuzzParseServerCiphers(f *testing.F) {
	seedValues(f, "ParseServerCiphers", "HIGH:!aNULL:!MD5", "ECDHE+AESGCM:@SECLEVEL=0", "+RSA:-DHE:@STRENGTH")
	f.Fuzz(func(t *testing.T, s string) {
		out, err := ParseServerCiphers(s)
		if err != nil {
			return
		}
		if out != s {
			t.Fatalf("ParseServerCiphers(%q) = %q, want it unchanged", s, out)
		}
		checkFuzzOutput(t, "ParseServerCiphers", s, out)
		for _, item := range strings.Split(out, ":") {
			if item == "" || strings.HasSuffix(item, "+") {
				t.Fatalf("ParseServerCiphers accepted %q with an empty item or a trailing +", s)
			}
		}
	})
}
