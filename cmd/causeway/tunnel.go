package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/causeway/causeway/internal/tunnel/agent"
	"github.com/causeway/causeway/internal/tunnel/certs"
	"github.com/causeway/causeway/internal/tunnel/iptables"
	"github.com/causeway/causeway/internal/tunnel/metrics"
	"github.com/causeway/causeway/internal/tunnel/server"
	"github.com/causeway/causeway/internal/tunnel/wire"
)

func init() { extraCommands = append(extraCommands, newTunnelCommand) }

func newTunnelCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "tunnel",
		Short: "Reverse tunnel from the cloud to edge nodes behind NAT",
	}
	c.AddCommand(newTunnelServerCommand(), newTunnelAgentCommand(), newTunnelIptablesCommand())
	return c
}

// commonFlags are shared by server and agent.
type commonFlags struct {
	logLevel          string
	healthAddr        string
	keepAliveInterval time.Duration
	keepAliveTimeout  time.Duration
	dialTimeout       time.Duration
	certs             certFlags // in tunnel_certs.go
}

func (f *commonFlags) add(c *cobra.Command, side, healthDefault string) {
	f.certs.add(c, side)
	fs := c.Flags()
	fs.StringVar(&f.logLevel, "log-level", "info", "Log level: debug, info, warn or error.")
	fs.StringVar(&f.healthAddr, "health-bind-address", healthDefault, "Address serving /metrics, /healthz and /readyz; empty disables.")
	fs.DurationVar(&f.keepAliveInterval, "keepalive-interval", 5*time.Second, "How often each side of a link pings the other.")
	fs.DurationVar(&f.keepAliveTimeout, "keepalive-timeout", 5*time.Second, "How long a ping may go unanswered before the link is closed.")
	fs.DurationVar(&f.dialTimeout, "dial-timeout", 10*time.Second, "Timeout of an agent's dial of a destination.")
}

func (f *commonFlags) logger() (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl})), nil
}

func (f *commonFlags) transport() wire.TransportConfig {
	t := wire.DefaultTransportConfig()
	t.KeepAliveInterval, t.KeepAliveTimeout = f.keepAliveInterval, f.keepAliveTimeout
	return t
}

// serveHealth serves metrics and probes; errors end the process's context.
func serveHealth(ctx context.Context, addr string, reg *prometheus.Registry, ready func() bool, errc chan<- error) {
	if addr == "" {
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		errc <- fmt.Errorf("health listener: %w", err)
		return
	}
	hs := &http.Server{Handler: metrics.Handler(reg, ready), ReadHeaderTimeout: 5 * time.Second}
	go func() { <-ctx.Done(); hs.Close() }()
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- err
		}
	}()
}

func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
}

func newTunnelServerCommand() *cobra.Command {
	var (
		cf                                  commonFlags
		serverID                            string
		serverCount                         int
		agentAddr, agentCA                  string
		connectAddr, connectCA, connectUDS  string
		konnUDS                             string
		transparentAddr                     string
		compression, transparentCompression string
		useIptables                         bool
		iptPorts, iptTarget, iptChain       string
		iptResync                           time.Duration
		iptStatic                           []string
		kubeconfig                          string
		authorizeNodes, insecureAnyAddress  bool
		routeAllow                          []string
		lf                                  leaseFlags
	)
	host, _ := os.Hostname()
	c := &cobra.Command{
		Use:   "server",
		Short: "Run a tunnel server replica: accept agents, forward frontend connections through them",
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := cf.logger()
			if err != nil {
				return err
			}
			mode, err := wire.ParseCompression(compression)
			if err != nil {
				return fmt.Errorf("--compression: %w", err)
			}
			tmode, err := wire.ParseCompression(transparentCompression)
			if err != nil {
				return fmt.Errorf("--transparent-compression: %w", err)
			}
			if agentCA == "" {
				return errors.New("--agent-ca-file is required")
			}
			// Before anything listens: a flag without the one it needs
			// must not leave a server running that ignores it.
			if useIptables && transparentAddr == "" {
				return errors.New("--iptables needs --transparent-bind-address")
			}
			if len(iptStatic) > 0 && !useIptables {
				return errors.New("--iptables-cidr needs --iptables")
			}
			ctx, cancel := signalContext()
			defer cancel()
			errc := make(chan error, 8)
			reg := newRegistry()
			var ready metrics.Flag
			// Probes answer while a certificate request awaits approval.
			serveHealth(ctx, cf.healthAddr, reg, ready.Get, errc)
			kp, waitCert, err := cf.certs.source(ctx, log, reg, serverID)
			if err != nil {
				return err
			}
			agentPool, err := certs.LoadPool(agentCA)
			if err != nil {
				return err
			}
			policy := server.Policy{InsecureAcceptAnyNodeAddress: insecureAnyAddress}
			for _, s := range routeAllow {
				r, err := server.ParseRouteRule(s)
				if err != nil {
					return fmt.Errorf("--route-allow: %w", err)
				}
				policy.Routes = append(policy.Routes, r)
			}
			switch {
			case insecureAnyAddress:
				log.Warn("INSECURE: --insecure-accept-any-node-address is set: any agent may claim ANY node IP and host name, " +
					"including other nodes' addresses, 169.254.169.254 and kubernetes.default.svc, and receive their traffic")
			case authorizeNodes:
				nodes, err := nodeGetter(kubeconfig, cmd.Flags().Changed("authorize-node-addresses"))
				if err != nil {
					return err
				}
				if nodes == nil {
					log.Info("no Kubernetes API (no --kubeconfig, not in a cluster): agents may claim only their certificate's SANs and --route-allow grants")
				} else {
					policy.Nodes = nodes
				}
			}
			srv, err := server.New(server.Config{
				Authorizer: policy,
				ServerID:   serverID, ServerCount: serverCount, TLS: certs.ServerConfig(kp, agentPool),
				Transport: cf.transport(), DialTimeout: cf.dialTimeout, Logger: log,
				Metrics: metrics.New(reg, "server"),
			})
			if err != nil {
				return err
			}
			if err := waitCert(ctx); err != nil || ctx.Err() != nil {
				return err
			}
			leasesDone, err := lf.start(ctx, log, kubeconfig, serverID, srv.SetServerCount)
			if err != nil {
				return err
			}
			defer func() { cancel(); <-leasesDone }() // the Lease is released before exit

			aln, err := net.Listen("tcp", agentAddr)
			if err != nil {
				return fmt.Errorf("agent listener: %w", err)
			}
			go func() { errc <- srv.ServeAgents(ctx, aln) }()
			if connectAddr != "" {
				if connectCA == "" {
					return errors.New("--connect-bind-address needs --connect-client-ca-file (mutual TLS)")
				}
				pool, err := certs.LoadPool(connectCA)
				if err != nil {
					return err
				}
				ln, err := tls.Listen("tcp", connectAddr, certs.ServerConfig(kp, pool))
				if err != nil {
					return fmt.Errorf("CONNECT listener: %w", err)
				}
				go func() {
					errc <- server.ServeConnect(ctx, ln, &server.ConnectFrontend{Server: srv, Name: "connect-tcp", Compression: mode})
				}()
			}
			if connectUDS != "" {
				os.Remove(connectUDS)
				ln, err := net.Listen("unix", connectUDS)
				if err != nil {
					return fmt.Errorf("CONNECT socket: %w", err)
				}
				go func() {
					errc <- server.ServeConnect(ctx, ln, &server.ConnectFrontend{Server: srv, Name: "connect-uds", Compression: mode})
				}()
			}
			if konnUDS != "" {
				go func() {
					errc <- server.ServeKonnectivity(ctx, konnUDS, &server.KonnectivityFrontend{Server: srv, Compression: mode})
				}()
			}
			if transparentAddr != "" {
				ln, err := net.Listen("tcp", transparentAddr)
				if err != nil {
					return fmt.Errorf("transparent listener: %w", err)
				}
				go func() {
					errc <- server.ServeTransparent(ctx, ln, &server.TransparentFrontend{Server: srv, Compression: tmode})
				}()
				if useIptables {
					target := iptTarget
					if target == "" {
						target = ln.Addr().String()
					}
					ap, err := netip.ParseAddrPort(target)
					if err != nil {
						return fmt.Errorf("--iptables-dnat-address: %w", err)
					}
					ports, all, err := iptables.ParsePorts(iptPorts)
					if err != nil {
						return fmt.Errorf("--iptables-ports: %w", err)
					}
					static, err := parsePrefixes(iptStatic)
					if err != nil {
						return fmt.Errorf("--iptables-cidr: %w", err)
					}
					m, err := iptables.New(iptables.Config{Chain: iptChain, Ports: ports, AllPorts: all, Static: static, Target: ap})
					if err != nil {
						return err
					}
					done := make(chan struct{})
					go func() {
						defer close(done)
						if err := m.Run(ctx, srv, iptResync, func(err error) { log.Error("iptables sync", "err", err) }); err != nil {
							log.Error("iptables cleanup", "err", err)
						}
					}()
					defer func() { <-done }() // rules are removed before exit
				}
			}
			ready.Set(true)
			log.Info("tunnel server running", "serverID", serverID, "serverCount", serverCount, "agents", aln.Addr().String())
			select {
			case <-ctx.Done():
				log.Info("shutting down")
				return nil
			case err := <-errc:
				cancel()
				return err
			}
		},
	}
	cf.add(c, "server", ":8133")
	lf.add(c)
	fs := c.Flags()
	fs.StringVar(&serverID, "server-id", host, "This replica's ID, unique among replicas.")
	fs.IntVar(&serverCount, "server-count", 1, "Number of replicas behind the agent address.")
	fs.StringVar(&agentAddr, "agent-bind-address", ":8132", "Address agents connect to (mutual TLS).")
	fs.StringVar(&agentCA, "agent-ca-file", "", "CA bundle that signs agent client certificates.")
	fs.StringVar(&connectAddr, "connect-bind-address", "", "TCP address of the HTTP CONNECT frontend (mutual TLS); empty disables.")
	fs.StringVar(&connectCA, "connect-client-ca-file", "", "CA bundle that signs CONNECT client certificates.")
	fs.StringVar(&connectUDS, "connect-uds-path", "", "Unix socket of the HTTP CONNECT frontend; empty disables.")
	fs.StringVar(&konnUDS, "konnectivity-uds-path", "", "Unix socket of the Konnectivity-compatible gRPC frontend; empty disables.")
	fs.StringVar(&transparentAddr, "transparent-bind-address", "", "Address of the transparent listener for DNAT'd connections; empty disables.")
	fs.StringVar(&compression, "compression", "none", "Compression for CONNECT and Konnectivity connections: none, gzip or zstd (a CONNECT client may ask for its own).")
	fs.StringVar(&transparentCompression, "transparent-compression", "none", "Compression for transparent connections: none, gzip or zstd.")
	fs.BoolVar(&useIptables, "iptables", false, "Manage nat OUTPUT rules that DNAT tunneled destinations to the transparent listener.")
	fs.StringVar(&iptPorts, "iptables-ports", "10250,10255", "Destination ports redirected for tunneled addresses, or \"all\" (every TCP port: Ingress traffic to edge Pods).")
	fs.StringSliceVar(&iptStatic, "iptables-cidr", nil, "IPv4 CIDRs (repeatable) redirected whether an agent owns them or not, such as the edge Pod network: while no agent does, connections to them are reset at once instead of timing out.")
	fs.StringVar(&iptTarget, "iptables-dnat-address", "", "DNAT target ip:port; defaults to --transparent-bind-address.")
	fs.StringVar(&iptChain, "iptables-chain", iptables.DefaultChain, "nat chain owned by the manager.")
	fs.DurationVar(&iptResync, "iptables-resync-period", 30*time.Second, "How often rules are checked and repaired.")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "Kubeconfig for --authorize-node-addresses and --server-count-from-leases; empty means in-cluster.")
	fs.BoolVar(&authorizeNodes, "authorize-node-addresses", true, "Also accept node IPs and host names that the agent's Node lists in status.addresses in the API (needs get on nodes). Left at its default without an API, only certificate SANs and --route-allow grants are accepted.")
	fs.BoolVar(&insecureAnyAddress, "insecure-accept-any-node-address", false, "INSECURE: accept any node IP and host name an agent claims, so one node can take another's traffic. For migration only.")
	fs.StringArrayVar(&routeAllow, "route-allow", nil, "NODES=ROUTE[,ROUTE...] (repeatable): agents of nodes matching the pattern (*, ?, [...]) may claim CIDRs inside the rule's CIDRs (or IPs) and node IPs inside them, host names matching host:PATTERN, and the default route with 'default'. Without a rule, CIDR and default-route claims are refused.")
	return c
}

func newTunnelAgentCommand() *cobra.Command {
	var (
		cf                                 commonFlags
		serverAddr, serverName, caFile     string
		nodeName                           string
		nodeIPs, cidrs, hostNames, allow   []string
		defaultRoute                       bool
		compression                        []string
		minBackoff, maxBackoff, drainAfter time.Duration
	)
	host, _ := os.Hostname()
	c := &cobra.Command{
		Use:   "agent",
		Short: "Run a tunnel agent on an edge node: dial the servers, serve their dials",
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := cf.logger()
			if err != nil {
				return err
			}
			if serverAddr == "" || caFile == "" {
				return errors.New("--server and --ca-file are required")
			}
			ctx, cancel := signalContext()
			defer cancel()
			reg := newRegistry()
			kp, waitCert, err := cf.certs.source(ctx, log, reg, nodeName)
			if err != nil {
				return err
			}
			roots, err := certs.LoadPool(caFile)
			if err != nil {
				return err
			}
			if serverName == "" {
				serverName, _, _ = net.SplitHostPort(serverAddr)
			}
			cfg := agent.Config{
				ServerAddress: serverAddr, TLS: certs.ClientConfig(kp, roots, serverName),
				NodeName: nodeName, HostNames: hostNames, DefaultRoute: defaultRoute,
				Transport: cf.transport(), MinBackoff: minBackoff, MaxBackoff: maxBackoff,
				DialTimeout: cf.dialTimeout, DrainTimeout: drainAfter, Logger: log,
			}
			if len(cfg.HostNames) == 0 {
				cfg.HostNames = []string{nodeName}
			}
			for _, s := range nodeIPs {
				ip, err := netip.ParseAddr(s)
				if err != nil {
					return fmt.Errorf("--node-ip: %w", err)
				}
				cfg.NodeIPs = append(cfg.NodeIPs, ip)
			}
			if cfg.CIDRs, err = parsePrefixes(cidrs); err != nil {
				return fmt.Errorf("--cidr: %w", err)
			}
			for _, s := range allow {
				p, err := parsePrefixOrAddr(s)
				if err != nil {
					return fmt.Errorf("--allow: %w", err)
				}
				cfg.Allow = append(cfg.Allow, p)
			}
			for _, s := range compression {
				m, err := wire.ParseCompression(s)
				if err != nil {
					return fmt.Errorf("--compression: %w", err)
				}
				cfg.Compression = append(cfg.Compression, m)
			}
			cfg.Metrics = metrics.New(reg, "agent")
			a, err := agent.New(cfg)
			if err != nil {
				return err
			}
			errc := make(chan error, 2)
			serveHealth(ctx, cf.healthAddr, reg, a.Ready, errc)
			if err := waitCert(ctx); err != nil || ctx.Err() != nil {
				return err
			}
			go func() { errc <- a.Run(ctx) }()
			log.Info("tunnel agent running", "node", nodeName, "server", serverAddr)
			select {
			case err := <-errc: // Run returns after ctx ends and the drain
				return err
			case <-ctx.Done():
				return <-errc
			}
		},
	}
	cf.add(c, "agent", ":8134")
	fs := c.Flags()
	fs.StringVar(&serverAddr, "server", "", "host:port of the tunnel server replicas (usually a load balancer).")
	fs.StringVar(&serverName, "server-name", "", "Name to verify in the server certificate; defaults to the host of --server.")
	fs.StringVar(&caFile, "ca-file", "", "CA bundle that signs the server certificate.")
	fs.StringVar(&nodeName, "node-name", host, "This node's name; must match the certificate's CN system:node:<name>.")
	fs.StringSliceVar(&nodeIPs, "node-ip", nil, "This node's IP addresses (repeatable); servers accept those in the certificate's IP SANs, the Node's status.addresses or a --route-allow rule.")
	fs.StringSliceVar(&cidrs, "cidr", nil, "CIDRs this agent can reach (repeatable).")
	fs.StringSliceVar(&hostNames, "hostname", nil, "Host names this agent answers for; defaults to the node name.")
	fs.BoolVar(&defaultRoute, "default-route", false, "Carry destinations no agent owns.")
	fs.StringSliceVar(&allow, "allow", nil, "IPs or CIDRs the agent may dial; defaults to --node-ip plus --cidr.")
	fs.StringSliceVar(&compression, "compression", []string{"zstd", "gzip", "none"}, "Compression modes the agent accepts.")
	fs.DurationVar(&minBackoff, "reconnect-min-backoff", 100*time.Millisecond, "First delay between connection attempts.")
	fs.DurationVar(&maxBackoff, "reconnect-max-backoff", time.Second, "Largest delay between connection attempts (jittered).")
	fs.DurationVar(&drainAfter, "drain-timeout", 30*time.Second, "On shutdown, how long open connections may finish.")
	return c
}

// nodeGetter reads Nodes through --kubeconfig or the in-cluster config. Out
// of a cluster with no --kubeconfig it returns nil, unless the flag that
// asks for it was given explicitly.
func nodeGetter(kubeconfig string, explicit bool) (server.NodeGetter, error) {
	var rc *rest.Config
	var err error
	if kubeconfig != "" {
		rc, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		rc, err = rest.InClusterConfig()
		if errors.Is(err, rest.ErrNotInCluster) && !explicit {
			return nil, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("--authorize-node-addresses: kubeconfig: %w", err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return cs.CoreV1().Nodes(), nil
}

// parsePrefixes parses CIDRs and masks them.
func parsePrefixes(ss []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range ss {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

func parsePrefixOrAddr(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err
	}
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(ip, ip.BitLen()), nil
}
