package model

import (
	"encoding/asn1"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ObjectName is "namespace/name" of an object that a setting names.
type ObjectName struct{ Namespace, Name string }

func (n ObjectName) String() string { return n.Namespace + "/" + n.Name }

// Reference is an object that a setting of another object names. Each
// front-end lists what its objects name (ingress.References,
// configmap.References, nic.VirtualServerReferences ...): the kube source
// caches those it watches by name, the admission review looks them up, and
// the build resolves them. A Reference says what an object asks for, not
// what the build will accept: a name the setting's grammar refuses may be
// listed.
type Reference struct {
	// Kind is the referenced object's: KindSecret, KindConfigMap,
	// KindService, KindPolicy or KindVirtualServerRoute.
	Kind string
	ObjectName
	// From is what names it: an annotation key, a ConfigMap key, or a
	// field's path such as "spec.tls[0].secretName".
	From string
}

func (r Reference) String() string { return r.Kind + " " + r.ObjectName.String() + " (" + r.From + ")" }

// The kinds of objects a Reference names.
const (
	KindSecret             = "Secret"
	KindConfigMap          = "ConfigMap"
	KindService            = "Service"
	KindPolicy             = "Policy"
	KindVirtualServerRoute = "VirtualServerRoute"
)

// ParseObjectName parses exactly "namespace/name" of an object of kind:
// the namespace a DNS-1123 label and the name a DNS-1123 subdomain, as the
// API server requires. A bare name is refused: nothing says which
// namespace it would be in.
func ParseObjectName(kind, s string) (ObjectName, error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return ObjectName{}, fmt.Errorf("want namespace/name of a %s", kind)
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return ObjectName{}, fmt.Errorf("namespace %q is invalid: %s", Truncate(ns), strings.Join(errs, "; "))
	}
	if err := ValidateObjectName(kind, name); err != nil {
		return ObjectName{}, err
	}
	return ObjectName{Namespace: ns, Name: name}, nil
}

// Bounds on DH parameters. OpenSSL at Debian's default security level
// refuses a prime below 2048 bits, which would fail the whole
// configuration; above 8192 bits each handshake costs seconds.
const (
	minDHBits = 2048
	maxDHBits = 8192
)

// dhParameter is PKCS #3's DHParameter.
type dhParameter struct {
	P, G               *big.Int
	PrivateValueLength int `asn1:"optional"`
}

// ParseDHParams checks a dhparam.pem as `openssl dhparam` writes it: one
// PEM block "DH PARAMETERS" without headers, and nothing else but
// whitespace, holding a prime P of 2048 to 8192 bits and a generator G
// with 1 < G < P-1. It returns the block re-encoded, so that only what was
// checked reaches nginx.
func ParseDHParams(data []byte) ([]byte, error) {
	block, rest := pem.Decode(data)
	if block == nil {
		return nil, errors.New(`want a PEM block "DH PARAMETERS", such as openssl dhparam writes`)
	}
	if block.Type != "DH PARAMETERS" {
		return nil, fmt.Errorf(`want a PEM block "DH PARAMETERS", not %q`, Truncate(block.Type))
	}
	if len(block.Headers) > 0 {
		return nil, errors.New("want a PEM block without headers")
	}
	if strings.TrimSpace(string(rest)) != "" {
		return nil, errors.New("want one PEM block and nothing after it")
	}
	var p dhParameter
	tail, err := asn1.Unmarshal(block.Bytes, &p)
	if err != nil || len(tail) > 0 || p.P == nil || p.G == nil {
		return nil, errors.New("the PEM block is not PKCS #3 DH parameters")
	}
	if bits := p.P.BitLen(); bits < minDHBits || bits > maxDHBits {
		return nil, fmt.Errorf("want a prime of %d to %d bits, not %d", minDHBits, maxDHBits, bits)
	}
	pMinus1 := new(big.Int).Sub(p.P, big.NewInt(1))
	if p.G.Cmp(big.NewInt(1)) <= 0 || p.G.Cmp(pMinus1) >= 0 {
		return nil, errors.New("the generator is not between 1 and p-1")
	}
	if p.PrivateValueLength < 0 || p.PrivateValueLength >= p.P.BitLen() {
		return nil, errors.New("the private value length is out of range")
	}
	// A cheap check that catches random or edited numbers; OpenSSL
	// itself does not test primality when nginx loads the file.
	if !p.P.ProbablyPrime(2) {
		return nil, errors.New("p is not a prime")
	}
	return pem.EncodeToMemory(&pem.Block{Type: block.Type, Bytes: block.Bytes}), nil
}

// ParseTicketKey checks a TLS session ticket key as nginx's
// ssl_session_ticket_key reads it: 48 bytes (AES-128) or 80 bytes
// (AES-256), raw or base64-encoded (openssl rand 80 | base64).
func ParseTicketKey(data []byte) ([]byte, error) {
	if n := len(data); n == 48 || n == 80 {
		return data, nil
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(data)))
	if err != nil {
		return nil, errors.New("want 48 or 80 bytes, raw or base64-encoded (openssl rand 80 | base64 -w0)")
	}
	if n := len(raw); n != 48 && n != 80 {
		return nil, fmt.Errorf("holds %d bytes; want 48 or 80 (openssl rand 80 | base64 -w0)", n)
	}
	return raw, nil
}
