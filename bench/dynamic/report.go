package main

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// report collects the Markdown tables of one run. Each table is also
// printed to stderr as soon as it is complete, so a long run shows
// progress.
type report struct {
	head     strings.Builder
	sections []string
	summary  [][]string
	// tag names the data plane in titles and summary rows when a run
	// measures more than one (-also-angie).
	tag string
}

func newReport(c *config) *report {
	r := &report{}
	host, _ := os.Hostname()
	fmt.Fprintf(&r.head, "# Causeway reload-free updates (%s, %s, %d CPUs, %s)\n\n", time.Now().Format(time.DateTime), host, runtime.NumCPU(), runtime.Version())
	fmt.Fprintf(&r.head, "Data plane under test: %s (`%s`)", c.plane.flavour, c.plane.binary)
	if c.alsoAngie != "" {
		fmt.Fprintf(&r.head, ", then Angie from `%s`, each section in turn in this one run", c.alsoAngie)
	}
	r.head.WriteString(". ")
	fmt.Fprintf(&r.head, "Controller: files source, `--sync-quiet-period %s --sync-max-delay %s`, Lua data plane. ", c.syncQuiet, c.syncMaxDelay)
	fmt.Fprintf(&r.head, "Backends: in-process echo servers (and, for (d), (f) and (g), one more nginx answering `return 200`) on 127.77.x.y sharing one port; nginx listens on 127.78.x.y. ")
	fmt.Fprintf(&r.head, "Load average at start: %s.\n", loadAverage())
	return r
}

// loadAverage is the 1, 5 and 15 minute load average, which says how busy
// the machine was with other work.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// table is one Markdown table; the first column (or the first left
// columns) is left-aligned and the others right-aligned.
type table struct {
	title  string
	header []string
	left   int
	rows   [][]string
	notes  []string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) note(format string, args ...any) {
	t.notes = append(t.notes, fmt.Sprintf(format, args...))
}

func (t *table) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", t.title)
	b.WriteString("| " + strings.Join(t.header, " | ") + " |\n|")
	for i := range t.header {
		if i < max(1, t.left) {
			b.WriteString("---|")
		} else {
			b.WriteString("---:|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	if len(t.notes) > 0 {
		b.WriteString("\n")
		for _, n := range t.notes {
			b.WriteString("- " + n + "\n")
		}
	}
	return b.String()
}

// addTable records a finished table and shows it at once on stderr.
func (r *report) addTable(t *table) {
	t.title += r.tag
	s := t.String()
	r.sections = append(r.sections, s)
	fmt.Fprintln(os.Stderr, "\n"+s)
}

// target records one summary row. ok is nil for informational rows.
func (r *report) target(what, target, measured string, ok *bool) {
	verdict := "info"
	if ok != nil {
		verdict = "MISS"
		if *ok {
			verdict = "PASS"
		}
	}
	r.summary = append(r.summary, []string{what + r.tag, target, measured, verdict})
}

// skip records a summary row for a measurement that could not run.
func (r *report) skip(what, target, why string) {
	r.summary = append(r.summary, []string{what + r.tag, target, "not run: " + why, "SKIP"})
}

// String is the whole report: the summary first, then each measurement.
func (r *report) String() string {
	var b strings.Builder
	b.WriteString(r.head.String())
	fmt.Fprintf(&b, "Load average at end: %s.\n\n", loadAverage())
	// Rows in section order, (a) to (g); within a section as recorded.
	rows := slices.Clone(r.summary)
	slices.SortStableFunc(rows, func(a, b []string) int { return strings.Compare(a[0][:3], b[0][:3]) })
	sum := &table{title: "Summary", header: []string{"measurement", "target", "measured", "result"}, rows: rows}
	b.WriteString(sum.String())
	for _, s := range r.sections {
		b.WriteString("\n" + s)
	}
	return b.String()
}

// formatFailures lists failure reasons with their counts, the five most
// frequent first.
func formatFailures(why map[string]int) string {
	type kv struct {
		k string
		v int
	}
	var all []kv
	for k, v := range why {
		all = append(all, kv{k, v})
	}
	slices.SortFunc(all, func(a, b kv) int {
		if a.v != b.v {
			return b.v - a.v
		}
		return strings.Compare(a.k, b.k)
	})
	var out []string
	for i, f := range all {
		if i == 5 {
			out = append(out, "…")
			break
		}
		out = append(out, fmt.Sprintf("%d × %s", f.v, f.k))
	}
	return strings.Join(out, "; ")
}

// pass is a helper for report.target.
func pass(ok bool) *bool { return &ok }

// percentile returns the p-th percentile (0-100) of sorted, by the
// nearest-rank method.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// sortedCopy returns ds sorted, leaving ds as it was.
func sortedCopy(ds []time.Duration) []time.Duration {
	out := slices.Clone(ds)
	slices.Sort(out)
	return out
}

// ms formats a duration in milliseconds.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	default:
		return fmt.Sprintf("%.2f ms", v)
	}
}

// median returns the median of xs (which it sorts).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

// num formats a count with thousands separators.
func num(v float64) string {
	s := fmt.Sprintf("%.0f", math.Round(v))
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
