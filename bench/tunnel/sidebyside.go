package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/causeway/causeway/internal/tunnel/tunneltest"
)

// sideBySide measures Causeway's tunnel and ANP's, each as its own two
// processes with their defaults, in one run, and prints every target of
// issue 36 §1 next to both values and their ratio. anp is the directory
// of ANP's proxy-server and proxy-agent; "" measures Causeway alone.
func sideBySide(bin, anp, compression string, repeat, bulkMB, rtts, rttConns, conns int, chunk []byte) error {
	dir, err := os.MkdirTemp("", "cwpeers")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if bin, err = buildCauseway(bin, dir); err != nil {
		return err
	}
	type side struct {
		bulk, bulkCPU float64
		rtt           latencyResult
		mem           heldRSS
		slow          time.Duration
		slowErr       error
		measured      bool
	}
	echoLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer tunneltest.EchoServer(echoLn)()
	// Both tunnels run at once, idle but for the one measured, and each
	// measurement is repeated in turns: the machine's load drifts over a
	// run, and the medians of interleaved turns compare under the same.
	type entry struct {
		name string
		dial func(string) (net.Conn, error)
		p    *peer
		s    *side
	}
	var direct1, cw, an side
	entries := []entry{{name: "direct", dial: direct, s: &direct1}}
	type starter struct {
		name  string
		start func(dir string) (*peer, error)
		s     *side
	}
	starts := []starter{{"causeway", func(d string) (*peer, error) { return startCauseway(bin, d, compression) }, &cw}}
	if anp != "" {
		starts = append(starts, starter{"anp", func(d string) (*peer, error) { return startANP(anp, d) }, &an})
	}
	for _, st := range starts {
		sub := filepath.Join(dir, "peer-"+st.name)
		if err := os.MkdirAll(sub, 0o700); err != nil {
			return err
		}
		p, err := st.start(sub)
		if err != nil {
			return err
		}
		defer p.stop()
		entries = append(entries, entry{name: st.name, dial: p.dial, p: p, s: st.s})
	}
	bulks := make([][]float64, len(entries))
	cpus := make([][]float64, len(entries))
	rtts1 := make([][]latencyResult, len(entries))
	for r := 0; r < repeat; r++ {
		fmt.Fprintf(os.Stderr, "side by side: turn %d of %d: bulk and round trips ...\n", r+1, repeat)
		for i, e := range entries {
			var cpu0 float64
			if e.p != nil {
				cpu0 = e.p.cpuSeconds()
			}
			t0 := time.Now()
			v, err := bulkRate(e.dial, chunk, bulkMB)
			if err != nil {
				return fmt.Errorf("%s bulk: %w", e.name, err)
			}
			bulks[i] = append(bulks[i], v)
			if e.p != nil {
				cpus[i] = append(cpus[i], (e.p.cpuSeconds()-cpu0)/time.Since(t0).Seconds())
			}
			l, err := latency(e.dial, echoLn.Addr().String(), rttConns, rtts)
			if err != nil {
				return fmt.Errorf("%s round trips: %w", e.name, err)
			}
			rtts1[i] = append(rtts1[i], l)
		}
	}
	for i, e := range entries {
		e.s.bulk = median(bulks[i])
		if len(cpus[i]) > 0 {
			e.s.bulkCPU = median(cpus[i])
		}
		sort.Slice(rtts1[i], func(a, b int) bool { return rtts1[i][a].rps < rtts1[i][b].rps })
		e.s.rtt = rtts1[i][len(rtts1[i])/2]
		e.s.measured = true
	}
	for _, e := range entries[1:] {
		fmt.Fprintf(os.Stderr, "side by side: %s: memory, then the slow reader ...\n", e.name)
		if e.s.mem, err = heldMemory(e.p, conns); err != nil {
			return err
		}
		// Last: a tunnel whose connections share one stream may stay
		// stalled after it.
		e.s.slow, e.s.slowErr = slowReader(e.p, 10*time.Second)
	}
	fmt.Printf("Side by side, each tunnel as a server and an agent process with mutual TLS, HTTP CONNECT on a unix socket, defaults otherwise; bulk and round trips the median of %d interleaved turns (%s)\n\n", repeat, time.Now().Format(time.DateOnly))
	fmt.Println("| measurement | direct | Causeway | ANP | Causeway / ANP | Causeway / direct | target |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---|")
	ratio := func(a, b float64) string {
		if b == 0 || a == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f×", a/b)
	}
	val := func(s side, f func(side) string) string {
		if !s.measured {
			return "-"
		}
		return f(s)
	}
	mib := func(v float64) string { return fmt.Sprintf("%.0f MiB/s", v) }
	fmt.Printf("| bulk, one connection, %d MiB of random data | %s | %s | %s | %s | %s | ≥ 3× ANP, ≥ 0.5× direct |\n", bulkMB,
		mib(direct1.bulk), mib(cw.bulk), val(an, func(s side) string { return mib(s.bulk) }), ratio(cw.bulk, an.bulk), ratio(cw.bulk, direct1.bulk))
	fmt.Printf("| of which both processes' CPU | | %.2f cores | %s | | | |\n", cw.bulkCPU, val(an, func(s side) string { return fmt.Sprintf("%.2f cores", s.bulkCPU) }))
	rps := func(l latencyResult) string { return fmt.Sprintf("%.0f/s", l.rps) }
	fmt.Printf("| 64-byte round trips, %d connections × %d | %s | %s | %s | %s | %s | ≥ 2× ANP |\n", rttConns, rtts,
		rps(direct1.rtt), rps(cw.rtt), val(an, func(s side) string { return rps(s.rtt) }), ratio(cw.rtt.rps, an.rtt.rps), ratio(cw.rtt.rps, direct1.rtt.rps))
	us := func(d time.Duration) string { return d.Round(time.Microsecond).String() }
	fmt.Printf("| round trip p50 / p99 | %s / %s | %s / %s | %s | | | p99 ≤ 0.5 ms |\n", us(direct1.rtt.p50), us(direct1.rtt.p99),
		us(cw.rtt.p50), us(cw.rtt.p99), val(an, func(s side) string { return us(s.rtt.p50) + " / " + us(s.rtt.p99) }))
	size := func(v int64) string { return fmt.Sprintf("%.1f MiB", float64(v)/(1<<20)) }
	fmt.Printf("| server RSS, %d open connections (idle) | | %s (%s) | %s | %s | | ≤ 100 MB |\n", conns, size(cw.mem.server1), size(cw.mem.server0),
		val(an, func(s side) string { return size(s.mem.server1) + " (" + size(s.mem.server0) + ")" }), ratio(float64(cw.mem.server1), float64(an.mem.server1)))
	fmt.Printf("| agent RSS, %d open connections (idle) | | %s (%s) | %s | %s | | ≤ 100 MB |\n", conns, size(cw.mem.agent1), size(cw.mem.agent0),
		val(an, func(s side) string { return size(s.mem.agent1) + " (" + size(s.mem.agent0) + ")" }), ratio(float64(cw.mem.agent1), float64(an.mem.agent1)))
	slow := func(s side) string {
		if s.slowErr != nil {
			return "fails: " + strings.ReplaceAll(s.slowErr.Error(), "\n", "; ")
		}
		return "1 MiB echoed in " + s.slow.Round(time.Millisecond).String()
	}
	fmt.Printf("| beside one connection whose reader stopped: a second connection | | %s | %s | | | unaffected |\n\n",
		slow(cw), val(an, slow))
	return nil
}

// median of v, which it sorts.
func median(v []float64) float64 {
	sort.Float64s(v)
	return v[len(v)/2]
}
