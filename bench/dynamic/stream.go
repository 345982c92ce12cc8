package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Section (k): TCP through a TransportServer (nginx's stream module, on a
// GlobalConfiguration listener) vs a hand-written nginx stream proxy, in
// MiB/s of bulk data and in short connections per second.
const (
	streamService  = "stream"
	streamListener = "bench-tcp"
	// streamChunk is the size of each bulk write, and of each read.
	streamChunk = 64 << 10
	// shortPayload is what each short connection sends and reads back.
	shortPayload = 1 << 10
)

// streamEcho is a TCP echo backend: whatever a connection sends comes
// back on it (io.Copy, which splices socket to socket on Linux), until
// the peer closes.
type streamEcho struct {
	ip   string
	port int
}

func startStreamEcho(e *env) (*streamEcho, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(e.nextIP(backendNet), "0"))
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			go func() {
				io.Copy(c, c)
				c.Close()
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
			}()
		}
	}()
	e.onClose(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for c := range conns {
			c.Close()
		}
	})
	a := l.Addr().(*net.TCPAddr)
	return &streamEcho{ip: a.IP.String(), port: a.Port}, nil
}

func (b *streamEcho) addr() string { return net.JoinHostPort(b.ip, strconv.Itoa(b.port)) }

// streamYAML is the Service and EndpointSlice behind the TransportServer:
// port 7000 of the Service is the echo backend's port.
func streamYAML(b *streamEcho) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  ports: [{name: tcp, port: 7000, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: %[1]s-1
  namespace: %[2]s
  labels: {kubernetes.io/service-name: %[1]s}
addressType: IPv4
ports: [{name: tcp, port: %[3]d, protocol: TCP}]
endpoints:
  - addresses: [%[4]q]
    conditions: {ready: true}
---
`, streamService, ns, b.port, b.ip)
}

// streamListenersYAML is the GlobalConfiguration with the one TCP
// listener, and the TransportServer on it, at its defaults (round robin,
// max_fails 1, fail_timeout 10s, proxy_connect_timeout 60s,
// proxy_timeout 10m).
func streamListenersYAML(port int) (gc, ts string) {
	gc = fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: GlobalConfiguration
metadata: {name: listeners, namespace: causeway}
spec:
  listeners:
  - {name: %s, port: %d, protocol: TCP}
---
`, streamListener, port)
	ts = fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: TransportServer
metadata: {name: bulk, namespace: %s}
spec:
  listener: {name: %s, protocol: TCP}
  upstreams:
  - {name: app, service: %s, port: 7000}
  action: {pass: app}
---
`, ns, streamListener, streamService)
	return gc, ts
}

// handStreamConf is the baseline: one worker, the stream module, one
// upstream and one server proxying to it, nothing else.
const handStreamConf = `# Hand-written nginx stream proxy: the baseline of (k).
load_module /usr/lib/nginx/modules/ngx_stream_module.so;
daemon off;
master_process on;
worker_processes 1;
%[1]s
pid %[2]s/nginx.pid;
error_log %[2]s/error.log notice;

events {
    worker_connections 16384;
}

stream {
    upstream u {
        server %[3]s;
    }
    server {
        listen %[4]s;
        proxy_pass u;
    }
}
`

// startHandStream runs the hand-written stream proxy to backend and
// returns its address and its process.
func (e *env) startHandStream(ctx context.Context, name, backend string) (string, *process, error) {
	dir := filepath.Join(e.dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	ip := e.nextIP(listenNet)
	port, err := freePort(ip)
	if err != nil {
		return "", nil, err
	}
	addr := net.JoinHostPort(ip, strconv.Itoa(port))
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(handStreamConf, workerUser(), dir, backend, addr)), 0o644); err != nil {
		return "", nil, err
	}
	proc, err := e.runNginx(ctx, "hand-written (k)", dir, path, addr)
	if err != nil {
		return "", nil, err
	}
	return addr, proc, nil
}

// runStream starts the echo backend, a controller serving the
// TransportServer with one nginx worker and the hand-written stream
// proxy, checks that both echo, and measures bulk throughput and short
// connections in alternating rounds.
func runStream(ctx context.Context, e *env, c *config, rep *report) error {
	b, err := startStreamEcho(e)
	if err != nil {
		return err
	}
	app := configMapYAML(map[string]string{"worker-processes": "1"}) + streamYAML(b)
	gen, err := e.startControllerWith(ctx, "stream-generated", map[string]string{"app.yaml": app}, c,
		controllerOptions{args: []string{"--global-configuration", "causeway/listeners"}})
	if err != nil {
		return err
	}
	defer gen.stop()
	port, err := freePort(gen.IP)
	if err != nil {
		return err
	}
	gc, ts := streamListenersYAML(port)
	if _, err := gen.WriteManifest("gc.yaml", gc); err != nil {
		return err
	}
	if _, err := gen.WriteManifest("ts.yaml", ts); err != nil {
		return err
	}
	genAddr := net.JoinHostPort(gen.IP, strconv.Itoa(port))
	if err := waitStreamEcho(ctx, genAddr, 20*time.Second); err != nil {
		return fmt.Errorf("(k) the TransportServer's listener: %w\n%s", err, tail(gen.LogPath, 3000))
	}
	if err := checkStreamRendered(gen); err != nil {
		return err
	}
	handAddr, hand, err := e.startHandStream(ctx, "stream-handwritten", b.addr())
	if err != nil {
		return err
	}
	if err := waitStreamEcho(ctx, handAddr, 10*time.Second); err != nil {
		return fmt.Errorf("(k) hand-written: %w", err)
	}
	handMaster := hand.cmd.Process.Pid
	sides := []side{
		{name: "generated (TransportServer)", httpAddr: genAddr, master: gen.nginxPID},
		{name: "hand-written stream proxy", httpAddr: handAddr, master: func() int { return handMaster }},
	}
	// The listener came with a reload or two: wait for the old workers
	// to leave.
	for _, sd := range sides {
		deadline := time.Now().Add(15 * time.Second)
		for oneWorker(sd) != nil && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if err := oneWorker(sd); err != nil {
			return err
		}
	}
	pin := planStreamPinning(c)
	if pin.on {
		if err := pin.apply([]int{gen.nginxPID(), handMaster}, 0); err != nil {
			return err
		}
		restore, err := pinSelf(loadCPU)
		if err != nil {
			return err
		}
		defer restore()
	}

	fmt.Fprintf(os.Stderr, "(k) TCP bulk: %d connections × 64 KiB writes, %d rounds of %s per side ...\n", c.streamConns, c.rounds, c.streamDuration)
	bulk, err := abRounds(ctx, c.rounds, sides, time.Second, c.streamDuration, func(sd side, d time.Duration) (sample, error) {
		return bulkLoad(ctx, sd.httpAddr, c.streamConns, d)
	})
	if err != nil {
		return fmt.Errorf("(k) bulk: %w", err)
	}
	fmt.Fprintf(os.Stderr, "(k) TCP short connections: %d clients, %d rounds of %s per side ...\n", c.streamShortConns, c.rounds, c.streamDuration)
	short, err := abRounds(ctx, c.rounds, sides, time.Second, c.streamDuration, func(sd side, d time.Duration) (sample, error) {
		return shortLoad(ctx, sd.httpAddr, c.streamShortConns, d)
	})
	if err != nil {
		return fmt.Errorf("(k) short connections: %w", err)
	}

	const ref = 1
	t := &table{title: "(k) TCP through a TransportServer vs a hand-written nginx stream proxy: bulk data", header: []string{"config"}}
	ratios, cpuRatios := bulkTable(t, sides, bulk, ref)
	t.note("Load: %d connections, each writing 64 KiB chunks as fast as it can for %s while reading the echo back; MiB/s counts the payload echoed back to the clients (nginx carries each byte twice: to the backend and back). Each round runs both configs in turn, after a 1 s warm-up of each; \"vs\" columns are the median over rounds of the ratio within the same round.", c.streamConns, c.streamDuration)
	t.note("Backend: one Go echo server in this process (`io.Copy` of the connection onto itself, which splices on Linux).")
	t.note("Generated: a GlobalConfiguration listener and a TransportServer at its defaults (`upstream` with `max_fails=1 fail_timeout=10s max_conns=0`, `proxy_connect_timeout 60s`, `proxy_timeout 600s`), the controller flag `--global-configuration`, ConfigMap `worker-processes: \"1\"`. Hand-written: `worker_processes 1`, `stream { upstream u { server BACKEND; } server { listen ADDR; proxy_pass u; } }`. No stream access log on either side.")
	t.note("%s", streamPinNote(pin))
	t.note("nginx CPU/MiB is the worker's user+system CPU per MiB echoed (from /proc, 10 ms ticks); \"nginx worker busy\" is its CPU time over the run's.")
	t.note("%s", failureNote(bulk))
	rep.addTable(t)

	st := &table{title: "(k) TCP through a TransportServer vs a hand-written nginx stream proxy: short connections", header: []string{"config"}}
	sRatios, sCPU := compareTable(st, "conn", sides, short, ref, func(int) []string { return nil })
	st.note("Load: %d clients, each in a loop: connect, send 1 KiB, read it back, close; for %s per run. Stresses accept and upstream connect rather than the copy loop. Same configs, backend and CPUs as the bulk table.", c.streamShortConns, c.streamDuration)
	st.note("%s", failureNote(short))
	rep.addTable(st)

	rep.target("(k) TCP bulk throughput, TransportServer / hand-written nginx stream proxy (MiB/s)", "≥ 90%",
		fmt.Sprintf("%s (nginx CPU per MiB %.2f×)", pct(ratios[0]), cpuRatios[0]), pass(ratios[0] >= 0.9))
	rep.target("(k) TCP short connections/s, TransportServer / hand-written nginx stream proxy", "informational",
		fmt.Sprintf("%s (nginx CPU per connection %.2f×)", pct(sRatios[0]), sCPU[0]), nil)
	return nil
}

// bulkTable is compareTable for bulk samples, whose count is bytes:
// MiB/s and nginx CPU per MiB.
func bulkTable(t *table, sides []side, res [][]sample, ref int) (ratios, cpuRatios []float64) {
	t.header = append(t.header, "MiB/s", "vs "+sides[ref].name, "nginx CPU/MiB", "CPU vs "+sides[ref].name, "nginx worker busy", "each round (MiB/s)")
	mib := func(s sample) float64 { return s.rate() / (1 << 20) }
	// In floating point: sample.cpuPer divides durations, which would
	// round a couple of nanoseconds per byte to whole ones.
	perMiB := func(s sample) float64 {
		if s.count == 0 {
			return 0
		}
		return float64(s.cpu) / float64(s.count) * (1 << 20)
	}
	ratios = make([]float64, len(sides))
	cpuRatios = make([]float64, len(sides))
	for i, sd := range sides {
		var rates, busy, cpus []float64
		var per []string
		for _, s := range res[i] {
			rates = append(rates, mib(s))
			busy = append(busy, s.cpu.Seconds()/s.elapsed.Seconds())
			cpus = append(cpus, perMiB(s))
			per = append(per, fmt.Sprintf("%.0f", mib(s)))
		}
		ratios[i] = roundRatio(res[i], res[ref], sample.rate)
		cpuRatios[i] = roundRatio(res[i], res[ref], perMiB)
		t.add(sd.name, fmt.Sprintf("%.0f", median(rates)), pct(ratios[i]), fmt.Sprintf("%.2f ms", median(cpus)/1e6),
			fmt.Sprintf("%.2f×", cpuRatios[i]), pct(median(busy)), strings.Join(per, ", "))
	}
	return ratios, cpuRatios
}

// checkStreamRendered makes sure the controller's nginx.conf has a stream
// block and that a stream server file proxies to the TransportServer's
// upstream, so that the row measures what its name says.
func checkStreamRendered(p *controllerProc) error {
	conf, err := os.ReadFile(filepath.Join(p.StateDir, "nginx.conf"))
	if err != nil {
		return err
	}
	if !strings.Contains(string(conf), "stream {") {
		return errors.New("(k) generated: nginx.conf has no stream block")
	}
	files, _ := filepath.Glob(filepath.Join(p.StateDir, "servers", "_stream-*.stream"))
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil && strings.Contains(string(data), "proxy_pass ts_") {
			return nil
		}
	}
	return fmt.Errorf("(k) generated: no stream server file proxying to a TransportServer upstream in %v", files)
}

// waitStreamEcho polls addr until a short round trip echoes.
func waitStreamEcho(ctx context.Context, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		if err = shortOnce(addr, make([]byte, shortPayload)); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("no echo through %s within %s: %w", addr, timeout, err)
}

// shortOnce connects, sends buf, reads it back and closes.
func shortOnce(addr string, buf []byte) error {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write(buf); err != nil {
		return err
	}
	got := make([]byte, len(buf))
	if _, err := io.ReadFull(c, got); err != nil {
		return err
	}
	if !bytes.Equal(got, buf) {
		return errors.New("echo differs")
	}
	return nil
}

// bulkLoad runs conns connections to addr for d, each writing 64 KiB
// chunks and reading the echo; count is the bytes read back.
func bulkLoad(ctx context.Context, addr string, conns int, d time.Duration) (sample, error) {
	end := time.Now().Add(d)
	start := time.Now()
	var mu sync.Mutex
	s := sample{why: map[string]int{}}
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fail := func(err error) {
				mu.Lock()
				s.bad++
				s.why[errClass(err)]++
				mu.Unlock()
			}
			c, err := net.DialTimeout("tcp", addr, 2*time.Second)
			if err != nil {
				fail(err)
				return
			}
			defer c.Close()
			stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
			defer stop()
			c.SetDeadline(end)
			done := make(chan struct{})
			go func() {
				defer close(done)
				buf := make([]byte, streamChunk)
				for i := range buf {
					buf[i] = byte(i)
				}
				for {
					if _, err := c.Write(buf); err != nil {
						if !isTimeout(err) {
							fail(err)
						}
						return
					}
				}
			}()
			buf := make([]byte, streamChunk)
			var n int64
			for {
				k, err := c.Read(buf)
				n += int64(k)
				if err != nil {
					if !isTimeout(err) {
						fail(err)
					}
					break
				}
			}
			<-done // the writer stops at the same deadline
			mu.Lock()
			s.count += int(n)
			mu.Unlock()
		}()
	}
	wg.Wait()
	s.elapsed = max(time.Since(start), d)
	if s.elapsed > d+time.Second {
		s.elapsed = d // the closes took long; the bytes were counted within d
	}
	return s, ctx.Err()
}

// shortLoad runs workers clients for d, each connecting, sending 1 KiB,
// reading it back and closing, in a loop; count is the connections.
func shortLoad(ctx context.Context, addr string, workers int, d time.Duration) (sample, error) {
	end := time.Now().Add(d)
	start := time.Now()
	var mu sync.Mutex
	s := sample{why: map[string]int{}}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, shortPayload)
			for i := range buf {
				buf[i] = byte(i * 7)
			}
			ok, bad := 0, map[string]int{}
			for time.Now().Before(end) && ctx.Err() == nil {
				if err := shortOnce(addr, buf); err != nil {
					bad[errClass(err)]++
					continue
				}
				ok++
			}
			mu.Lock()
			s.count += ok
			for k, v := range bad {
				s.bad += v
				s.why[k] += v
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	s.elapsed = time.Since(start)
	return s, ctx.Err()
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// errClass shortens an error to what it says without addresses.
func errClass(err error) string {
	switch {
	case isTimeout(err):
		return "timeout"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "EOF"
	case errors.Is(err, unix.ECONNRESET):
		return "connection reset"
	case errors.Is(err, unix.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, unix.EPIPE):
		return "broken pipe"
	case errors.Is(err, unix.EADDRNOTAVAIL):
		return "no free local port"
	}
	return err.Error()
}

// planStreamPinning pins (k)'s nginx under test to frontCPU and this
// process (the clients and the echo backend) to loadCPU, when the machine
// has two CPUs and -pin is on.
func planStreamPinning(c *config) pinning {
	switch {
	case !c.pin:
		return pinning{why: "-pin=false"}
	case runtime.NumCPU() < 2:
		return pinning{why: "one CPU"}
	}
	return pinning{on: true}
}

func streamPinNote(pin pinning) string {
	if !pin.on {
		return fmt.Sprintf("CPUs: not pinned (%s).", pin.why)
	}
	return fmt.Sprintf("CPUs: each nginx under test pinned to CPU %d; this benchmark process (clients and echo backend, every thread) to CPU %d, for the section only.", frontCPU, loadCPU)
}

// pinSelf pins every thread of this process to cpu (threads created later
// inherit it from their creator) and returns a function that gives them
// back the CPUs they had.
func pinSelf(cpu int) (func(), error) {
	var orig unix.CPUSet
	if err := unix.SchedGetaffinity(0, &orig); err != nil {
		return nil, fmt.Errorf("read CPU affinity: %w", err)
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := setAllThreads(&set); err != nil {
		return nil, err
	}
	return func() { setAllThreads(&orig) }, nil
}

// setAllThreads sets the affinity of every thread of this process.
func setAllThreads(set *unix.CPUSet) error {
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("list threads: %w", err)
	}
	for _, d := range entries {
		tid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, set); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("pin thread %d: %w", tid, err)
		}
	}
	return nil
}
