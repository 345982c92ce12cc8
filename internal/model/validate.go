package model

import (
	"encoding/pem"
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// The grammars below decide what may reach the nginx configuration. They
// are deliberately narrower than what the Kubernetes API accepts where the
// API is loose (paths), and equal to it elsewhere: the files source skips
// API-server validation, so nothing is assumed to be pre-validated.

// maxPathLen bounds a path; nginx handles longer, but no real route needs it.
const maxPathLen = 1024

// pathChars are the characters a path may hold: RFC 3986 unreserved
// characters, "/" and the sub-delimiters that carry no meaning to nginx's
// configuration parser. Quotes, backslashes, braces, ";", "#", "$", "%",
// "?", whitespace and control or non-ASCII characters are refused.
var pathChars = regexp.MustCompile(`^/[A-Za-z0-9._~!*()+,=:@&/-]*$`)

// ValidatePath checks an Exact or Prefix path.
func ValidatePath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("path must not be empty")
	case len(p) > maxPathLen:
		return fmt.Errorf("path is %d bytes long, more than %d", len(p), maxPathLen)
	case !pathChars.MatchString(p):
		return fmt.Errorf("path %q must start with / and hold only letters, digits and -._~!*()+,=:@&/", Truncate(p))
	case strings.Contains(p, "//"):
		return fmt.Errorf("path %q must not contain //", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("path %q must not contain . or .. segments", p)
		}
	}
	return nil
}

// ValidateHost checks an Ingress rule or TLS host: a lower-case DNS-1123
// subdomain, or "*." followed by one.
func ValidateHost(h string) error {
	var errs []string
	if strings.HasPrefix(h, "*.") {
		errs = validation.IsWildcardDNS1123Subdomain(h)
	} else {
		errs = validation.IsDNS1123Subdomain(h)
	}
	if len(errs) > 0 {
		return fmt.Errorf("host %q is invalid: %s", Truncate(h), strings.Join(errs, "; "))
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return fmt.Errorf("host %q must be a DNS name, not an IP address", h)
	}
	return nil
}

// ValidateObjectName checks a namespace or object name as the API would.
func ValidateObjectName(kind, name string) error {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("%s name %q is invalid: %s", kind, Truncate(name), strings.Join(errs, "; "))
	}
	return nil
}

// ValidateServiceName checks a Service name (a DNS-1035 label) .
func ValidateServiceName(name string) error {
	if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
		return fmt.Errorf("service name %q is invalid: %s", Truncate(name), strings.Join(errs, "; "))
	}
	return nil
}

// ValidatePortName checks an IANA service port name.
func ValidatePortName(name string) error {
	if errs := validation.IsValidPortName(name); len(errs) > 0 {
		return fmt.Errorf("port name %q is invalid: %s", Truncate(name), strings.Join(errs, "; "))
	}
	return nil
}

// Bounds on a TLS secret's certificate chain. The whole chain goes out in
// every full handshake's Certificate message, and clients refuse large
// ones: OpenSSL's default limit on a peer's certificate list is 100 KiB
// (SSL_CTX_set_max_cert_list), browsers and Go have similar caps. A chain
// nginx loads happily can so make every handshake fail. Real chains are a
// leaf and one to three intermediates of 1-2 KiB each.
const (
	MaxChainCerts = 10
	MaxChainPEM   = 64 << 10 // PEM is ~4/3 of DER: 64 KiB leaves room under 100 KiB
)

// CheckChainSize bounds the certificate chain of a kubernetes.io/tls
// secret before it is parsed.
func CheckChainSize(chain []byte) error {
	if len(chain) > MaxChainPEM {
		return fmt.Errorf("certificate chain is %d bytes of PEM, more than %d; clients would refuse the handshake", len(chain), MaxChainPEM)
	}
	n := 0
	for rest := chain; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type == "CERTIFICATE" {
			n++
		}
	}
	if n > MaxChainCerts {
		return fmt.Errorf("certificate chain holds %d certificates, more than %d", n, MaxChainCerts)
	}
	return nil
}

// Truncate shortens a hostile value for an error message.
func Truncate(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
