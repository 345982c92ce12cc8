package controller

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/metrics"
	"github.com/causeway/causeway/internal/render"
)

// After Drain, /readyz fails with the reason while /healthz still passes:
// the first step of a graceful shutdown (--shutdown-grace-period).
func TestDrainFailsReadiness(t *testing.T) {
	dir := layout.Dir(t.TempDir())
	if err := os.MkdirAll(dir.Path(layout.RunDir), 0o700); err != nil {
		t.Fatal(err)
	}
	c := New(Options{Source: &staticSource{snap: snapshot(1)}, Applier: nopApplier{},
		Model: build.Options{Class: class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "causeway"}},
		Log:   slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: metrics.New(),
		Render: render.Params{StateDir: dir, HTTPPort: 80, HTTPSPort: 443}})
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
