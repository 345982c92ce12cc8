package node

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// client sends requests for host names to addr (NodeIP:port or a
// ClusterIP), as a user's client that resolves them there would.
func client(addr string) *http.Client {
	dialer := &net.Dialer{Timeout: 3 * time.Second}
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return dialer.DialContext(ctx, network, addr)
			},
			TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     30 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// load is a bounded request loop: rate requests a second for duration at
// most, stopped early by stop, each answer counted by status.
type load struct {
	url, host string
	rate      int
	duration  time.Duration

	mu       sync.Mutex
	sent     int
	byStatus map[int]int
	errs     []string
	nErrs    int
	// latencies of every request; slow, the first that took over a second.
	latencies []time.Duration
	slow      []string
	stopped   chan struct{}
	done      chan struct{}
}

func startLoad(t *testing.T, addr, host, path string, rate int, duration time.Duration) *load {
	l := &load{url: "http://" + host + path, host: host, rate: rate, duration: duration,
		byStatus: map[int]int{}, stopped: make(chan struct{}), done: make(chan struct{})}
	c := client(addr)
	go func() {
		defer close(l.done)
		var wg sync.WaitGroup
		sem := make(chan struct{}, 1024)
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		end := time.After(duration)
	loop:
		for {
			select {
			case <-l.stopped:
				break loop
			case <-end:
				break loop
			case <-tick.C:
			}
			select {
			case sem <- struct{}{}:
			default:
				l.record(0, fmt.Errorf("more than 1024 requests outstanding"), 0)
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				start := time.Now()
				resp, err := c.Get(l.url)
				if err != nil {
					l.record(0, err, time.Since(start))
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				l.record(resp.StatusCode, nil, time.Since(start))
			}()
		}
		wg.Wait()
	}()
	t.Cleanup(l.stop)
	return l
}

func (l *load) record(status int, err error, took time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent++
	l.latencies = append(l.latencies, took)
	if took > time.Second && len(l.slow) < 5 {
		l.slow = append(l.slow, fmt.Sprintf("%s took %s", time.Now().Add(-took).Format("15:04:05.000"), took.Round(time.Millisecond)))
	}
	if err != nil {
		l.nErrs++
		if len(l.errs) < 5 {
			l.errs = append(l.errs, fmt.Sprintf("%s %v", time.Now().Format("15:04:05.000"), err))
		}
		return
	}
	l.byStatus[status]++
}

var stopOnce sync.Map

func (l *load) stop() {
	if _, loaded := stopOnce.LoadOrStore(l, true); !loaded {
		close(l.stopped)
	}
	<-l.done
}

// result stops the load and returns the number of requests and of those
// that failed (no answer or not 2xx), with a summary.
func (l *load) result() (sent, failed int, summary string) {
	l.stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	var codes []string
	var statuses []int
	for s := range l.byStatus {
		statuses = append(statuses, s)
	}
	sort.Ints(statuses)
	for _, s := range statuses {
		codes = append(codes, fmt.Sprintf("%d×%d", l.byStatus[s], s))
		if s < 200 || s > 299 {
			failed += l.byStatus[s]
		}
	}
	failed += l.nErrs
	sort.Slice(l.latencies, func(i, j int) bool { return l.latencies[i] < l.latencies[j] })
	pct := func(p float64) time.Duration {
		if len(l.latencies) == 0 {
			return 0
		}
		return l.latencies[int(p*float64(len(l.latencies)-1))].Round(100 * time.Microsecond)
	}
	summary = fmt.Sprintf("%d requests: %s, %d errors; latency p50 %s p99 %s max %s", l.sent, strings.Join(codes, " "), l.nErrs, pct(0.5), pct(0.99), pct(1))
	if len(l.errs) > 0 {
		summary += "; errors: " + strings.Join(l.errs, "; ")
	}
	if len(l.slow) > 0 {
		summary += "; slow: " + strings.Join(l.slow, "; ")
	}
	return l.sent, failed, summary
}
