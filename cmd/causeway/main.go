// Command causeway is the Causeway Ingress controller and edge tunnel.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/causeway/causeway/internal/version"
)

func main() {
	root := &cobra.Command{
		Use:           "causeway",
		Short:         "Kubernetes Ingress controller driving nginx, with an edge tunnel",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newVersionCommand())
	root.AddCommand(newControllerCommand())
	for _, c := range extraCommands {
		root.AddCommand(c())
	}
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "causeway:", err)
		os.Exit(1)
	}
}

// extraCommands lets other files of this package register subcommands
// (the tunnel) without editing main.
var extraCommands []func() *cobra.Command

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and commit",
		Run:   func(cmd *cobra.Command, _ []string) { printVersion(cmd) },
	}
}

func printVersion(cmd *cobra.Command) {
	fmt.Fprintf(cmd.OutOrStdout(), "causeway %s (commit %s)\n", version.Version, version.Commit)
}
