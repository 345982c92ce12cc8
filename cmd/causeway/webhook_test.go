package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestWebhookFlags(t *testing.T) {
	for _, tc := range []struct {
		name      string
		flags     webhookFlags
		manifests string
		err       string // "" for valid
	}{
		{name: "off", flags: webhookFlags{mode: "deny"}},
		{name: "generated certificate", flags: webhookFlags{address: ":8444", configuration: "causeway-admission", mode: "deny"}},
		{name: "warn mode", flags: webhookFlags{address: "127.0.0.1:8444", configuration: "c", mode: "warn"}},
		{name: "certificate files, with manifests", flags: webhookFlags{address: ":8444", certFile: "c.pem", keyFile: "k.pem", mode: "deny"}, manifests: "dir"},
		{name: "no port", flags: webhookFlags{address: "127.0.0.1", configuration: "c", mode: "deny"}, err: "HOST:PORT"},
		{name: "unknown mode", flags: webhookFlags{address: ":8444", configuration: "c", mode: "audit"}, err: "want deny or warn"},
		{name: "certificate without key", flags: webhookFlags{address: ":8444", certFile: "c.pem", mode: "deny"}, err: "go together"},
		{name: "neither certificate source", flags: webhookFlags{address: ":8444", mode: "deny"}, err: "needs --validating-webhook-configuration"},
		{name: "both certificate sources", flags: webhookFlags{address: ":8444", configuration: "c", certFile: "c.pem", keyFile: "k.pem", mode: "deny"},
			err: "yours to set"},
		{name: "a configuration without the API", flags: webhookFlags{address: ":8444", configuration: "c", mode: "deny"}, manifests: "dir",
			err: "needs the API server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.flags.validate(tc.manifests)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want one with %q", err, tc.err)
			}
		})
	}
}

// TestWebhookPaths: reviews are served at Causeway's path and at
// ingress-nginx's, so its chart's ValidatingWebhookConfiguration works.
func TestWebhookPaths(t *testing.T) {
	mux := webhookMux(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	for path, want := range map[string]int{"/validate": http.StatusTeapot, "/networking/v1/ingresses": http.StatusTeapot, "/other": http.StatusNotFound} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("POST", path, nil))
		if rec.Code != want {
			t.Errorf("POST %s: %d, want %d", path, rec.Code, want)
		}
	}
}
