// Command coredns is CoreDNS v1.12.2 (coremain, the upstream server) with
// only the plugins the Gateway API conformance suite's Corefile uses:
// errors, log, forward and whoami (conformance/base/manifests.yaml). The
// upstream binary compiles in every plugin, cloud DNS providers included,
// which took 18 minutes here; the Corefile runs unchanged either way, and
// CoreDNS refuses a Corefile naming a plugin it lacks, so a suite that
// starts using another one fails loudly (TestGatewayConformanceBackends).
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/whoami"
)

func init() {
	// The plugins' order in a server's chain, as upstream's plugin.cfg
	// orders them.
	dnsserver.Directives = []string{"errors", "log", "forward", "whoami"}
}

func main() { coremain.Run() }
