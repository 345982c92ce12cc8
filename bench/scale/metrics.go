package main

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// metricsPoll is how often the bench reads the controller's metrics while
// it waits for a sync. Every read is a scrape, which gathers every family:
// at 10,000 backends 14–20 ms of the controller's CPU and 3.9 MB of
// garbage (5.6 MB before 2026-11-30), made while the sync runs. Until
// 2026-11-30 the bench polled every 20 ms, which disturbed the syncs it
// waited for; nothing it times depends on this poll.
const metricsPoll = 100 * time.Millisecond

// scrape reads the controller's metrics in the Prometheus text format,
// only those of the families that names' samples belong to (all of them
// when names is empty); "" if it cannot. The controller still gathers
// every family (metricsPoll says what that costs), but writes only the
// ones asked for.
func (c *controller) scrape(names ...string) string {
	q := url.Values{}
	for _, n := range names {
		q.Add("name[]", n)
		for _, suffix := range []string{"_sum", "_count", "_bucket"} {
			if family, ok := strings.CutSuffix(n, suffix); ok {
				q.Add("name[]", family) // a histogram's or summary's sample
			}
		}
	}
	u := fmt.Sprintf("http://127.0.0.1:%d/metrics", c.mport)
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get(u)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

// metric sums a metric's samples.
func (c *controller) metric(name string) float64 { return c.metrics(name)[0] }

// metrics sums the samples of each of names, read from one scrape.
func (c *controller) metrics(names ...string) []float64 {
	text := c.scrape(names...)
	sums := make([]float64, len(names))
	for i, n := range names {
		sums[i] = sumMetric(text, n)
	}
	return sums
}

// sumMetric sums the samples of name in text, over its label sets.
func sumMetric(text, name string) float64 {
	sum := 0.0
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		f := strings.Fields(line)
		v, _ := strconv.ParseFloat(f[len(f)-1], 64)
		sum += v
	}
	return sum
}

// histogram is a Prometheus histogram's cumulative bucket counts by upper
// bound (le), summed over its other labels.
type histogram map[float64]float64

// readHistogram reads histogram name's _bucket series from text; false
// when text has none (the controller does not expose the metric).
func readHistogram(text, name string) (histogram, bool) {
	h := histogram{}
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, name+"_bucket{") {
			continue
		}
		at := strings.Index(line, `le="`)
		if at < 0 {
			continue
		}
		rest := line[at+len(`le="`):]
		end := strings.IndexByte(rest, '"')
		if end < 0 {
			continue
		}
		le, err := strconv.ParseFloat(rest[:end], 64) // "+Inf" parses as +Inf
		if err != nil {
			continue
		}
		f := strings.Fields(line)
		v, _ := strconv.ParseFloat(f[len(f)-1], 64)
		h[le] += v
	}
	return h, len(h) > 0
}

// minus is h's observations since base, bucket by bucket.
func (h histogram) minus(base histogram) histogram {
	out := histogram{}
	for le, v := range h {
		out[le] = v - base[le]
	}
	return out
}

// count is the number of observations (the +Inf bucket).
func (h histogram) count() float64 { return h[math.Inf(1)] }

// quantile estimates the q-quantile as Prometheus's histogram_quantile
// does: linear within the bucket that holds it, the highest finite
// bound when it falls in the +Inf bucket. NaN without observations.
func (h histogram) quantile(q float64) float64 {
	total := h.count()
	if total <= 0 {
		return math.NaN()
	}
	var bounds []float64
	for le := range h {
		bounds = append(bounds, le)
	}
	slices.Sort(bounds)
	rank := q * total
	lower, below := 0.0, 0.0
	for _, le := range bounds {
		if h[le] >= rank {
			if math.IsInf(le, 1) {
				return lower
			}
			if h[le] == below {
				return le
			}
			return lower + (le-lower)*(rank-below)/(h[le]-below)
		}
		lower, below = le, h[le]
	}
	return lower
}

// histogramWindow reads histogram name before and after something, and
// reports its observations meanwhile.
type histogramWindow struct {
	c      *controller
	name   string
	before histogram
	ok     bool
}

func (c *controller) histogramFrom(name string) *histogramWindow {
	h, ok := readHistogram(c.scrape(name+"_bucket"), name)
	return &histogramWindow{c: c, name: name, before: h, ok: ok}
}

// row is the histogram's p50 / p99 over the window, and false when the
// controller does not expose it.
func (w *histogramWindow) row(what string) (row, bool) {
	after, ok := readHistogram(w.c.scrape(w.name+"_bucket"), w.name)
	if !ok || !w.ok {
		if ok != w.ok {
			fmt.Fprintf(os.Stderr, "%s appeared or went away during the window; row left out\n", w.name)
		}
		return row{}, false
	}
	d := after.minus(w.before)
	if d.count() == 0 {
		return row{what: what, value: "no observations"}, true
	}
	p50, p99 := d.quantile(0.5), d.quantile(0.99)
	return row{what: what, value: fmt.Sprintf("%s / %s (%.0f observations)", seconds(p50), seconds(p99), d.count()), num: p50}, true
}

// seconds prints a duration given in seconds, to a tenth of a millisecond.
func seconds(s float64) string {
	return fmt.Sprintf("%.1f ms", s*1000)
}
