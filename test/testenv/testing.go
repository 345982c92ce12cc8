package testenv

import (
	"context"
	"errors"
	"os"
	"testing"
)

// EnvRequire is the environment variable that turns a missing binary from a
// skipped test into a failed one. CI sets it so that end-to-end tests can
// never silently stop running.
const EnvRequire = "CAUSEWAY_REQUIRE_TESTENV"

// StartForTest starts an Env for t and stops it when t ends. If a binary is
// missing it skips t, or fails it when CAUSEWAY_REQUIRE_TESTENV=1. When t
// fails, the end of the etcd and kube-apiserver logs is logged before
// cleanup.
func StartForTest(t testing.TB, opts Options) *Env {
	t.Helper()
	env, err := Start(context.Background(), opts)
	if err != nil {
		if errors.Is(err, ErrBinaryNotFound) && os.Getenv(EnvRequire) != "1" {
			t.Skipf("end-to-end test environment unavailable (set %s=1 to fail instead): %v", EnvRequire, err)
		}
		t.Fatalf("start test environment: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("test environment logs:\n%s", env.LogTails(40))
		}
		if err := env.Stop(); err != nil {
			t.Errorf("stop test environment: %v", err)
		}
	})
	return env
}
