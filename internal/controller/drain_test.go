package controller

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// After Drain, /readyz fails with the reason while /healthz still passes:
// the first step of a graceful shutdown (--shutdown-grace-period).
func TestDrainFailsReadiness(t *testing.T) {
	c := New(testOptions(t, &staticSource{snap: snapshot(1)}))
	if err := c.Sync(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	probe := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		c.HealthHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := probe("/readyz"); code != http.StatusOK {
		t.Fatalf("before Drain: /readyz %d %q", code, body)
	}
	c.Drain()
	if code, body := probe("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "shutting down") {
		t.Errorf("after Drain: /readyz %d %q, want 503 saying it is shutting down", code, body)
	}
	if code, _ := probe("/healthz"); code != http.StatusOK {
		t.Errorf("after Drain: /healthz %d, want 200", code)
	}
}
