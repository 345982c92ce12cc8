package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/causeway/causeway/internal/migrate"
	"github.com/causeway/causeway/internal/migrate/equivalence"
	"github.com/causeway/causeway/internal/migrate/togateway"
)

// Exit statuses of `causeway migrate to-gateway`: exitReady when every
// input converted as it was, exitAttention when a finding is not
// "converted" (or an Ingress was rejected), exitUnproven when the two
// models differ in a way no finding reports, exitUsage otherwise.

// exitUnproven: the conversion is not what its report says.
const exitUnproven = 3

// migrateToGatewayFlags are the flags of `causeway migrate to-gateway`.
type migrateToGatewayFlags struct {
	migrateSource
	gatewayClass, gatewayName, gatewayNamespace string
	ingressClasses                              []string
	withoutClass                                bool
	allowInsecure                               bool
	output, report, reportFormat                string
}

func newMigrateToGatewayCommand() *cobra.Command {
	f := &migrateToGatewayFlags{}
	cmd := &cobra.Command{
		Use:   "to-gateway [DIR]",
		Short: "Convert your ingress-nginx Ingresses into Gateway API objects, with a report of what cannot be expressed",
		Long: `Convert Ingresses written for ingress-nginx, with their annotations and the
controller's ConfigMap, into one Gateway, HTTPRoutes, GRPCRoutes,
TLSRoutes and ReferenceGrants, written as YAML. A report lists every annotation and
field read, per Ingress, with what became of it: converted, approximated,
not-converted, or refused.

Refused are the protections Gateway API cannot express (authentication,
source address lists): the routes of such an Ingress are not written,
since they would be open, unless --allow-insecure.

DIR and the cluster are read as by 'causeway migrate check'; nothing is
written to the cluster.

The conversion is then proven: Causeway builds its model from the
Ingresses and from the objects written, answers the same requests from
both, and the report says per Ingress "equivalent" or lists each
difference with the findings that report it; a difference no finding
reports is UNEXPECTED.

Exit status: 0 when every input converted as it was, 1 when a finding
needs reading (approximated, not-converted, refused, or an Ingress
Causeway rejects), 2 on a usage error or when objects could not be read,
3 when the models differ in a way no finding reports (a converter bug:
please report it).

See docs/migrating-from-ingress-nginx.md, "To Gateway API".`,
		Example: `  causeway migrate to-gateway ./manifests > gateway.yaml
  causeway migrate to-gateway --ingress-class nginx --gateway-namespace ingress -o gateway.yaml --report report.json --report-format json`,
		Args: cobra.ArbitraryArgs, // checked in run, for the exit status
		Run: func(cmd *cobra.Command, args []string) {
			if code := f.run(cmd.Context(), args, cmd.OutOrStdout(), cmd.ErrOrStderr()); code != exitReady {
				exit(code)
			}
		},
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		commandUsageError(c.ErrOrStderr(), "to-gateway", err)
		exit(exitUsage)
		return err
	})
	fl := cmd.Flags()
	f.register(fl)
	fl.StringVar(&f.gatewayClass, "gateway-class", togateway.DefaultGatewayClass, "gatewayClassName of the Gateway written")
	fl.StringVar(&f.gatewayName, "gateway-name", togateway.DefaultGatewayName, "name of the Gateway written")
	fl.StringVar(&f.gatewayNamespace, "gateway-namespace", togateway.DefaultGatewayNamespace, "namespace of the Gateway written")
	fl.StringArrayVar(&f.ingressClasses, "ingress-class", nil, "convert only the Ingresses of this class (repeat for several; default every Ingress)")
	fl.BoolVar(&f.withoutClass, "watch-ingress-without-class", false, "with --ingress-class, convert the Ingresses that name no class too")
	fl.BoolVar(&f.allowInsecure, "allow-insecure", false, "write the routes of Ingresses whose authentication or address lists cannot be converted (they will be open)")
	fl.StringVarP(&f.output, "output", "o", "-", "file to write the YAML to; - for standard output")
	fl.StringVar(&f.report, "report", "-", "file to write the report to; - for standard error")
	fl.StringVar(&f.reportFormat, "report-format", "text", "report format: text or json")
	return cmd
}

// options checks the flags and arguments.
func (f *migrateToGatewayFlags) options(args []string) (migrate.Options, togateway.Options, error) {
	src, err := f.migrateSource.options(args)
	if err != nil {
		return src, togateway.Options{}, err
	}
	if f.reportFormat != "text" && f.reportFormat != "json" {
		return src, togateway.Options{}, fmt.Errorf("--report-format %q: want text or json", f.reportFormat)
	}
	for _, n := range []struct{ flag, value string }{
		{"--gateway-class", f.gatewayClass}, {"--gateway-name", f.gatewayName}, {"--gateway-namespace", f.gatewayNamespace},
	} {
		check := validation.IsDNS1123Subdomain
		if n.flag == "--gateway-namespace" {
			check = validation.IsDNS1123Label
		}
		if errs := check(n.value); len(errs) > 0 {
			return src, togateway.Options{}, fmt.Errorf("%s %q: %s", n.flag, n.value, errs[0])
		}
	}
	if f.withoutClass && len(f.ingressClasses) == 0 {
		return src, togateway.Options{}, fmt.Errorf("--watch-ingress-without-class goes with --ingress-class (without it every Ingress is converted)")
	}
	return src, togateway.Options{
		AnnotationsPrefix: src.AnnotationsPrefix,
		GatewayClass:      f.gatewayClass, GatewayName: f.gatewayName, GatewayNamespace: f.gatewayNamespace,
		IngressClasses: f.ingressClasses, WithoutClass: f.withoutClass,
		AllowInsecure: f.allowInsecure,
	}, nil
}

// run converts and returns the exit status.
func (f *migrateToGatewayFlags) run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	src, opts, err := f.options(args)
	if err != nil {
		commandUsageError(stderr, "to-gateway", err)
		return exitUsage
	}
	objs, err := f.read(ctx, args, src)
	if err != nil {
		fmt.Fprintf(stderr, "causeway migrate to-gateway: %v\n", err)
		return exitUsage
	}
	if len(objs.ReadProblems) > 0 {
		for _, p := range objs.ReadProblems {
			fmt.Fprintf(stderr, "could not read %s: %s\n", p.Where, p.Message)
		}
		fmt.Fprintf(stderr, "causeway migrate to-gateway: %d manifests could not be read; nothing is written\n", len(objs.ReadProblems))
		return exitUsage
	}
	in := togateway.Input{
		Ingresses:  objs.Ingresses,
		ConfigMaps: objs.ConfigMaps,
		Controller: togateway.ControllerConfigMap(objs.ConfigMaps, src.ConfigMapNamespace, src.ConfigMapName, migrate.DefaultConfigMapName),
	}
	if len(args) == 0 {
		// From a cluster: get the ConfigMaps of headers too.
		cms, notes, err := f.headerConfigMaps(ctx, togateway.HeaderConfigMaps(in, src.AnnotationsPrefix))
		if err != nil {
			fmt.Fprintf(stderr, "causeway migrate to-gateway: %v\n", err)
			return exitUsage
		}
		in.ConfigMaps = append(in.ConfigMaps, cms...)
		objs.Notes = append(objs.Notes, notes...)
	}
	out, report := togateway.Convert(in, opts)
	equivalence.Check(in, opts, out, &report, nil)
	report.Notes = append(report.Notes, objs.Notes...)
	if src.ConfigMapName != "" && in.Controller == nil {
		report.Notes = append(report.Notes, "ConfigMap "+src.ConfigMapNamespace+"/"+src.ConfigMapName+" was not found: ingress-nginx's defaults were used")
	}

	if err := writeTo(f.output, stdout, func(w io.Writer) error { return togateway.WriteYAML(w, out) }); err != nil {
		fmt.Fprintf(stderr, "causeway migrate to-gateway: %v\n", err)
		return exitUsage
	}
	write := func(w io.Writer) error { return togateway.WriteText(w, report) }
	if f.reportFormat == "json" {
		write = func(w io.Writer) error { return togateway.WriteJSON(w, report) }
	}
	if err := writeTo(f.report, stderr, write); err != nil {
		fmt.Fprintf(stderr, "causeway migrate to-gateway: %v\n", err)
		return exitUsage
	}
	return toGatewayExit(report)
}

// toGatewayExit is the exit status a report asks for.
func toGatewayExit(r togateway.Report) int {
	switch {
	case r.Equivalence != nil && r.Equivalence.Unexpected > 0:
		return exitUnproven
	case !r.Exact:
		return exitAttention
	}
	return exitReady
}

// headerConfigMaps gets the ConfigMaps names ("namespace/name") from the
// cluster; one not found, or not readable, is a note.
func (f *migrateToGatewayFlags) headerConfigMaps(ctx context.Context, names []string) ([]*corev1.ConfigMap, []string, error) {
	if len(names) == 0 {
		return nil, nil, nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	client, err := newMigrateClient(f.kubeconfig, f.context)
	if err != nil {
		return nil, nil, err
	}
	var out []*corev1.ConfigMap
	var notes []string
	for _, n := range names {
		ns, name, _ := strings.Cut(n, "/")
		cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err) || apierrors.IsForbidden(err):
			notes = append(notes, "ConfigMap "+n+" of headers could not be read: "+err.Error())
		case err != nil:
			return nil, nil, fmt.Errorf("get ConfigMap %s: %w", n, err)
		default:
			out = append(out, cm)
		}
	}
	return out, notes, nil
}

// writeTo writes to the file path, or to std when path is "-".
func writeTo(path string, std io.Writer, write func(io.Writer) error) error {
	if path == "-" {
		return write(std)
	}
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(fh); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
