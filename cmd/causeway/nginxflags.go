package main

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/causeway/causeway/internal/migrate"
	"github.com/causeway/causeway/internal/nginxflags"
)

// flagsDoc is where the table of ingress-nginx's flags is documented.
const flagsDoc = "docs/migrating-from-ingress-nginx.md#controller-flags"

// ingressNginxBinary is the path of ingress-nginx's controller in its
// image, the first of its Deployments' args.
const ingressNginxBinary = "/nginx-ingress-controller"

// registerIngressNginxFlags makes every flag of ingress-nginx's controller
// a flag of `causeway controller`, after Causeway's own are registered:
//   - a flag Causeway has under the same name is left as it is;
//   - one Causeway takes under another name becomes an alias sharing that
//     flag's value;
//   - the others are accepted and kept aside (hidden from --help), to be
//     named at start by reportIngressNginxFlags and otherwise ignored.
//
// So arguments written for ingress-nginx start Causeway rather than
// stopping it, while a name neither has (a typo) still fails
// (unknownFlagError).
func registerIngressNginxFlags(fl *pflag.FlagSet) {
	for _, f := range nginxflags.All() {
		if fl.Lookup(f.Name) != nil {
			continue
		}
		if f.Status.Taken() && f.Causeway != f.Name {
			target := fl.Lookup(f.Causeway)
			if target == nil {
				panic(fmt.Sprintf("ingress-nginx's --%s is an alias of --%s, which is not registered", f.Name, f.Causeway))
			}
			fl.AddFlag(&pflag.Flag{Name: f.Name, Usage: "ingress-nginx's name for --" + f.Causeway,
				Value: target.Value, DefValue: target.DefValue, NoOptDefVal: target.NoOptDefVal})
			continue
		}
		if f.Status == nginxflags.Supported {
			panic(fmt.Sprintf("ingress-nginx's --%s is supported by a flag of its name, which is not registered", f.Name))
		}
		v := &acceptedValue{bool: f.Bool, value: f.Default}
		flag := &pflag.Flag{Name: f.Name, Usage: "ingress-nginx's flag, accepted: " + strings.ToLower(string(f.Status)), Value: v, DefValue: f.Default}
		if f.Bool {
			flag.NoOptDefVal = "true"
		}
		flag.Hidden = true
		fl.AddFlag(flag)
	}
}

// acceptedValue holds an ingress-nginx flag Causeway accepts without a
// flag of its own: any value, kept to be reported.
type acceptedValue struct {
	bool  bool
	value string
}

func (a *acceptedValue) String() string { return a.value }
func (a *acceptedValue) Set(v string) error {
	a.value = v
	return nil
}
func (a *acceptedValue) Type() string {
	if a.bool {
		return "bool"
	}
	return "string"
}

// ingressNginxFlag is an ingress-nginx flag given on the command line and
// what the controller makes of it.
type ingressNginxFlag struct {
	nginxflags.Flag
	value string
	// level is how it is logged; ignored says it has no effect.
	level   slog.Level
	ignored bool
}

// givenIngressNginxFlags are the flags of the table that the command
// line set, other than those Causeway takes as ingress-nginx does under
// ingress-nginx's name: the ones worth a line at start.
func givenIngressNginxFlags(fl *pflag.FlagSet) []ingressNginxFlag {
	var out []ingressNginxFlag
	for _, f := range nginxflags.All() {
		flag := fl.Lookup(f.Name)
		if flag == nil || !flag.Changed {
			continue
		}
		g := ingressNginxFlag{Flag: f, value: flag.Value.String(), level: slog.LevelInfo}
		switch f.Status {
		case nginxflags.Supported:
			if f.Causeway == f.Name {
				continue
			}
		case nginxflags.NotApplicable:
			g.ignored = true
		case nginxflags.Unsupported:
			g.ignored = true
			if !f.IsHarmless(g.value) {
				g.level = slog.LevelWarn
			}
		}
		out = append(out, g)
	}
	return out
}

// reportIngressNginxFlags logs, once at start, each ingress-nginx flag
// given that Causeway takes under another name, takes with a difference,
// or ignores, and counts the ignored ones in causeway_ignored_flags.
func reportIngressNginxFlags(fl *pflag.FlagSet, log *slog.Logger, reg prometheus.Registerer) {
	ignored := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "causeway_ignored_flags",
		Help: "1 for each ingress-nginx flag given that the controller ignores, by flag and status (not-applicable, unsupported); docs/migrating-from-ingress-nginx.md says what to use instead.",
	}, []string{"flag", "status"})
	reg.MustRegister(ignored)
	for _, g := range givenIngressNginxFlags(fl) {
		name := "--" + g.Name
		switch {
		case g.Status == nginxflags.Supported:
			log.Info("ingress-nginx flag taken", "flag", name, "value", g.value, "as", "--"+g.Causeway)
		case g.Status == nginxflags.SupportedWithDifference:
			log.Info("ingress-nginx flag taken with a difference", "flag", name, "value", g.value, "difference", g.Difference)
		case g.level == slog.LevelWarn:
			ignored.WithLabelValues(name, string(g.Status)).Set(1)
			log.Warn("ingress-nginx flag not supported: ignored", "flag", name, "value", g.value, "instead", g.Instead)
		default:
			ignored.WithLabelValues(name, string(g.Status)).Set(1)
			log.Info("ingress-nginx flag ignored", "flag", name, "value", g.value, "status", string(g.Status), "instead", g.Instead)
		}
	}
}

// unknownFlagError explains a flag neither Causeway nor ingress-nginx
// has, with the closest known name; other flag errors pass unchanged.
func unknownFlagError(cmd *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	var known []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) { known = append(known, f.Name) })
	slices.Sort(known)
	msg := fmt.Sprintf("unknown flag --%s: neither Causeway nor ingress-nginx has it", name)
	if s := migrate.Closest(name, known); s != "" {
		msg += fmt.Sprintf(" (did you mean --%s?)", s)
	}
	return errors.New(msg + "; `causeway " + cmd.Name() + " --help` lists Causeway's flags and " + flagsDoc + " ingress-nginx's")
}

// resolve applies the flags that stand for several others: ingress-nginx's
// --healthz-port (both status ports), --election-ttl (the three leader
// election timings) and --v (the log level). Giving one with a flag it
// stands for is refused rather than settled silently.
func (f *controllerFlags) resolve(fl *pflag.FlagSet) error {
	excludes := func(flag string, others ...string) error {
		for _, o := range others {
			if fl.Changed(o) {
				return fmt.Errorf("--%s sets --%s; give one or the other", flag, strings.Join(others, ", --"))
			}
		}
		return nil
	}
	if fl.Changed("healthz-port") {
		if err := excludes("healthz-port", "health-port", "metrics-port"); err != nil {
			return err
		}
		f.healthPort, f.metricsPort = f.healthzPort, f.healthzPort
	}
	if k := &f.kube; fl.Changed("election-ttl") {
		if err := excludes("election-ttl", "leader-election-lease-duration", "leader-election-renew-deadline", "leader-election-retry-period"); err != nil {
			return err
		}
		if k.electionTTL <= 0 {
			return fmt.Errorf("--election-ttl %s must be positive", k.electionTTL)
		}
		k.leaseDuration, k.renewDeadline, k.retryPeriod = k.electionTTL, k.electionTTL/2, k.electionTTL/4
	}
	if fl.Changed("v") && !fl.Changed("log-level") && f.verbosity >= 3 {
		f.logLevel = "debug"
	}
	return nil
}
