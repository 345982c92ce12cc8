package main

import (
	"fmt"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// CPU pinning for (d) behind nginx backends. On a 2-CPU machine the load
// generator, the backends and the nginx under test otherwise trade CPUs
// with the scheduler's whims, and req/s swings by ±10% between runs. With
// the front nginx alone on one CPU and wrk and the backends on the other,
// the front is the bottleneck in every run and req/s measures it alone.
const (
	loadCPU  = 0 // wrk and the backend nginx
	frontCPU = 1 // the nginx under test, generated or hand-written
)

// pinning is the plan for one comparison: whether to pin, and why not.
type pinning struct {
	on  bool
	why string // when off
}

// planPinning pins behind nginx backends when the machine has at least two
// CPUs and taskset (util-linux) can start the load generator (wrk, h2load)
// on one.
func planPinning(c *config, kind string, loader string) pinning {
	switch {
	case !c.pin:
		return pinning{why: "-pin=false"}
	case kind != nginxBackends:
		return pinning{why: "the Go backends run in this process, on every CPU"}
	case runtime.NumCPU() < 2:
		return pinning{why: "one CPU"}
	case loader == "vegeta":
		return pinning{why: "vegeta runs in this process"}
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return pinning{why: "no taskset"}
	}
	return pinning{on: true}
}

// pinNginx pins an nginx master and its workers (single-threaded
// processes) to cpu.
func pinNginx(master, cpu int) error {
	pids, err := childPIDs(master)
	if err != nil {
		return err
	}
	var set unix.CPUSet
	set.Set(cpu)
	for _, pid := range append(pids, master) {
		if err := unix.SchedSetaffinity(pid, &set); err != nil {
			return fmt.Errorf("pin nginx process %d to CPU %d: %w", pid, cpu, err)
		}
	}
	return nil
}

// apply pins the nginx masters under test (and their workers) to frontCPU
// and the backend nginx, if any (backendMaster > 0), to loadCPU, when the
// plan says so.
func (pin pinning) apply(fronts []int, backendMaster int) error {
	if !pin.on {
		return nil
	}
	for _, m := range fronts {
		if err := pinNginx(m, frontCPU); err != nil {
			return err
		}
	}
	if backendMaster > 0 {
		return pinNginx(backendMaster, loadCPU)
	}
	return nil
}
