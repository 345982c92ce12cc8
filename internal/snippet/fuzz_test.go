package snippet

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// corpus reads the seed snippets of testdata/corpus.
func corpus(t testing.TB) map[string]string {
	paths, err := filepath.Glob("testdata/corpus/*.conf")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus in testdata/corpus: %v", err)
	}
	out := map[string]string{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = string(data)
	}
	return out
}

// TestCorpus: every cve-*.conf snippet is refused in every context (each
// names something from the CVE record of ingress-nginx's snippets), and
// every other one is accepted in a location and a server.
func TestCorpus(t *testing.T) {
	for name, src := range corpus(t) {
		for _, ctx := range []Context{Location, Server, Auth, HTTP} {
			_, err := Parse(src, ctx)
			switch {
			case strings.HasPrefix(name, "cve-") && err == nil:
				t.Errorf("%s (%s): accepted", name, ctx)
			case !strings.HasPrefix(name, "cve-") && (ctx == Location || ctx == Server) && err != nil:
				t.Errorf("%s (%s): %v", name, ctx, err)
			}
		}
	}
}

// requote prints a word inside double quotes as nginx reads them back.
func requote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// FuzzTokenize: the tokenizer never panics; what it accepts holds no
// control character but newline in any word; and each word, quoted again,
// tokenizes to itself, so a word can never become two or end a directive.
func FuzzTokenize(f *testing.F) {
	for _, src := range corpus(f) {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		toks, err := Tokenize(src)
		if err != nil {
			return
		}
		for _, tok := range toks {
			if tok.Kind != Word {
				continue
			}
			for _, c := range []byte(tok.Text) {
				if c < ' ' && c != '\t' || c == 0x7f {
					t.Fatalf("%q: word %q holds a control byte", src, tok.Text)
				}
			}
			again, err := Tokenize(requote(tok.Text) + ";")
			if err != nil {
				t.Fatalf("%q: word %q quoted again: %v", src, tok.Text, err)
			}
			want := []Token{{Kind: Word, Text: tok.Text, Quoted: true, Line: 1}, {Kind: Semicolon, Line: 1}}
			if !reflect.DeepEqual(again, want) {
				t.Fatalf("%q: word %q quoted again reads %+v", src, tok.Text, again)
			}
		}
	})
}

// FuzzParse: the directive parser never panics, and every value it
// accepts is free of control characters and of "$" in literals.
func FuzzParse(f *testing.F) {
	for _, src := range corpus(f) {
		f.Add(src)
	}
	f.Add("map \"$http_user_agent:$arg_x\" $is_bot {\n  default 0;\n  \"\" 0;\n  friendly 0;\n  ~*(bot|crawl) 1;\n}\nadd_header X-Bot $is_bot;\n")
	f.Fuzz(func(t *testing.T, src string) {
		for _, ctx := range []Context{Location, Auth, HTTP} {
			s, err := Parse(src, ctx)
			if err != nil {
				continue
			}
			check := func(what, v string) {
				if strings.ContainsAny(v, "\x00\r\n\t$") {
					t.Fatalf("%q: %s %q", src, what, v)
				}
			}
			for _, h := range append(s.AddHeaders, s.ProxySetHeaders...) {
				check("header name", h.Name)
				for _, p := range h.Value {
					check("literal", p.Literal)
				}
			}
			for _, st := range s.Steps {
				if st.Set != nil {
					if err := VariableName(st.Set.Name); err != nil {
						t.Fatalf("%q: set %v", src, err)
					}
				}
			}
			if a := s.Access; a != nil {
				for _, p := range append(a.Deny, a.Allow...) {
					if !p.IsValid() || p != p.Masked() || p.Addr().Zone() != "" {
						t.Fatalf("%q: access prefix %v", src, p)
					}
				}
				if s.Serves() {
					t.Fatalf("%q: an access list beside an answer", src)
				}
			}
			for _, m := range s.Maps {
				if err := VariableName(m.Variable); err != nil {
					t.Fatalf("%q: map %v", src, err)
				}
				for _, e := range m.Entries {
					check("map key", e.Key)
					if e.Op == "" && (strings.HasPrefix(e.Key, "~") || strings.HasPrefix(e.Key, `\`) || mapWords[e.Key]) {
						t.Fatalf("%q: literal map key %q", src, e.Key)
					}
					for _, p := range e.Value {
						check("literal", p.Literal)
					}
				}
			}
		}
	})
}

// BenchmarkParse reads a typical snippet: security headers, a request
// header and a rewrite.
func BenchmarkParse(b *testing.B) {
	src := "more_set_headers \"X-Frame-Options: DENY\";\nadd_header Content-Security-Policy \"default-src 'self'\" always;\n" +
		"proxy_set_header X-Request-Start \"t=${msec}\";\nrewrite ^/old/(.*)$ /new/$1 break;\n"
	for b.Loop() {
		if _, err := Parse(src, Location); err != nil {
			b.Fatal(err)
		}
	}
}
