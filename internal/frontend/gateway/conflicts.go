package gateway

import (
	"fmt"
	"slices"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// checkConflicts marks the listeners that are not distinct
// (GatewaySpec.Listeners, "Distinct Listeners"): on one port, listeners of
// different protocols conflict (ProtocolConflict), and listeners of one
// protocol conflict when they also share a hostname (HTTP, HTTPS, TLS) or
// at all (TCP, UDP, told apart by port only): HostnameConflict. None of
// the indistinct listeners wins. Causeway serves HTTP, HTTPS and TLS over
// one TCP port only one way, so HTTPS and TLS on one port are a protocol
// conflict too (TLS listeners in modes Terminate and Passthrough share a
// port: the server name picks the mode); UDP shares a port number with
// the TCP protocols without conflict. Listeners already
// refused (unsupported protocol or value) take no part.
func checkConflicts(listeners []*Listener) {
	type portKey struct {
		udp  bool
		port gwv1.PortNumber
	}
	byPort := map[portKey][]*Listener{}
	var order []portKey
	for _, l := range listeners {
		if l.notAccepted.reason != "" {
			continue
		}
		k := portKey{l.Protocol == gwv1.UDPProtocolType, l.Port}
		if _, seen := byPort[k]; !seen {
			order = append(order, k)
		}
		byPort[k] = append(byPort[k], l)
	}
	for _, k := range order {
		group := byPort[k]
		if len(group) < 2 {
			continue
		}
		var protocols []string
		for _, l := range group {
			if p := protocolOf(l); !slices.Contains(protocols, p) {
				protocols = append(protocols, p)
			}
		}
		if len(protocols) > 1 {
			for _, l := range group {
				l.conflictWith(gwv1.ListenerReasonProtocolConflict,
					fmt.Sprintf("port %d is used by listeners of protocols %s: one port serves one protocol", k.port, listNames(protocols)))
			}
			continue
		}
		byHost := map[string][]*Listener{}
		for _, l := range group {
			byHost[l.Hostname] = append(byHost[l.Hostname], l)
		}
		for _, l := range group {
			same := byHost[l.Hostname]
			if len(same) < 2 {
				continue
			}
			var others []string
			for _, o := range same {
				if o != l {
					others = append(others, model.Truncate(string(o.Name)))
				}
			}
			what := fmt.Sprintf("hostname %q", l.Hostname)
			if l.Hostname == "" {
				what = "no hostname"
			}
			l.conflictWith(gwv1.ListenerReasonHostnameConflict,
				fmt.Sprintf("listeners %s also have port %d, protocol %s and %s", listNames(others), k.port, protocols[0], what))
		}
	}
}

// protocolOf is what must be equal for listeners to share a port: the
// protocol (TLS listeners of both modes share one).
func protocolOf(l *Listener) string {
	return string(l.Protocol)
}

func (l *Listener) conflictWith(reason gwv1.ListenerConditionReason, msg string) {
	l.Conflicted = true
	l.conflict.set(string(reason), msg)
}
