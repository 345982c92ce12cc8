package controller

import (
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/metrics"
	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/source"
)

// testOptions are the Options of a controller over src that applies
// nothing, renders into a new state directory and serves class causeway.
func testOptions(t *testing.T, src source.Source) Options {
	t.Helper()
	dir := layout.Dir(t.TempDir())
	if err := os.MkdirAll(dir.Path(layout.RunDir), 0o700); err != nil {
		t.Fatal(err)
	}
	return Options{Source: src, Applier: nopApplier{},
		Model: build.Options{Class: class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "causeway"}},
		Log:   slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: metrics.New(),
		Render: render.Params{StateDir: dir, HTTPPort: 80, HTTPSPort: 443}}
}
