package balancer

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
)

// The per-request metrics contract between the nginx configuration (written
// by package render) and the controller's collector (package metrics):
// what a line of the metrics log carries, in which order, and how a
// location names its series.

// MetricsVariable is the nginx variable (without '$') through which a
// location names its series key.
const MetricsVariable = "causeway_metrics"

// Histogram is one of the per-request histograms, named as ingress-nginx
// names it (without the nginx_ingress_controller_ prefix).
type Histogram struct {
	Name string
	// Buckets says which bucket flag sets its bounds: "time", "length" or
	// "size".
	Buckets string
	// Source is the nginx variable (without '$') it observes.
	Source string
	// Help is its Prometheus help text.
	Help string
}

// Histograms are the per-request histograms, in the order the metrics log
// carries the sources of the enabled ones.
var Histograms = []Histogram{
	{"request_duration_seconds", "time", "request_time", "The time from the first byte of the request to the last byte of the response sent, in seconds ($request_time)."},
	{"response_duration_seconds", "time", "upstream_response_time", "The time the upstream took to answer, in seconds ($upstream_response_time)."},
	{"connect_duration_seconds", "time", "upstream_connect_time", "The time spent connecting to the upstream, in seconds ($upstream_connect_time; 0 on a reused connection)."},
	{"header_duration_seconds", "time", "upstream_header_time", "The time until the upstream's response header arrived, in seconds ($upstream_header_time)."},
	{"request_size", "length", "request_length", "The request length, in bytes, request line, header and body included ($request_length)."},
	{"response_size", "length", "bytes_sent", "The response length, in bytes, status line and header included ($bytes_sent)."},
	{"bytes_sent", "size", "bytes_sent", "The bytes sent to the client ($bytes_sent), with the size buckets."},
}

// MetricsLogSeparator separates the fields of a metrics log line. No
// field but the last (the request's Host, which the collector checks)
// can contain it: series keys are hex, statuses digits, methods what
// nginx's request line parser accepts, and the observed values numbers,
// "-" or lists joined by ", " and " : ".
const MetricsLogSeparator = "|"

// MetricsLogSources returns the nginx variables (without '$') a metrics
// log line carries after the series key, $status and $request_method for
// the enabled histograms (names, in Histograms' order): each source once,
// in order of first use. at[i] is the index in sources of histogram i's.
func MetricsLogSources(names []string) (sources []string, at []int, err error) {
	for _, n := range names {
		i := slices.IndexFunc(Histograms, func(h Histogram) bool { return h.Name == n })
		if i < 0 {
			return nil, nil, fmt.Errorf("metrics: unknown histogram %q", n)
		}
		src := Histograms[i].Source
		j := slices.Index(sources, src)
		if j < 0 {
			j = len(sources)
			sources = append(sources, src)
		}
		at = append(at, j)
	}
	return sources, at, nil
}

// MetricsLogFields are the nginx variables (without '$') of a metrics log
// line, in order: the series key, $status, $request_method, the sources
// (MetricsLogSources), then $host (last, as the one field a client can
// fill). The host is read for shared and undefined-host series only.
func MetricsLogFields(names []string) ([]string, error) {
	sources, _, err := MetricsLogSources(names)
	if err != nil {
		return nil, err
	}
	out := append([]string{MetricsVariable, "status", "request_method"}, sources...)
	return append(out, "host"), nil
}

// SeriesLabels are the labels of a location's series.
type SeriesLabels struct {
	Namespace, Ingress, Service, Path string
	// Host is the server's host ("" in the catch-all server); when
	// HostFromRequest is set, the request's Host replaces it.
	Host            string
	HostFromRequest bool
	// Canary is ingress-nginx's canary label: the canary's upstream name
	// ("namespace-service-port") on the series of requests a split sent
	// to the canary, "" otherwise.
	Canary string
}

// CanaryMetricsVariable is the nginx variable (without '$') through
// which a split location names the series of the requests its canary
// serves.
const CanaryMetricsVariable = "causeway_metrics_canary"

// SeriesKey is the key a location with these labels sets in
// MetricsVariable: a digest, so no label ever appears in the nginx
// configuration, with "u" in front when the host comes from the request
// and "d" otherwise.
func SeriesKey(l SeriesLabels) string {
	return string(AppendSeriesKey(nil, l))
}

// AppendSeriesKey appends SeriesKey(l) to dst, so that a caller can look
// the key up before it makes a string of it.
func AppendSeriesKey(dst []byte, l SeriesLabels) []byte {
	var buf [256]byte // the labels, on the stack unless they are longer
	b := buf[:0]
	for _, s := range []string{l.Namespace, l.Ingress, l.Service, l.Path, l.Host} {
		b = append(append(b, s...), 0)
	}
	if l.Canary != "" {
		b = append(append(b, l.Canary...), 0) // keys without a canary stay as they were
	}
	sum := sha256.Sum256(b)
	prefix := byte('d')
	if l.HostFromRequest {
		prefix = 'u'
	}
	return hex.AppendEncode(append(dst, prefix), sum[:8])
}

// SharedSeriesKey is the one key of a location of a shared server (render's
// server blocks that serve many alike hosts, named server), whatever the
// host: the collector tells the hosts apart by the request's $host, an
// exact server name there, through SharedSeriesEntry. Without it, each
// such location needed a map from $host to a key, and nginx pays for every
// map at each reload. variable is the nginx variable that carries it
// (MetricsVariable, or CanaryMetricsVariable for the canary's series).
func SharedSeriesKey(server string, location int, variable string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + strconv.Itoa(location) + "\x00" + variable))
	out := make([]byte, 17)
	out[0] = 's'
	hex.Encode(out[1:], sum[:8])
	return string(out)
}

// SharedSeriesEntry is the collector's key for the requests to host of a
// shared series key.
func SharedSeriesEntry(key, host string) string {
	return string(AppendSharedSeriesEntry(nil, key, host))
}

// AppendSharedSeriesEntry appends SharedSeriesEntry(key, host) to dst,
// without an allocation per entry: for the collector's lines, and for the
// render's lookups of the keys the collector knows.
func AppendSharedSeriesEntry[S ~string | ~[]byte](dst []byte, key, host S) []byte {
	return append(append(append(dst, key...), 0), host...)
}

// IsSharedSeriesKey reports whether k is a SharedSeriesKey, whose lines
// are told apart by their host.
func IsSharedSeriesKey(k []byte) bool { return len(k) > 0 && k[0] == 's' }

var seriesKeyRe = regexp.MustCompile(`^[dus][0-9a-f]{16}$`)

// ValidSeriesKey reports whether k has SeriesKey's form.
func ValidSeriesKey(k string) bool { return seriesKeyRe.MatchString(k) }

// MaxBuckets bounds each bucket list: every bound costs a comparison per
// request in nginx and a sample per series.
const MaxBuckets = 64

// CheckBuckets checks histogram upper bounds: 1 to MaxBuckets finite,
// non-negative numbers, strictly ascending.
func CheckBuckets(b []float64) error {
	if len(b) == 0 || len(b) > MaxBuckets {
		return fmt.Errorf("want 1 to %d bounds, got %d", MaxBuckets, len(b))
	}
	for i, v := range b {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("bound %v is not a finite non-negative number", v)
		}
		if i > 0 && v <= b[i-1] {
			return fmt.Errorf("bounds must ascend: %v after %v", v, b[i-1])
		}
	}
	return nil
}
