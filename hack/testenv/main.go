// Command testenv runs the end-to-end test control plane (etcd and
// kube-apiserver from test/testenv) in the foreground for manual work:
// `make testenv`, then point kubectl or `causeway controller` at the printed
// kubeconfig. Ctrl-C stops everything and removes its state.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/causeway/causeway/test/testenv"
)

// stringList collects a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		kubeconfigCopy string
		extraArgs      stringList
	)
	flag.StringVar(&kubeconfigCopy, "kubeconfig", "", "also write the admin kubeconfig to this stable path (removed on exit)")
	flag.Var(&extraArgs, "apiserver-arg", "extra kube-apiserver flag, e.g. --apiserver-arg=--v=4 (repeatable)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	fmt.Println("testenv: starting etcd and kube-apiserver ...")
	env, err := testenv.Start(ctx, testenv.Options{ExtraAPIServerArgs: extraArgs})
	if err != nil {
		return err
	}

	kubeconfig := env.AdminKubeconfig
	if kubeconfigCopy != "" {
		if err := copyKubeconfig(env.AdminKubeconfig, kubeconfigCopy); err != nil {
			return fmt.Errorf("%w (stop: %v)", err, env.Stop())
		}
		defer os.Remove(kubeconfigCopy)
		kubeconfig = kubeconfigCopy
	}

	fmt.Printf(`testenv: ready
  API server:  %s
  etcd:        %s
  kubeconfig:  %s   (admin, group system:masters)
  state, logs: %s   (etcd.log, kube-apiserver.log)

Try:
  kubectl --kubeconfig %s get ns
  go run ./cmd/causeway controller --kubeconfig %s

Press Ctrl-C to stop.
`, env.APIServerURL(), env.EtcdURL(), kubeconfig, env.Dir, kubeconfig, kubeconfig)

	<-ctx.Done()
	fmt.Println("\ntestenv: stopping ...")
	if err := env.Stop(); err != nil {
		return err
	}
	fmt.Println("testenv: stopped")
	return nil
}

func copyKubeconfig(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return fmt.Errorf("read admin kubeconfig: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return fmt.Errorf("create kubeconfig dir: %w", err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		return fmt.Errorf("write kubeconfig copy: %w", err)
	}
	return nil
}
