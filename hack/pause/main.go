// Command pause is the sandbox ("pause") container of the test cluster
// (test/cluster): every Pod's network namespace is held by one. No registry
// is reachable from the test machines, so instead of registry.k8s.io/pause
// the cluster runs this, built static and packed into a scratch image by
// hack/scratchimage.
//
// Like the upstream pause container it sleeps until SIGINT or SIGTERM and
// reaps the zombies of processes that a shared PID namespace re-parents to
// it, since it is PID 1 there.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "pause: warning: not running as PID 1")
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
