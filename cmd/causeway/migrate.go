package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/migrate"
	"github.com/causeway/causeway/internal/version"
)

func init() { extraCommands = append(extraCommands, newMigrateCommand) }

// Exit statuses of `causeway migrate check`.
const (
	exitReady     = 0 // nothing needs attention
	exitAttention = 1 // something needs attention before migrating
	exitUsage     = 2 // a wrong command line, or objects that could not be read
)

// exit ends the process; tests replace it.
var exit = os.Exit

// migrateRequestTimeout bounds each API request of the cluster check.
const migrateRequestTimeout = 30 * time.Second

// newMigrateClient builds the API client for the cluster check; tests
// replace it with a fake.
var newMigrateClient = defaultMigrateClient

// defaultMigrateClient loads the kubeconfig as kubectl does: the file
// given, else $KUBECONFIG or ~/.kube/config, else in-cluster
// configuration; context "" means the current context.
func defaultMigrateClient(kubeconfig, context string) (kubernetes.Interface, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubernetes client config: %w", err)
	}
	cfg.UserAgent = "causeway-migrate/" + version.Version
	cfg.Timeout = migrateRequestTimeout
	return kubernetes.NewForConfig(cfg)
}

func newMigrateCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Help move Ingresses from ingress-nginx to Causeway",
	}
	cmd.AddCommand(newMigrateCheckCommand(), newMigrateToGatewayCommand())
	return cmd
}

// migrateSource are the flags that say where `causeway migrate`'s
// subcommands read Ingresses and the ConfigMap from.
type migrateSource struct {
	kubeconfig, context string
	annotationsPrefix   string
	configMap           string
}

// register adds the source flags to fl.
func (s *migrateSource) register(fl *pflag.FlagSet) {
	fl.StringVar(&s.kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG or ~/.kube/config, else in-cluster); only without DIR")
	fl.StringVar(&s.context, "context", "", "kubeconfig context to use (default the current one); only without DIR")
	fl.StringVar(&s.annotationsPrefix, "annotations-prefix", annotations.DefaultPrefix, "prefix of the ingress-nginx annotations, as given to ingress-nginx's --annotations-prefix")
	fl.StringVar(&s.configMap, "configmap", "", "NAMESPACE/NAME of the ingress-nginx controller's ConfigMap (default every ConfigMap named "+migrate.DefaultConfigMapName+")")
}

// migrateCheckFlags are the flags of `causeway migrate check`.
type migrateCheckFlags struct {
	migrateSource
	output string
}

func newMigrateCheckCommand() *cobra.Command {
	f := &migrateCheckFlags{}
	cmd := &cobra.Command{
		Use:   "check [DIR]",
		Short: "Report what Causeway makes of your ingress-nginx Ingresses, ConfigMap and controller flags",
		Long: `Check Ingresses, the ingress-nginx controller's ConfigMap and its flags
against what Causeway supports, and give every annotation, ConfigMap key
and flag a verdict: supported, supported-with-difference, unsupported,
fail-closed (the paths answer 503), fail-open (a global protection that is
ignored), not-applicable, unknown or invalid.

With DIR, the manifests below it are read (*.yaml, *.yml and *.json,
recursively, several documents a file); DIR may also be one file. Without
it, the Ingresses, the ConfigMap, and the Deployments and DaemonSets (for
the controller's flags) are listed from the cluster of the current
kubeconfig context; nothing is written.

The ConfigMap checked is --configmap, or else every ConfigMap named
ingress-nginx-controller.

Exit status: 0 when ready to migrate, 1 when something needs attention,
2 on a usage error or when objects could not be read.

See docs/migrating-from-ingress-nginx.md.`,
		Example: `  causeway migrate check ./manifests
  causeway migrate check --context prod --configmap ingress-nginx/ingress-nginx-controller
  causeway migrate check ./manifests -o json`,
		Args: cobra.ArbitraryArgs, // checked in run, for the exit status
		Run: func(cmd *cobra.Command, args []string) {
			if code := f.run(cmd.Context(), args, cmd.OutOrStdout(), cmd.ErrOrStderr()); code != exitReady {
				exit(code)
			}
		},
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		usageError(c.ErrOrStderr(), err)
		exit(exitUsage)
		return err
	})
	fl := cmd.Flags()
	f.register(fl)
	fl.StringVarP(&f.output, "output", "o", "text", "output format: text or json")
	return cmd
}

func usageError(w io.Writer, err error) { commandUsageError(w, "check", err) }

// commandUsageError reports a usage error of `causeway migrate sub`.
func commandUsageError(w io.Writer, sub string, err error) {
	fmt.Fprintf(w, "causeway migrate %s: %v\nRun 'causeway migrate %s --help' for usage.\n", sub, err, sub)
}

// options checks the flags and arguments and returns the check's options.
func (f *migrateCheckFlags) options(args []string) (migrate.Options, error) {
	opts, err := f.migrateSource.options(args)
	if err == nil && f.output != "text" && f.output != "json" {
		err = fmt.Errorf("-o %q: want text or json", f.output)
	}
	return opts, err
}

// options checks the source flags and arguments.
func (f *migrateSource) options(args []string) (migrate.Options, error) {
	var opts migrate.Options
	switch {
	case len(args) > 1:
		return opts, fmt.Errorf("want at most one DIR, got %d arguments", len(args))
	case len(args) == 1 && (f.kubeconfig != "" || f.context != ""):
		return opts, fmt.Errorf("--kubeconfig and --context read from a cluster; they do not go with DIR")
	}
	if errs := validation.IsDNS1123Subdomain(f.annotationsPrefix); len(errs) > 0 {
		return opts, fmt.Errorf("--annotations-prefix %q: %s", f.annotationsPrefix, strings.Join(errs, "; "))
	}
	opts.AnnotationsPrefix = f.annotationsPrefix
	if f.configMap != "" {
		ns, name, ok := strings.Cut(f.configMap, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			return opts, fmt.Errorf("--configmap %q: want NAMESPACE/NAME", f.configMap)
		}
		opts.ConfigMapNamespace, opts.ConfigMapName = ns, name
	}
	return opts, nil
}

// run performs the check and returns the exit status.
func (f *migrateCheckFlags) run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, err := f.options(args)
	if err != nil {
		usageError(stderr, err)
		return exitUsage
	}
	objs, err := f.read(ctx, args, opts)
	if err != nil {
		fmt.Fprintf(stderr, "causeway migrate check: %v\n", err)
		return exitUsage
	}

	report := migrate.Check(objs, opts)
	if f.output == "json" {
		err = migrate.WriteJSON(stdout, report)
	} else {
		err = migrate.WriteText(stdout, report)
	}
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "causeway migrate check: %v\n", err)
		return exitUsage
	case len(report.ReadProblems) > 0:
		fmt.Fprintf(stderr, "causeway migrate check: %d manifests could not be read; the report does not cover them\n", len(report.ReadProblems))
		return exitUsage
	case !report.Ready:
		return exitAttention
	}
	return exitReady
}

// read reads the objects from DIR, or from the cluster without it.
func (f *migrateSource) read(ctx context.Context, args []string, opts migrate.Options) (migrate.Objects, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if len(args) == 1 {
		return migrate.FromDir(args[0])
	}
	client, err := newMigrateClient(f.kubeconfig, f.context)
	if err != nil {
		return migrate.Objects{}, err
	}
	return migrate.FromCluster(ctx, client, opts)
}
