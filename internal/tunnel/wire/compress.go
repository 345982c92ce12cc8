package wire

import (
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Compression is a per-connection compression mode for the bytes between
// server and agent. The client of a frontend always sees plain bytes.
type Compression string

const (
	CompressionNone Compression = "none"
	CompressionGzip Compression = "gzip"
	CompressionZstd Compression = "zstd"
)

// AllCompressions lists every mode, most preferred first.
var AllCompressions = []Compression{CompressionZstd, CompressionGzip, CompressionNone}

// ParseCompression accepts "none", "gzip" or "zstd" (case-insensitive; the
// empty string means none).
func ParseCompression(s string) (Compression, error) {
	switch c := Compression(strings.ToLower(strings.TrimSpace(s))); c {
	case "", CompressionNone:
		return CompressionNone, nil
	case CompressionGzip, CompressionZstd:
		return c, nil
	default:
		return "", fmt.Errorf("unknown compression %q (want none, gzip or zstd)", s)
	}
}

// Negotiate returns want if the peer supports it, else none, which every
// peer supports.
func Negotiate(want Compression, peer []Compression) Compression {
	for _, c := range peer {
		if c == want {
			return want
		}
	}
	return CompressionNone
}

// encoder compresses a byte stream; Flush pushes everything written so far
// to the peer so interactive protocols do not wait for a full block.
type encoder interface {
	io.Writer
	Flush() error
	Close() error
}

// Window sizes are small on purpose: a server holds one encoder and one
// decoder per tunneled connection, and log-like text repeats within far
// less than this.
const (
	zstdWindow = 256 << 10
	gzipLevel  = 6
)

func newEncoder(c Compression, w io.Writer) (encoder, error) {
	switch c {
	case CompressionNone, "":
		return nopEncoder{w}, nil
	case CompressionGzip:
		zw, err := gzip.NewWriterLevel(w, gzipLevel)
		if err != nil {
			return nil, fmt.Errorf("gzip encoder: %w", err)
		}
		return zw, nil
	case CompressionZstd:
		zw, err := zstd.NewWriter(w,
			zstd.WithEncoderConcurrency(1),
			zstd.WithWindowSize(zstdWindow),
			zstd.WithLowerEncoderMem(true),
			zstd.WithEncoderLevel(zstd.SpeedDefault))
		if err != nil {
			return nil, fmt.Errorf("zstd encoder: %w", err)
		}
		return zw, nil
	default:
		return nil, fmt.Errorf("unknown compression %q", c)
	}
}

// newDecoder must be called from the goroutine that reads: the gzip reader
// consumes the header as it is created.
func newDecoder(c Compression, r io.Reader) (io.ReadCloser, error) {
	switch c {
	case CompressionNone, "":
		return io.NopCloser(r), nil
	case CompressionGzip:
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("gzip decoder: %w", err)
		}
		return zr, nil
	case CompressionZstd:
		zr, err := zstd.NewReader(r,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(8<<20))
		if err != nil {
			return nil, fmt.Errorf("zstd decoder: %w", err)
		}
		return zr.IOReadCloser(), nil
	default:
		return nil, fmt.Errorf("unknown compression %q", c)
	}
}

type nopEncoder struct{ io.Writer }

func (nopEncoder) Flush() error { return nil }
func (nopEncoder) Close() error { return nil }
