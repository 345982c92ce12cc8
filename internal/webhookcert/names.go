package webhookcert

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
)

// nameSet is what a serving certificate is valid for: DNS names and IP
// addresses, each de-duplicated and sorted.
type nameSet struct {
	DNS []string
	IPs []netip.Addr
}

func (n nameSet) empty() bool { return len(n.DNS) == 0 && len(n.IPs) == 0 }

func (n nameSet) equal(o nameSet) bool {
	return slices.Equal(n.DNS, o.DNS) && slices.Equal(n.IPs, o.IPs)
}

// netIPs converts the addresses for x509.Certificate.IPAddresses.
func (n nameSet) netIPs() []net.IP {
	out := make([]net.IP, 0, len(n.IPs))
	for _, a := range n.IPs {
		out = append(out, net.IP(a.AsSlice()))
	}
	return out
}

// String is for logs.
func (n nameSet) String() string {
	all := slices.Clone(n.DNS)
	for _, a := range n.IPs {
		all = append(all, a.String())
	}
	return strings.Join(all, ",")
}

// nameBuilder collects names, de-duplicating as it goes.
type nameBuilder struct {
	dns map[string]bool
	ips map[netip.Addr]bool
}

// add takes a host name or an IP address literal (IPv6 with or without
// brackets). It reports false for an empty host.
func (b *nameBuilder) add(host string) bool {
	host = strings.TrimSpace(host)
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if host == "" {
		return false
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if b.ips == nil {
			b.ips = map[netip.Addr]bool{}
		}
		// A zone means nothing to a certificate; an IPv4-mapped IPv6
		// address is the IPv4 address as far as a TLS client is concerned.
		b.ips[a.WithZone("").Unmap()] = true
		return true
	}
	if b.dns == nil {
		b.dns = map[string]bool{}
	}
	// DNS names compare without regard to case; keep one spelling.
	b.dns[strings.ToLower(strings.TrimSuffix(host, "."))] = true
	return true
}

func (b *nameBuilder) set() nameSet {
	var n nameSet
	for d := range b.dns {
		n.DNS = append(n.DNS, d)
	}
	for a := range b.ips {
		n.IPs = append(n.IPs, a)
	}
	slices.Sort(n.DNS)
	slices.SortFunc(n.IPs, netip.Addr.Compare)
	return n
}

// namesFor works out the names the serving certificate needs: for every
// webhook of cfg (which may be nil), the names the API server will dial,
// plus hosts. It also returns what it had to skip, for the log.
//
// A service reference is dialled as NAME.NAMESPACE.svc; the shorter and
// longer spellings are added too, for clients that use them (the cluster
// domain is assumed to be cluster.local; other domains go in hosts).
func namesFor(cfg *admissionv1.ValidatingWebhookConfiguration, hosts []string) (nameSet, []string) {
	var b nameBuilder
	var skipped []string
	if cfg != nil {
		for _, w := range cfg.Webhooks {
			cc := w.ClientConfig
			if s := cc.Service; s != nil && s.Name != "" && s.Namespace != "" {
				b.add(s.Name + "." + s.Namespace + ".svc")
				b.add(s.Name + "." + s.Namespace + ".svc.cluster.local")
				b.add(s.Name + "." + s.Namespace)
				b.add(s.Name)
			}
			if cc.URL != nil {
				u, err := url.Parse(*cc.URL)
				if err != nil || !b.add(u.Hostname()) {
					skipped = append(skipped, fmt.Sprintf("webhook %s: no host in url %q", w.Name, *cc.URL))
				}
			}
		}
	}
	for _, h := range hosts {
		b.add(h)
	}
	return b.set(), skipped
}
