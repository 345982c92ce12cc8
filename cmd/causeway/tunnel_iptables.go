package main

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/spf13/cobra"

	"github.com/causeway/causeway/internal/tunnel/iptables"
)

// newTunnelIptablesCommand is `causeway tunnel iptables`: it writes the
// static rules of --iptables-cidr once and exits, for an init container
// that holds NET_ADMIN so that the tunnel server beside nginx needs no
// privilege (docs/tunnel.md, "Ingress traffic to edge Pods").
func newTunnelIptablesCommand() *cobra.Command {
	var (
		cidrs         []string
		target, chain string
		ports         string
		timeout       time.Duration
	)
	c := &cobra.Command{
		Use:   "iptables",
		Short: "Write the nat rules that send edge networks to a tunnel server's transparent listener, once",
		Long: `Writes, once, the chain of DNAT rules that sends TCP connections made in this
network namespace to the given CIDRs to the tunnel server's transparent listener,
and the jump to it from OUTPUT, then exits. It is what 'tunnel server --iptables
--iptables-cidr' keeps, without the rules for agents' own addresses; run it in an
init container with NET_ADMIN and the server needs no privilege. Running it again
with the same flags changes nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(cidrs) == 0 {
				return errors.New("--cidr: at least one CIDR is needed")
			}
			static, err := parsePrefixes(cidrs)
			if err != nil {
				return fmt.Errorf("--cidr: %w", err)
			}
			ap, err := netip.ParseAddrPort(target)
			if err != nil {
				return fmt.Errorf("--target: %w", err)
			}
			list, all, err := iptables.ParsePorts(ports)
			if err != nil {
				return fmt.Errorf("--ports: %w", err)
			}
			m, err := iptables.New(iptables.Config{Chain: chain, Ports: list, AllPorts: all, Static: static, Target: ap})
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			changed, err := m.Sync(ctx, nil, nil)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "chain %s: %d rules to %s (changed: %v)\n", chain, len(m.Rules(nil, nil)), ap, changed)
			return nil
		},
	}
	fs := c.Flags()
	fs.StringSliceVar(&cidrs, "cidr", nil, "IPv4 CIDRs (repeatable) whose TCP connections go to the transparent listener.")
	fs.StringVar(&target, "target", "127.0.0.1:10263", "The transparent listener's ip:port (the server's --transparent-bind-address).")
	fs.StringVar(&chain, "chain", iptables.DefaultChain, "nat chain to write (the server's --iptables-chain).")
	fs.StringVar(&ports, "ports", "all", "Destination ports redirected, comma-separated, or \"all\".")
	fs.DurationVar(&timeout, "timeout", 30*time.Second, "How long iptables may take.")
	return c
}
