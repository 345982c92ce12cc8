package main

import (
	"log/slog"
	"testing"

	"github.com/spf13/pflag"

	"github.com/causeway/causeway/internal/metrics"
)

// TestMetricsLogRotateSize: the rotation size must be a positive number of
// bytes; anything else stops the controller at start.
func TestMetricsLogRotateSize(t *testing.T) {
	for _, tc := range []struct {
		arg string
		ok  bool
	}{{"", true}, {"--metrics-log-rotate-size=1", true}, {"--metrics-log-rotate-size=0", false}, {"--metrics-log-rotate-size=-5", false}} {
		var f requestMetricsFlags
		fl := pflag.NewFlagSet("t", pflag.ContinueOnError)
		f.register(fl)
		var args []string
		if tc.arg != "" {
			args = []string{tc.arg}
		}
		if err := fl.Parse(args); err != nil {
			t.Fatal(err)
		}
		_, err := f.collector(slog.New(slog.DiscardHandler), metrics.New())
		if (err == nil) != tc.ok {
			t.Errorf("%q: err = %v, want ok=%v", tc.arg, err, tc.ok)
		}
	}
}
