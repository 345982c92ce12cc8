package spanlog

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/causeway/causeway/internal/model"
)

// nginxJSON escapes s as nginx's ngx_escape_json does for log_format
// escape=json.
func nginxJSON(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\b':
			b.WriteString(`\b`)
		case c == '\f':
			b.WriteString(`\f`)
		case c < 0x20:
			fmt.Fprintf(&b, `\u00%02X`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func lineOf(values []string) []byte {
	esc := make([]string, len(values))
	for i, v := range values {
		esc[i] = nginxJSON(v)
	}
	return []byte(strings.Join(esc, "\t"))
}

func TestParseRoundTrip(t *testing.T) {
	values := make([]string, len(Fields))
	for i := range values {
		values[i] = fmt.Sprintf("v%d", i)
	}
	values[17] = "/a\tb\"c\\d\x01e\x1f\n"
	values[18] = "Mozilla \xff\xfe caf\xc3\xa9"
	r, err := Parse(lineOf(values))
	if err != nil {
		t.Fatal(err)
	}
	if r.Key != "v0" || r.Context != "v1" || r.Incoming != "v2" || r.Host != "v14" || r.URI != "v16" {
		t.Errorf("record %+v", r)
	}
	if r.RequestURI != values[17] {
		t.Errorf("request_uri %q, want %q", r.RequestURI, values[17])
	}
	if r.UA != "Mozilla \uFFFD caf\u00e9" {
		t.Errorf("user agent %q: invalid UTF-8 must become U+FFFD", r.UA)
	}
	// Empty values (escape=json writes an unset variable as nothing).
	empty := make([]string, len(Fields))
	if r, err := Parse(lineOf(empty)); err != nil || r != (Record{}) {
		t.Errorf("empty line: %+v, %v", r, err)
	}
	for _, bad := range [][]byte{
		lineOf(values[:len(values)-1]),
		append(lineOf(values), '\t'),
		[]byte(strings.Replace(string(lineOf(values)), "v3", `\q`, 1)),
		[]byte(strings.Replace(string(lineOf(values)), "v3", `\u0041`, 1)),
		[]byte(strings.Replace(string(lineOf(values)), "v3", `\u00`, 1)),
		[]byte(strings.Replace(string(lineOf(values)), "v3", `x\`, 1)),
		[]byte("overlong line"),
	} {
		if r, err := Parse(bad); err == nil {
			t.Errorf("%q parsed as %+v", bad, r)
		}
	}
}

func TestKeys(t *testing.T) {
	l := Labels{Namespace: "shop", Ingress: "cart", Service: "cart", Port: "80", Path: "/cart", Host: "shop.example.com"}
	trusting, distrusting := Key(l, true), Key(l, false)
	if !ValidKey(trusting) || !ValidKey(distrusting) || trusting[0] != 't' || distrusting[0] != 'u' || trusting[2:] != distrusting[2:] {
		t.Errorf("keys %s %s", trusting, distrusting)
	}
	named := l
	named.Operation = model.OperationName{}
	if Key(named, true) == trusting {
		t.Error("an empty operation name and none share a key")
	}
	other := l
	other.Path = "/carts"
	if Key(other, true) == trusting {
		t.Error("two paths share a key")
	}
	shared := SharedKey(true, "s123", 2)
	if !ValidKey(shared) || !IsShared(shared) || IsShared(trusting) || shared[0] != 't' {
		t.Errorf("shared key %s", shared)
	}
	if SharedKey(true, "s123", 3) == shared || SharedKey(false, "s123", 2)[1:] != shared[1:] {
		t.Error("shared keys do not follow server and location")
	}
	for _, bad := range []string{"", "td0123", "xd0123456789abcdef", "tx0123456789abcdef", "td0123456789ABCDEF", "td0123456789abcdef0"} {
		if ValidKey(bad) {
			t.Errorf("ValidKey(%q)", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	values := make([]string, len(Fields))
	for i := range values {
		values[i] = "x"
	}
	f.Add(lineOf(values))
	f.Add([]byte(`a\tb`))
	f.Add([]byte(strings.Repeat("\t", len(Fields)-1)))
	f.Add([]byte(strings.Repeat(`\u001F\t`, len(Fields)-1)))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := Parse(line)
		if err != nil {
			return
		}
		for _, v := range []string{r.Key, r.Context, r.Incoming, r.Msec, r.RequestTime, r.Status, r.Method, r.Protocol,
			r.Scheme, r.ServerPort, r.RemoteAddr, r.RemotePort, r.UpstreamAddr, r.UpstreamStatus, r.Host, r.HTTPHost,
			r.URI, r.RequestURI, r.UA} {
			if !utf8.ValidString(v) {
				t.Fatalf("%q: field %q is not valid UTF-8", line, v)
			}
		}
		if strings.Count(string(line), "\t") != len(Fields)-1 {
			t.Fatalf("%q parsed with %d tabs", line, strings.Count(string(line), "\t"))
		}
	})
}
