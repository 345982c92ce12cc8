package configmap

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/model"
)

// TestKeysMatchParsers keeps the table and configKeys consistent: a key
// is marked parsed exactly when it has a parser.
func TestKeysMatchParsers(t *testing.T) {
	for name := range configKeys {
		k, ok := LookupKey(name)
		if !ok {
			t.Errorf("parsed key %q is not in the table", name)
			continue
		}
		if !k.Status.Parsed() {
			t.Errorf("parsed key %q is marked %q", name, k.Status)
		}
	}
	for _, k := range Keys() {
		if _, ok := configKeys[k.Name]; k.Status.Parsed() && !ok {
			t.Errorf("key %q is marked %q but has no parser", k.Name, k.Status)
		}
	}
}

// TestKeyRows guards the shape of each row, which the docs and
// `causeway migrate check` print.
func TestKeyRows(t *testing.T) {
	keys := Keys()
	if len(keys) < 200 {
		t.Errorf("the table lists %d keys; ingress-nginx has over 200", len(keys))
	}
	for i, k := range keys {
		if i > 0 && keys[i-1].Name >= k.Name {
			t.Errorf("Keys() is not sorted at %q", k.Name)
		}
		if k.Name == "" || strings.ToLower(k.Name) != k.Name || strings.ContainsAny(k.Name, " /_") {
			t.Errorf("bad key name %q", k.Name)
		}
		if (k.Status == KeyDifferent) != (k.Difference != "") {
			t.Errorf("%s: status %q with difference %q: a difference is what makes a key %q", k.Name, k.Status, k.Difference, KeyDifferent)
		}
		if k.Status.Parsed() && k.Default == "" {
			t.Errorf("%s: a parsed key documents its default", k.Name)
		}
		if !k.Status.Parsed() && k.Note == "" || k.Status == KeyCausewayOnly && k.Note == "" {
			t.Errorf("%s (%s) needs a note saying why or what to use instead", k.Name, k.Status)
		}
		if k.Security && k.Status != KeyNotYetSupported {
			t.Errorf("%s: only keys that are not supported yet are marked as security gaps", k.Name)
		}
		if k.Status == KeyCausewayOnly && k.NginxDefault != "" {
			t.Errorf("%s: a Causeway-only key has no ingress-nginx default", k.Name)
		}
	}
	// Keys users most often set, and some that look alike, spot-checked.
	for name, want := range map[string]KeyStatus{
		"proxy-body-size":           KeyDifferent,
		"ssl-redirect":              KeySupported,
		"use-forwarded-headers":     KeyDifferent,
		"allow-snippet-annotations": KeyDifferent,
		"reload-free-certificates":  KeyCausewayOnly,
		"worker-connections":        KeyCausewayOnly,
		"max-worker-connections":    KeyDifferent,
		"jaeger-endpoint":           KeyNotApplicable,
		"proxy-buffering":           KeySupported,
		"custom-http-errors":        KeyDifferent,
		"enable-modsecurity":        KeyDifferent,
	} {
		if k, ok := LookupKey(name); !ok || k.Status != want {
			t.Errorf("%s: status %q, want %q", name, k.Status, want)
		}
	}
	for _, k := range Keys() {
		if k.Security && k.Status.Parsed() {
			t.Errorf("%s: a key Causeway parses is no security gap", k.Name)
		}
	}
}

func TestParseProblems(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		want       string // "" for no Problem
	}{
		{"proxy-body-size", "8m", ""},
		{"reload-free-certificates", "false", ""},
		{"proxy-body-size", "8mb", `key "proxy-body-size": value "8mb": want a size`},
		{"hsts", "false", ""},
		{"ssl-early-data", "true", `ingress-nginx key "ssl-early-data" is not supported yet and is ignored: TLS 1.3 early data stays off`},
		{"block-referers", "~*evil\\.example", ""},
		{"block-referers", "~evil$", `key "block-referers": value "~evil$": entry "~evil$": regex must not contain '$'; every path of every Ingress and every VirtualServer route answers 503`},
		{"whitelist-source-range", "10.0.0.0/8", ""},
		{"whitelist-source-range", "10.0.0.1/8", `key "whitelist-source-range": value "10.0.0.1/8": "10.0.0.1/8" has host bits set; did you mean 10.0.0.0/8?; every path of every Ingress answers 503`},
		{"allow-snippet-annotations", "true", ""},
		{"allow-snippet-annotations", "yes", `key "allow-snippet-annotations": value "yes"`},
		{"server-snippet", "add_header X 1;", ""},
		{"location-snippet", "include /etc/passwd;", `key "location-snippet": value "include /etc/passwd;": line 1: directive "include" is not allowed`},
		{"location-snippet", "deny all;", ""},
		{"location-snippet", "satisfy any;", `key "location-snippet": value "satisfy any;": line 1: directive "satisfy" is not allowed in a location snippet; every path of every Ingress answers 503`},
		{"location-snippet", "allow 10.0.0.0/8;", `key "location-snippet": value "allow 10.0.0.0/8;": line 1: allow lines without a final "deny all" let every other client in too; end them with deny all; every path of every Ingress answers 503`},
		{"http-snippet", "map $http_user_agent $is_bot { default 0; ~*bot 1; }", ""},
		{"http-snippet", "map $http_user_agent $is_bot { hostnames; }", `key "http-snippet": value "map $http_user_agent $is_bot { hostnames; }": line 1: directive "map": line 1: "hostnames" is not supported in a map`},
		{"http-snippet", "add_header X 1;", ""},
		{"http-snippet", "limit_req_zone $binary_remote_addr zone=a:10m rate=1r/s;", `key "http-snippet": value "limit_req_zone $binary_remote_addr zone=a:10m rate=1r/s;": line 1: directive "limit_req_zone" is not allowed`},
		{"use-forwarded-header", "true", `unknown key "use-forwarded-header" is ignored`},
	} {
		t.Run(tc.key, func(t *testing.T) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress-nginx", Name: "ingress-nginx-controller"},
				Data: map[string]string{tc.key: tc.value}}
			_, problems := Parse(cm)
			switch {
			case tc.want == "" && len(problems) != 0:
				t.Fatalf("problems = %v, want none", problems)
			case tc.want == "":
			case len(problems) != 1:
				t.Fatalf("problems = %v, want one", problems)
			case problems[0].Reason != model.ReasonInvalidConfig || !strings.HasPrefix(problems[0].Message, tc.want):
				t.Fatalf("problem = %s: %q, want %s: %q...", problems[0].Reason, problems[0].Message, model.ReasonInvalidConfig, tc.want)
			case problems[0].Object.Kind != "ConfigMap" || problems[0].Object.Name != "ingress-nginx-controller":
				t.Fatalf("problem is on %v, want the ConfigMap", problems[0].Object)
			}
		})
	}
}
