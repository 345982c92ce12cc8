package model

import (
	"encoding/asn1"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/testcorpus"
	"github.com/causeway/causeway/test/testcert"
)

func TestParseObjectName(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ObjectName
		ok   bool
	}{
		{"ingress-nginx/custom-headers", ObjectName{"ingress-nginx", "custom-headers"}, true},
		{"a/b.c", ObjectName{"a", "b.c"}, true},
		{"custom-headers", ObjectName{}, false}, // no namespace
		{"/name", ObjectName{}, false},
		{"ns/", ObjectName{}, false},
		{"ns/a/b", ObjectName{}, false},
		{"Ns/name", ObjectName{}, false},
		{"ns.dotted/name", ObjectName{}, false}, // namespaces are labels
		{"ns/Name", ObjectName{}, false},
		{"ns/" + strings.Repeat("a", 254), ObjectName{}, false},
	} {
		got, err := ParseObjectName("ConfigMap", tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseObjectName(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	for _, v := range testcorpus.Injection {
		if got, err := ParseObjectName("ConfigMap", v); err == nil {
			t.Errorf("hostile %q accepted as %v", v, got)
		}
	}
}

// dhPEM encodes DH parameters p and g.
func dhPEM(t *testing.T, p, g *big.Int) []byte {
	t.Helper()
	der, err := asn1.Marshal(dhParameter{P: p, G: g})
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "DH PARAMETERS", Bytes: der})
}

func TestParseDHParams(t *testing.T) {
	good := testcert.DHParams2048
	block, _ := pem.Decode(good)
	var params dhParameter
	if _, err := asn1.Unmarshal(block.Bytes, &params); err != nil {
		t.Fatal(err)
	}
	notPrime := new(big.Int).Add(params.P, big.NewInt(2))
	for notPrime.ProbablyPrime(20) {
		notPrime.Add(notPrime, big.NewInt(2))
	}
	small, _ := new(big.Int).SetString("ffffffffffffffffc90fdaa22168c234c4c6628b80dc1cd129024e088a67cc74020bbea63b139b22514a08798e3404ddef9519b3cd3a431b302b0a6df25f14374fe1356d6d51c245e485b576625e7ec6f44c42e9a63a3620ffffffffffffffff", 16) // RFC 2409's 768-bit group
	withHeader := pem.EncodeToMemory(&pem.Block{Type: "DH PARAMETERS", Headers: map[string]string{"Proc-Type": "4,ENCRYPTED"}, Bytes: block.Bytes})
	for _, tc := range []struct {
		name string
		in   []byte
		want string // "" to accept
	}{
		{"openssl dhparam 2048", good, ""},
		{"CRLF line ends", []byte(strings.ReplaceAll(string(good), "\n", "\r\n")), ""},
		{"trailing blank lines", append(append([]byte(nil), good...), "\n\n"...), ""},
		{"empty", nil, "want a PEM block"},
		{"garbage", []byte("not a pem file"), "want a PEM block"},
		{"a certificate", []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"), `not "CERTIFICATE"`},
		{"two blocks", append(append([]byte(nil), good...), good...), "nothing after it"},
		{"text after", append(append([]byte(nil), good...), "ssl_dhparam /etc/passwd;"...), "nothing after it"},
		{"PEM headers", withHeader, "without headers"},
		{"not DER", []byte("-----BEGIN DH PARAMETERS-----\naGVsbG8=\n-----END DH PARAMETERS-----\n"), "not PKCS #3"},
		{"too small", dhPEM(t, small, big.NewInt(2)), "not 768"},
		{"generator 1", dhPEM(t, params.P, big.NewInt(1)), "generator"},
		{"generator p-1", dhPEM(t, params.P, new(big.Int).Sub(params.P, big.NewInt(1))), "generator"},
		{"not a prime", dhPEM(t, notPrime, big.NewInt(2)), "not a prime"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := ParseDHParams(tc.in)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
				if b, _ := pem.Decode(out); b == nil || string(b.Bytes) != string(block.Bytes) {
					t.Fatalf("re-encoded block differs:\n%s", out)
				}
			case err == nil || !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	for _, v := range testcorpus.Injection {
		if _, err := ParseDHParams([]byte(v)); err == nil {
			t.Errorf("hostile %q accepted", v)
		}
	}
}
