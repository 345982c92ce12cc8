package proc

import (
	"os"
	"testing"
	"time"
)

// TestCPU: 300 ms of spinning are counted as about that much CPU.
func TestCPU(t *testing.T) {
	before, err := CPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); time.Since(start) < 300*time.Millisecond; {
	}
	after, err := CPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if used := after - before; used < 100*time.Millisecond || used > 2*time.Second {
		t.Errorf("300 ms of spinning counted as %v of CPU", used)
	}
	if _, err := CPU(-1); err == nil {
		t.Error("no error for a process that does not exist")
	}
}
