// Package proc reads the memory of processes from /proc, for the
// benchmarks that report a controller's and nginx's.
package proc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Memory is a process's resident memory now (VmRSS) and at its peak
// (VmHWM), in bytes.
type Memory struct{ Current, Peak int64 }

// Of reads pid's memory; zero when it cannot be read.
func Of(pid int) Memory {
	var m Memory
	kilobytes(fmt.Sprintf("/proc/%d/status", pid), func(key string, b int64) {
		switch key {
		case "VmRSS:":
			m.Current = b
		case "VmHWM:":
			m.Peak = b
		}
	})
	return m
}

// Shared is a process's resident memory (Rss) and its proportional share
// of the pages it shares (Pss), in bytes.
type Shared struct{ RSS, PSS int64 }

// SharedOf reads pid's smaps_rollup; zero when it cannot be read.
func SharedOf(pid int) Shared {
	var s Shared
	kilobytes(fmt.Sprintf("/proc/%d/smaps_rollup", pid), func(key string, b int64) {
		switch key {
		case "Rss:":
			s.RSS = b
		case "Pss:":
			s.PSS = b
		}
	})
	return s
}

// kilobytes calls each with every "Key: n kB" line of the file at path, n
// in bytes; nothing when it cannot be read.
func kilobytes(path string, each func(key string, b int64)) {
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		each(f[0], kb<<10)
	}
}

// Tree is master and its children (an nginx master and its workers, old
// and new); none for master 0.
func Tree(master int) []int {
	if master <= 0 {
		return nil
	}
	out := []int{master}
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
			out = append(out, pid)
		}
	}
	return out
}

// TreeRSS adds up the resident memory of master and its children; 0 for
// master 0.
func TreeRSS(master int) int64 {
	var total int64
	for _, pid := range Tree(master) {
		total += Of(pid).Current
	}
	return total
}

// CPU is the user and system CPU time pid (all its threads) has used so
// far, from /proc/<pid>/stat in Linux's clock ticks of 1/100 s.
func CPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("process %d: %w", pid, err)
	}
	// The command name may hold spaces; the fields after it do not. f[0]
	// is field 3 (state), so utime (14) and stime (15) are f[11], f[12].
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("process %d: short stat line", pid)
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * time.Second / 100, nil
}
