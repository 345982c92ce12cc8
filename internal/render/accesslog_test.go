package render

import (
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/testcorpus"
)

// TestLogFormatRevalidates: the generator refuses what ParseLogFormat
// would never produce, in case a model is built some other way.
func TestLogFormatRevalidates(t *testing.T) {
	got, err := logFormat(model.MustLogFormat(model.DefaultLogFormat))
	if err != nil || got != "'"+model.DefaultLogFormat+"'" {
		t.Fatalf("default format: %q, %v", got, err)
	}
	// $request_id reads as in ingress-nginx (requestIDAlias).
	if got, err := logFormat(model.MustLogFormat("$request_id $req_id")); err != nil || got != "'$causeway_nginx_request_id $req_id'" {
		t.Fatalf("format with $request_id: %q, %v", got, err)
	}
	for _, f := range []model.LogFormat{
		nil,
		{{Variable: "http_cookie"}},
		{{Variable: "status; access_log off"}},
		{{Literal: "'; error_log /tmp/x; '"}},
		{{Literal: `\'`}},
		{{Literal: "$host"}},
		{{Literal: "a\nb"}},
		{{Literal: "caf\u00e9"}},
		{{Variable: "status"}, {Literal: "x"}}, // "$statusx"
		{{Variable: "status", Literal: "x"}},
		{{Literal: strings.Repeat("a", 4001)}},
	} {
		if got, err := logFormat(f); err == nil {
			t.Errorf("logFormat(%#v) = %s, want an error", f, got)
		}
	}
	for _, in := range testcorpus.Injection {
		if got, err := logFormat(model.LogFormat{{Literal: in}}); err == nil && strings.ContainsAny(got[1:len(got)-1], "'\\$\n\r\x00") {
			t.Errorf("logFormat(%q) = %s", in, got)
		}
	}
}

func TestQuoteLogValue(t *testing.T) {
	for in, want := range map[string]string{
		"/api":            `"/api"`,
		"/v[0-9]+/items$": `"/v[0-9]+/items${causeway_dollar}"`,
		"$":               `"${causeway_dollar}"`,
		`/a"b\c`:          `"/a\"b\\c"`,
		"":                `""`,
	} {
		if got, err := quoteLogValue(in); err != nil || got != want {
			t.Errorf("quoteLogValue(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"a\nb", "a\x00", strings.Repeat("$", 1000)} {
		if got, err := quoteLogValue(in); err == nil {
			t.Errorf("quoteLogValue(%q) = %s, want an error", in, got)
		}
	}
}
