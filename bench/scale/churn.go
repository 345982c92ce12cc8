package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// churnOptions are -churn-*: rate EndpointSlice writes a second, round
// robin over services Services, for seconds, by writers writers; every
// every-th write is timed.
type churnOptions struct {
	rate, services, seconds, writers, every int
}

// churnResult is what a churn measured.
type churnResult struct {
	// missedTicks are the writes due that found a fifth of a second of
	// writes waiting (all writers busy), and were not made.
	services, writes, failedWrites, missedTicks int
	window                                      time.Duration
	lat                                         latencies
	// skippedProbes are sampled writes not timed because as many probes
	// as allowed were still waiting.
	skippedProbes int
	// cpu is the controller's CPU time over the window, in cores.
	cpu     float64
	reloads int
	// hist is the controller's endpointUpdateMetric over the window,
	// if it has one.
	hist   row
	histOK bool
}

// maxProbes bounds the probes waiting at once during a churn.
const maxProbes = 32

// churn writes the EndpointSlices of objects idx round robin at o.rate a
// second for o.seconds (a ticker; a write that finds a fifth of a second
// of writes waiting for a writer is missed, not queued), each write
// moving the Service's one endpoint to its other port, and times every
// o.every-th write to the new endpoint answering, each polled on its own.
func (c *controller) churn(ctx context.Context, client kubernetes.Interface, set objectSet, idx []int, b backend, p *prober, o churnOptions) (churnResult, error) {
	r := churnResult{services: len(idx)}
	api := client.DiscoveryV1().EndpointSlices(set.namespace())
	// The slices are read once; each write keeps the answer, whose
	// resourceVersion the next write of the same slice needs.
	cur := make([]*discoveryv1.EndpointSlice, len(idx))
	addrs := make([]string, len(idx))
	for k, i := range idx {
		s, err := api.Get(ctx, name(i)+"-1", metav1.GetOptions{})
		if err != nil {
			return r, err
		}
		if addrs[k], err = set.addr(ctx, c, i); err != nil {
			return r, err
		}
		cur[k] = s
	}
	// A Service is written again after len(idx)/rate seconds: its probe
	// must be done by then, or the endpoint it waits for moves again.
	limit := min(10*time.Second, time.Duration(float64(time.Second)*0.9*float64(len(idx))/float64(o.rate)))
	locks := make([]sync.Mutex, len(idx))

	var mu sync.Mutex // guards r's counters and lat
	probes := make(chan struct{}, maxProbes)
	var probing sync.WaitGroup
	write := func(k int) {
		s := k % len(idx)
		locks[s].Lock()
		defer locks[s].Unlock()
		next, want := flipped(cur[s], b)
		start := time.Now()
		got, err := api.Update(ctx, next, metav1.UpdateOptions{})
		wrote := time.Since(start)
		if err != nil {
			// Read it again, for a write that can succeed.
			if again, err := api.Get(ctx, name(idx[s])+"-1", metav1.GetOptions{}); err == nil {
				cur[s] = again
			}
			mu.Lock()
			r.failedWrites++
			failed := r.failedWrites
			mu.Unlock()
			if failed <= 5 {
				fmt.Fprintf(os.Stderr, "churn write %d: %v\n", k, err)
			}
			return
		}
		cur[s] = got
		mu.Lock()
		defer mu.Unlock()
		r.writes++
		r.lat.writes = append(r.lat.writes, wrote)
		if k%o.every != 0 {
			return
		}
		select {
		case probes <- struct{}{}:
		default:
			r.skippedProbes++
			return
		}
		probing.Add(1)
		go func() {
			defer probing.Done()
			defer func() { <-probes }()
			took, err := p.waitEndpoint(ctx, addrs[s], host(idx[s]), want, start, limit)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				r.lat.failed++
				return
			}
			r.lat.took = append(r.lat.took, took)
		}()
	}

	// A fifth of a second of writes may wait for a writer, so that a
	// moment's stall of the API server does not lose ticks.
	jobs := make(chan int, max(o.rate/5, 1))
	var writing sync.WaitGroup
	for range o.writers {
		writing.Add(1)
		go func() {
			defer writing.Done()
			for k := range jobs {
				write(k)
			}
		}()
	}
	pid := c.cmd.Process.Pid
	reloads0 := c.metric("causeway_nginx_reloads_total")
	hist := c.histogramFrom(endpointUpdateMetric)
	cpu0 := cpuTime(pid)
	start := time.Now()
	ticker := time.NewTicker(time.Second / time.Duration(o.rate))
	end := start.Add(time.Duration(o.seconds) * time.Second)
	lastLog := start
	// Each tick hands out the writes due by then: a tick the ticker
	// dropped (this goroutine not run in time on a busy machine) delays
	// its write to the next, rather than losing it.
	for k := 0; ; {
		var now time.Time
		select {
		case <-ctx.Done():
		case now = <-ticker.C:
		}
		if ctx.Err() != nil || now.After(end) {
			break
		}
		for due := int(now.Sub(start).Seconds()*float64(o.rate)) + 1; k < due; k++ {
			select {
			case jobs <- k:
			default:
				mu.Lock()
				r.missedTicks++
				mu.Unlock()
			}
		}
		if now.Sub(lastLog) >= 10*time.Second {
			mu.Lock()
			fmt.Fprintf(os.Stderr, "churn: %d writes, %d probes timed in %s\n", r.writes, len(r.lat.took), now.Sub(start).Round(time.Second))
			mu.Unlock()
			lastLog = now
		}
	}
	ticker.Stop()
	close(jobs)
	writing.Wait()
	r.window = time.Since(start)
	r.cpu = (cpuTime(pid) - cpu0).Seconds() / r.window.Seconds()
	probing.Wait()
	r.reloads = int(c.metric("causeway_nginx_reloads_total") - reloads0)
	r.hist, r.histOK = hist.row("churn: of which: controller, event → pushed (" + endpointUpdateMetric + " p50 / p99, from its buckets)")
	return r, ctx.Err()
}

// rows are the churn's lines of the table.
func (r churnResult) rows(o churnOptions) []row {
	rows := []row{
		{what: fmt.Sprintf("churn: EndpointSlice writes, %d/s asked round robin over the last Services for %d s (%d writers)", o.rate, o.seconds, o.writers),
			value: fmt.Sprintf("%d in %s over %d Services: %.1f/s (%d failed, %d skipped with the writers behind)", r.writes, r.window.Round(100*time.Millisecond), r.services,
				float64(r.writes)/r.window.Seconds(), r.failedWrites, r.missedTicks),
			target: fmt.Sprintf("%d/s", o.rate), met: float64(r.writes)/r.window.Seconds() >= 0.95*float64(o.rate), num: float64(r.writes) / r.window.Seconds()},
	}
	lat := r.lat.row(fmt.Sprintf("churn: a write → traffic on the new endpoint (p50 / p99 / max (timed) of every %dth write)", o.every))
	if r.skippedProbes > 0 {
		lat.value += fmt.Sprintf("; %d not timed (%d probes busy)", r.skippedProbes, maxProbes)
	}
	rows = append(rows, lat, r.lat.writeRow("churn: of which: the API server's answer to the update (p50 / p99 of every write)"))
	if r.histOK {
		rows = append(rows, r.hist)
	}
	return append(rows,
		row{what: "churn: controller CPU, utime + stime over the window", value: fmt.Sprintf("%.2f cores", r.cpu),
			target: fmt.Sprintf("≤ %.1f core", targetChurnCPU), met: r.cpu <= targetChurnCPU, num: r.cpu},
		row{what: "churn: nginx reloads", value: strconv.Itoa(r.reloads), target: "0", met: r.reloads == 0})
}
