package metrics

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// StubStatusPath is where the controller's private server answers with
// nginx's stub_status.
const StubStatusPath = "/nginx_status"

// stubStatus is nginx's stub_status page.
type stubStatus struct {
	Active, Accepted, Handled, Requests, Reading, Writing, Waiting uint64
}

// parseStubStatus reads the stub_status page, which nginx writes as
//
//	Active connections: 1
//	server accepts handled requests
//	 16 16 31
//	Reading: 0 Writing: 1 Waiting: 0
//
// (lines may end in a space). Anything else is an error: a page that
// changed shape must not turn into silent zeros.
func parseStubStatus(text string) (stubStatus, error) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) != 4 {
		return stubStatus{}, fmt.Errorf("%d lines, want 4", len(lines))
	}
	var s stubStatus
	parse := func(line int, want []string, into ...*uint64) error {
		f := strings.Fields(lines[line])
		if len(f) != len(want) {
			return fmt.Errorf("line %d %q: want %q", line+1, lines[line], strings.Join(want, " "))
		}
		n := 0
		for i, w := range want {
			if w != "N" {
				if f[i] != w {
					return fmt.Errorf("line %d %q: want %q", line+1, lines[line], strings.Join(want, " "))
				}
				continue
			}
			v, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				return fmt.Errorf("line %d: %w", line+1, err)
			}
			*into[n] = v
			n++
		}
		return nil
	}
	for i, l := range []struct {
		want []string
		into []*uint64
	}{
		{[]string{"Active", "connections:", "N"}, []*uint64{&s.Active}},
		{[]string{"server", "accepts", "handled", "requests"}, nil},
		{[]string{"N", "N", "N"}, []*uint64{&s.Accepted, &s.Handled, &s.Requests}},
		{[]string{"Reading:", "N", "Writing:", "N", "Waiting:", "N"}, []*uint64{&s.Reading, &s.Writing, &s.Waiting}},
	} {
		if err := parse(i, l.want, l.into...); err != nil {
			return stubStatus{}, err
		}
	}
	return s, nil
}

// stubStatusCollector asks nginx for stub_status over a unix socket at
// every scrape.
type stubStatusCollector struct {
	client *http.Client
	fail   *failureLog

	connections, connectionsTotal, requests *prometheus.Desc
}

// stubStatusTimeout bounds one fetch: a scrape must not hang on a stuck
// nginx.
const stubStatusTimeout = 2 * time.Second

func newStubStatus(id Identity, socket string, fail *failureLog) *stubStatusCollector {
	l := id.Labels()
	var d net.Dialer
	return &stubStatusCollector{
		client: &http.Client{
			Timeout: stubStatusTimeout,
			Transport: &http.Transport{
				DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
					return d.DialContext(ctx, "unix", socket)
				},
				MaxIdleConns: 1,
			},
		},
		fail: fail,
		connections: prometheus.NewDesc(CompatPrefix+"nginx_process_connections",
			"Client connections now, by state: active, reading, writing, waiting.", []string{"state"}, l),
		connectionsTotal: prometheus.NewDesc(CompatPrefix+"nginx_process_connections_total",
			"Client connections since nginx started, by state: accepted, handled.", []string{"state"}, l),
		requests: prometheus.NewDesc(CompatPrefix+"nginx_process_requests_total",
			"Client requests since nginx started.", nil, l),
	}
}

// Describe implements prometheus.Collector.
func (c *stubStatusCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.connections
	ch <- c.connectionsTotal
	ch <- c.requests
}

// Collect implements prometheus.Collector. A failed fetch is logged and
// counted, and the series are absent from that scrape.
func (c *stubStatusCollector) Collect(ch chan<- prometheus.Metric) {
	s, err := c.fetch()
	if c.fail.record(err) {
		return
	}
	for _, m := range []struct {
		desc  *prometheus.Desc
		vt    prometheus.ValueType
		v     uint64
		state []string
	}{
		{c.connections, prometheus.GaugeValue, s.Active, []string{"active"}},
		{c.connections, prometheus.GaugeValue, s.Reading, []string{"reading"}},
		{c.connections, prometheus.GaugeValue, s.Writing, []string{"writing"}},
		{c.connections, prometheus.GaugeValue, s.Waiting, []string{"waiting"}},
		{c.connectionsTotal, prometheus.CounterValue, s.Accepted, []string{"accepted"}},
		{c.connectionsTotal, prometheus.CounterValue, s.Handled, []string{"handled"}},
		{c.requests, prometheus.CounterValue, s.Requests, nil},
	} {
		ch <- prometheus.MustNewConstMetric(m.desc, m.vt, float64(m.v), m.state...)
	}
}

func (c *stubStatusCollector) fetch() (stubStatus, error) {
	resp, err := c.client.Get("http://nginx" + StubStatusPath)
	if err != nil {
		return stubStatus{}, fmt.Errorf("stub_status: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return stubStatus{}, fmt.Errorf("stub_status: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return stubStatus{}, fmt.Errorf("stub_status: HTTP %d", resp.StatusCode)
	}
	s, err := parseStubStatus(string(body))
	if err != nil {
		return stubStatus{}, fmt.Errorf("stub_status page: %w", err)
	}
	return s, nil
}
