// Package nginxflags is the table of ingress-nginx's controller flags and
// what Causeway makes of each. The controller accepts every name in it,
// so that arguments written for ingress-nginx (a chart's extraArgs, a
// Deployment's args) start Causeway instead of stopping it at the first
// flag it lacks: a flag of the same meaning takes effect, and one Causeway
// does not implement is named at start with what to use instead, then
// ignored. `causeway migrate check` and the flag table of
// docs/migrating-from-ingress-nginx.md read the same table.
package nginxflags

import (
	"sort"
	"strconv"
	"strings"
)

// Status is what Causeway makes of an ingress-nginx flag.
type Status string

const (
	// Supported: Causeway's flag Causeway names has the same meaning
	// (the same name, or an alias of a Causeway flag).
	Supported Status = "supported"
	// SupportedWithDifference: taken, with the documented Difference.
	SupportedWithDifference Status = "supported-with-difference"
	// NotApplicable: configures something Causeway does not have or does
	// in its own way (an internal port, a profiler); ignored.
	NotApplicable Status = "not-applicable"
	// Unsupported: a feature Causeway does not have; ignored, with a
	// warning at start naming what to use instead.
	Unsupported Status = "unsupported"
)

// Statuses in the order tables list them.
var Statuses = []Status{Supported, SupportedWithDifference, NotApplicable, Unsupported}

// Taken reports whether Causeway acts on a flag of this status.
func (s Status) Taken() bool { return s == Supported || s == SupportedWithDifference }

// Flag is one ingress-nginx controller flag.
type Flag struct {
	// Name is the flag's name without the dashes.
	Name string
	// Bool says the flag is a boolean: given alone it means true.
	Bool bool
	// Default is ingress-nginx's default, as its --help prints it.
	Default string
	Status  Status
	// Causeway is the Causeway flag that takes the value, for the statuses
	// that are Taken: Name itself when Causeway has a flag of that name,
	// else the flag Name is an alias of.
	Causeway string
	// Difference says how Causeway's behaviour differs from
	// ingress-nginx's (SupportedWithDifference).
	Difference string
	// Instead says what Causeway does, or what to use in its place
	// (NotApplicable, Unsupported).
	Instead string
	// Harmless is, for an Unsupported flag, the value with which
	// ingress-nginx behaves as Causeway does anyway (the feature off):
	// setting it needs no attention.
	Harmless string
	// Klog marks the logging flags ingress-nginx takes from klog.
	Klog bool
}

// IsHarmless reports whether value asks ingress-nginx for what Causeway
// does anyway: an Unsupported flag's Harmless value (booleans compared as
// booleans). Other statuses are never harmless by this test.
func (f Flag) IsHarmless(value string) bool {
	if f.Status != Unsupported || f.Harmless == "" {
		return false
	}
	if f.Bool {
		a, errA := strconv.ParseBool(value)
		b, errB := strconv.ParseBool(f.Harmless)
		return errA == nil && errB == nil && a == b
	}
	return value == f.Harmless
}

// Lookup returns the flag of a name (without dashes).
func Lookup(name string) (Flag, bool) {
	i := sort.Search(len(table), func(i int) bool { return table[i].Name >= name })
	if i < len(table) && table[i].Name == name {
		return table[i], true
	}
	return Flag{}, false
}

// All returns every flag, sorted by name.
func All() []Flag {
	return append([]Flag(nil), table...)
}

// ParseArgs reads an ingress-nginx command line the way its pflag flag
// set does: "--name=value", "--name value", "--name" alone for a boolean,
// one dash or two. Arguments that are not flags (the binary's path, say)
// are skipped, and so is everything after "--". A flag of neither
// ingress-nginx nor known (a typo) is returned with Known false; its value
// is the text after "=", if any, since whether it takes the next argument
// cannot be known.
func ParseArgs(args []string) []Arg {
	var out []Arg
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		name, value, hasValue := strings.Cut(name, "=")
		f, known := Lookup(name)
		if known && !hasValue && !f.Bool && i+1 < len(args) {
			i++
			value, hasValue = args[i], true
		}
		if known && f.Bool && !hasValue {
			value = "true"
		}
		out = append(out, Arg{Name: name, Value: value, Known: known})
	}
	return out
}

// Arg is one flag of a command line.
type Arg struct {
	Name, Value string
	// Known says that ingress-nginx has a flag of this name.
	Known bool
}
