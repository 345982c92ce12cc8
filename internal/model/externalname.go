package model

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// maxDNSName is the longest DNS name, without its trailing dot.
const maxDNSName = 253

// ParseExternalName checks an ExternalName Service's spec.externalName: a
// lower-case DNS name of at most 253 bytes (and one trailing dot, kept:
// such a name is looked up as it is, never with a search domain),
// labels of letters, digits and '-' of 1 to 63 bytes not starting or
// ending with '-', as Kubernetes validates it; or an IPv4 address, which
// the name may also be. As ingress-nginx does, localhost (and names under
// .localhost) and loopback addresses are refused, so an Ingress cannot
// reach what listens on the node's loopback by name; unspecified,
// multicast and link-local addresses (a cloud's metadata service at
// 169.254.169.254) are refused too (UsableExternalAddr).
func ParseExternalName(s string) (string, error) {
	name := strings.TrimSuffix(s, ".")
	if name == "" || len(name) > maxDNSName {
		return "", fmt.Errorf("want a DNS name of 1 to %d bytes", maxDNSName)
	}
	if a, err := netip.ParseAddr(name); err == nil {
		if !a.Is4() {
			return "", errors.New("want a DNS name or an IPv4 address")
		}
		if why := UsableExternalAddr(a); why != "" {
			return "", fmt.Errorf("%s is %s", name, why)
		}
		if a.IsLoopback() {
			return "", fmt.Errorf("%s is a loopback address", name)
		}
		return name, nil
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return "", fmt.Errorf("label %q: want 1 to 63 letters, digits or '-', not starting or ending with '-'", Truncate(label))
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return "", fmt.Errorf("label %q holds %s: want lower-case letters, digits and '-'", Truncate(label), describeByte(c))
			}
		}
	}
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return "", errors.New("localhost names the node's own loopback")
	}
	return s, nil
}

// UsableExternalAddr says why an address, written as an ExternalName or
// resolved from one, is never used ("" when it may be): nginx cannot
// connect to an unspecified or multicast address, and a link-local one
// is a node's own (a cloud's metadata service).
func UsableExternalAddr(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case !a.IsValid():
		return "not an address"
	case a.IsUnspecified():
		return "an unspecified address"
	case a.IsMulticast():
		return "a multicast address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.Zone() != "":
		return "an address with a zone"
	}
	return ""
}
