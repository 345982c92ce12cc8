// Package proc reads the memory of processes from /proc, for the
// benchmarks that report a controller's and nginx's.
package proc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Memory is a process's resident memory now (VmRSS) and at its peak
// (VmHWM), in bytes.
type Memory struct{ Current, Peak int64 }

// Of reads pid's memory; zero when it cannot be read.
func Of(pid int) Memory {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}
	}
	var m Memory
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			m.Current = kb << 10
		case "VmHWM:":
			m.Peak = kb << 10
		}
	}
	return m
}

// TreeRSS adds up the resident memory of master and its children (an
// nginx master and its workers); 0 for master 0.
func TreeRSS(master int) int64 {
	if master <= 0 {
		return 0
	}
	total := Of(master).Current
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Field 4 is the parent pid; the command may hold spaces, so count
		// from the closing parenthesis.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+2:])
		if f := strings.Fields(rest); len(f) > 1 && f[1] == strconv.Itoa(master) {
			total += Of(pid).Current
		}
	}
	return total
}
