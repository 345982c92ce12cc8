package webhookcert

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"time"
)

// piece is a run of bytes of a caBundle, exactly as found: either one PEM
// block or the text between blocks.
type piece struct {
	raw   []byte
	block bool              // raw is one PEM block
	cert  *x509.Certificate // the certificate in it, when it holds one that parses
}

var pemBegin = []byte("-----BEGIN")

// splitBundle cuts a caBundle into pieces that, put back together, give
// the same bytes. Text that is not a well-formed PEM block (a comment, or
// a block pem.Decode cannot read) becomes a text piece.
func splitBundle(b []byte) []piece {
	var out []piece
	rest := b
	for len(rest) > 0 {
		block, next := pem.Decode(rest)
		if block == nil {
			out = append(out, piece{raw: rest})
			break
		}
		seg := rest[:len(rest)-len(next)]
		// pem.Decode skips whatever comes before the block; the block
		// itself starts at the last BEGIN line of what it consumed.
		i := max(bytes.LastIndex(seg, pemBegin), 0)
		if i > 0 {
			out = append(out, piece{raw: seg[:i]})
		}
		p := piece{raw: seg[i:], block: true}
		if block.Type == "CERTIFICATE" {
			if c, err := x509.ParseCertificate(block.Bytes); err == nil {
				p.cert = c
			}
		}
		out = append(out, p)
		rest = next
	}
	return out
}

// malformed reports whether p is something a caBundle should not hold:
// a block that is not a readable certificate, or text with a broken block
// in it. Other text (comments, blank lines) is fine.
func (p piece) malformed() bool {
	if p.block {
		return p.cert == nil
	}
	return bytes.Contains(p.raw, pemBegin)
}

// mergeBundle is old without the certificates that expired before now,
// followed by each of ours (DER) that old does not already hold. Everything
// else in old is kept byte for byte and in order, so a bundle with nothing
// to do comes back unchanged. It also reports whether old holds something
// malformed.
func mergeBundle(old []byte, ours [][]byte, now time.Time) (merged []byte, malformed bool) {
	var out bytes.Buffer
	have := map[string]bool{}
	for _, p := range splitBundle(old) {
		if p.cert != nil {
			if now.After(p.cert.NotAfter) {
				continue
			}
			have[string(p.cert.Raw)] = true
		}
		malformed = malformed || p.malformed()
		out.Write(p.raw)
	}
	for _, der := range ours {
		if have[string(der)] {
			continue
		}
		if out.Len() > 0 && !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
			out.WriteByte('\n')
		}
		_ = pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: der}) // cannot fail writing to a Buffer
		have[string(der)] = true
	}
	return out.Bytes(), malformed
}

// bundleHas reports whether bundle holds the certificate der.
func bundleHas(bundle, der []byte) bool {
	rest := bundle
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return false
		}
		if block.Type == "CERTIFICATE" && bytes.Equal(block.Bytes, der) {
			return true
		}
	}
}
