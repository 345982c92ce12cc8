// Command tunnel benchmarks Causeway's tunnel against direct loopback
// connections and prints a table. It is a benchmark, not a test: it
// asserts nothing. Everything runs on 127.0.0.1, every loop is bounded.
//
//	go run ./bench/tunnel            # all sections
//	go run ./bench/tunnel -conns 200 # smaller memory section
//
// Throughput, latency and compression use an in-process server and agent
// (the same code paths as the binary); the memory section runs the real
// binary as two processes and reads their resident memory.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/causeway/causeway/internal/tunnel/agent"
	"github.com/causeway/causeway/internal/tunnel/metrics"
	"github.com/causeway/causeway/internal/tunnel/server"
	"github.com/causeway/causeway/internal/tunnel/tunneltest"
	"github.com/causeway/causeway/internal/tunnel/wire"
)

func main() {
	bulkMB := flag.Int("bulk-mb", 512, "MiB moved by the bulk stream")
	rtts := flag.Int("rtts", 4000, "round trips per connection in the latency section")
	rttConns := flag.Int("rtt-conns", 4, "concurrent connections in the latency section")
	conns := flag.Int("conns", 1000, "concurrent tunneled connections in the memory section")
	logMB := flag.Int("log-mb", 10, "MiB of log-like text in the compression section")
	bin := flag.String("causeway", "", "causeway binary for the memory section (default: go build)")
	anp := flag.String("anp", ".cache/anp", "directory of apiserver-network-proxy's proxy-server and proxy-agent (bench/tunnel/build-anp.sh) for the side-by-side section; without them Causeway is measured alone")
	compression := flag.String("causeway-compression", "", "the Causeway server's --compression in the side-by-side section (default: the binary's default)")
	repeat := flag.Int("repeat", 3, "turns of the side-by-side bulk and round-trip measurements (their medians are printed)")
	profileDir := flag.String("profile", "", "directory for CPU profiles of the in-process bulk and round-trip measurements (server, agent and the bench's own ends in one process), one per compression")
	only := flag.Bool("side-by-side", false, "run the side-by-side section only")
	ingressOnly := flag.Bool("ingress", false, "run the Ingress → tunnel → edge Pod section only (needs root: network namespaces)")
	ingressTurns := flag.Int("ingress-turns", 3, "alternating turns of the Ingress section")
	ingressDuration := flag.Duration("ingress-duration", 5*time.Second, "length of each wrk run in the Ingress section")
	ingressConns := flag.Int("ingress-conns", 16, "wrk connections in the Ingress section")
	ingressBody := flag.Int("ingress-body", 1024, "bytes of each answer in the Ingress section")
	muxOnly := flag.Bool("mux", false, "run only the multiplexer comparison: one TLS connection bare, with yamux, with HTTP/2")
	flag.Parse()
	if *muxOnly {
		chunk := make([]byte, 1<<20)
		rand.NewChaCha8([32]byte{1}).Read(chunk)
		if err := muxSection(*bulkMB, *rtts, chunk); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	ing := ingressConfig{bin: *bin, turns: *ingressTurns, duration: *ingressDuration, conns: *ingressConns, body: *ingressBody}
	if *ingressOnly {
		if err := ingressSection(ing); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if _, err := os.Stat(filepath.Join(*anp, "proxy-server")); err != nil {
		fmt.Fprintf(os.Stderr, "bench: no ANP in %s (sh bench/tunnel/build-anp.sh): Causeway alone\n", *anp)
		*anp = ""
	}
	random := make([]byte, 1<<20)
	rand.NewChaCha8([32]byte{1}).Read(random)
	if err := sideBySide(*bin, *anp, *compression, *repeat, *bulkMB, *rtts, *rttConns, *conns, random); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if *only {
		return
	}
	if err := run(*bulkMB, *rtts, *rttConns, *conns, *logMB, *bin, *profileDir); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if err := ingressSection(ing); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(bulkMB, rtts, rttConns, conns, logMB int, bin, profileDir string) error {
	env, err := startEnv()
	if err != nil {
		return err
	}
	defer env.stop()
	fmt.Printf("Causeway tunnel vs direct loopback (%s)\n\n", time.Now().Format(time.DateOnly))

	fmt.Println("| Bulk stream (one connection) | MiB | seconds | MiB/s |")
	fmt.Println("|---|---:|---:|---:|")
	random := make([]byte, 1<<20)
	rand.NewChaCha8([32]byte{1}).Read(random)
	bulk := func(name string, dial func(string) (net.Conn, error)) error {
		r, err := bulkRate(dial, random, bulkMB)
		if err != nil {
			return err
		}
		fmt.Printf("| %s | %d | %.2f | %.0f |\n", name, bulkMB, float64(bulkMB)/r, r)
		return nil
	}
	if err := bulk("direct", direct); err != nil {
		return err
	}
	for _, m := range wire.AllCompressions {
		stop, err := cpuProfile(profileDir, "bulk-"+string(m))
		if err != nil {
			return err
		}
		err = bulk("tunnel, "+string(m)+" (incompressible data)", env.dialer(m))
		stop()
		if err != nil {
			return err
		}
	}

	fmt.Printf("\n| Request/response, 64 B, %d conns × %d | req/s | p50 | p99 | added p50 | added p99 |\n", rttConns, rtts)
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	echoLn, _ := net.Listen("tcp", "127.0.0.1:0")
	defer tunneltest.EchoServer(echoLn)()
	base, err := latency(direct, echoLn.Addr().String(), rttConns, rtts)
	if err != nil {
		return err
	}
	base.print("direct", base)
	for _, m := range wire.AllCompressions {
		stop, err := cpuProfile(profileDir, "rtt-"+string(m))
		if err != nil {
			return err
		}
		r, err := latency(env.dialer(m), echoLn.Addr().String(), rttConns, rtts)
		stop()
		if err != nil {
			return err
		}
		r.print("tunnel, "+string(m), base)
	}

	fmt.Printf("\n| Compression, %d MiB log-like text | bytes on the wire | wire/raw | fewer bytes |\n", logMB)
	fmt.Println("|---|---:|---:|---:|")
	logs := tunneltest.LogLines(logMB << 20)
	logLn, _ := net.Listen("tcp", "127.0.0.1:0")
	defer tunneltest.SinkSource(logLn, logs)()
	for _, m := range wire.AllCompressions {
		before := env.wireIn()
		c, err := env.dialer(m)(logLn.Addr().String())
		if err != nil {
			return err
		}
		n, _ := io.Copy(io.Discard, c)
		c.Close()
		w := env.wireIn() - before
		fmt.Printf("| %s | %.0f | %.3f | %.1f%% |\n", m, w, w/float64(n), 100*(1-w/float64(n)))
	}

	fmt.Println()
	return memory(bin, conns)
}

func direct(addr string) (net.Conn, error) { return net.Dial("tcp", addr) }

// cpuProfile starts a CPU profile into dir/name.pprof; without dir it does
// nothing.
func cpuProfile(dir, name string) (stop func(), err error) {
	if dir == "" {
		return func() {}, nil
	}
	f, err := os.Create(filepath.Join(dir, name+".pprof"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// bulkRate moves mb MiB of chunk (1 MiB) from a loopback source to a
// reader through dial, and gives MiB/s.
func bulkRate(dial func(string) (net.Conn, error), chunk []byte, mb int) (float64, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		for i := 0; i < mb; i++ {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	}()
	start := time.Now()
	c, err := dial(ln.Addr().String())
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(io.Discard, c)
	c.Close()
	if err != nil {
		return 0, err
	}
	if n != int64(mb)<<20 {
		return 0, fmt.Errorf("moved %d bytes of %d", n, int64(mb)<<20)
	}
	return float64(n) / (1 << 20) / time.Since(start).Seconds(), nil
}

type latencyResult struct {
	rps      float64
	p50, p99 time.Duration
}

func (r latencyResult) print(name string, base latencyResult) {
	fmt.Printf("| %s | %.0f | %s | %s | %s | %s |\n", name, r.rps, r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond),
		(r.p50 - base.p50).Round(time.Microsecond), (r.p99 - base.p99).Round(time.Microsecond))
}

func latency(dial func(string) (net.Conn, error), addr string, conns, n int) (latencyResult, error) {
	var mu sync.Mutex
	var all []time.Duration
	var wg sync.WaitGroup
	errc := make(chan error, conns)
	msg := make([]byte, 64)
	start := time.Now()
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dial(addr)
			if err != nil {
				errc <- err
				return
			}
			defer c.Close()
			buf := make([]byte, 64)
			local := make([]time.Duration, 0, n)
			for j := 0; j < n; j++ {
				t0 := time.Now()
				if _, err := c.Write(msg); err != nil {
					errc <- err
					return
				}
				if _, err := io.ReadFull(c, buf); err != nil {
					errc <- err
					return
				}
				local = append(local, time.Since(t0))
			}
			mu.Lock()
			all = append(all, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	select {
	case err := <-errc:
		return latencyResult{}, err
	default:
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	return latencyResult{rps: float64(len(all)) / elapsed.Seconds(), p50: all[len(all)/2], p99: all[len(all)*99/100]}, nil
}

// env is an in-process server and agent on loopback.
type env struct {
	srv    *server.Server
	reg    *prometheus.Registry
	uds    string
	dir    string
	cancel context.CancelFunc
}

func startEnv() (*env, error) {
	p, err := tunneltest.NewPKI()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "cwbench")
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	log := slog.New(slog.DiscardHandler)
	// The bench measures the transport: agents are trusted by certificate
	// name alone, as before the secure default.
	srv, err := server.New(server.Config{ServerID: "bench", ServerCount: 1, Logger: log, Metrics: metrics.New(reg, "server"), Authorizer: server.CertNodeAuthorizer{},
		TLS: &tls.Config{Certificates: []tls.Certificate{p.Server.TLS}, ClientCAs: p.AgentCA.Pool(), ClientAuth: tls.RequireAndVerifyClientCert}})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &env{srv: srv, reg: reg, uds: filepath.Join(dir, "c.sock"), dir: dir, cancel: cancel}
	aln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	uln, err := net.Listen("unix", e.uds)
	if err != nil {
		return nil, err
	}
	go srv.ServeAgents(ctx, aln)
	go server.ServeConnect(ctx, uln, &server.ConnectFrontend{Server: srv, Name: "connect-uds", Compression: wire.CompressionZstd})
	leaf, err := p.AgentCert("bench-edge")
	if err != nil {
		return nil, err
	}
	a, err := agent.New(agent.Config{ServerAddress: aln.Addr().String(), NodeName: "bench-edge", Logger: log,
		NodeIPs: []netip.Addr{netip.MustParseAddr("127.0.0.1")},
		TLS:     &tls.Config{Certificates: []tls.Certificate{leaf.TLS}, RootCAs: p.ServerCA.Pool(), ServerName: "causeway-tunnel"}})
	if err != nil {
		return nil, err
	}
	go a.Run(ctx)
	for i := 0; i < 500 && !a.Ready(); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if !a.Ready() {
		return nil, fmt.Errorf("agent did not connect")
	}
	return e, nil
}

func (e *env) stop() {
	e.cancel()
	os.RemoveAll(e.dir)
}

func (e *env) dialer(m wire.Compression) func(string) (net.Conn, error) {
	return func(addr string) (net.Conn, error) {
		c, err := net.Dial("unix", e.uds)
		if err != nil {
			return nil, err
		}
		tc, err := tunneltest.Connect(c, addr, http.Header{server.CompressionHeader: {string(m)}})
		if err != nil {
			c.Close()
		}
		return tc, err
	}
}

func (e *env) wireIn() float64 {
	mfs, _ := e.reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() != "causeway_tunnel_server_bytes_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			if l["direction"] == "in" && l["stage"] == "wire" {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
