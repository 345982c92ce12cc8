package wire

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// Counter is the part of a Prometheus counter that Join needs; it keeps
// this package free of the metrics library.
type Counter interface{ Add(float64) }

// Stats receives byte counts as they flow. Out is from the plain side into
// the tunnel, In from the tunnel to the plain side; Raw counts bytes before
// compression and Wire after it. Nil counters are skipped.
type Stats struct {
	RawOut, WireOut, RawIn, WireIn Counter
}

// A pump's read buffer follows its flow: small while the source is idle
// or trickles (an idle connection blocks in a read, holding its buffer),
// large once a read filled the small one, until a read leaves most of the
// large one empty. Bulk flows move big chunks per read, write and frame
// (fewer system calls, and fewer TLS records and frames on the link); a
// thousand idle connections hold 4 KiB per direction rather than 32. The
// largest chunk is also the largest block a compressor flushes at once.
const (
	smallBufferSize = 4 << 10
	largeBufferSize = 64 << 10
)

var (
	smallPool = sync.Pool{New: func() any { b := make([]byte, smallBufferSize); return &b }}
	largePool = sync.Pool{New: func() any { b := make([]byte, largeBufferSize); return &b }}
)

// readBuffer is a pump's read buffer.
type readBuffer struct {
	bp    *[]byte
	large bool
}

func newReadBuffer() *readBuffer { return &readBuffer{bp: smallPool.Get().(*[]byte)} }

// bytes is the buffer for the next read.
func (r *readBuffer) bytes() []byte { return *r.bp }

// read says how much the last read gave, and sizes the next one. It may
// hand the buffer back to its pool: call it only once the bytes read are
// written out.
func (r *readBuffer) read(n int) {
	switch {
	case !r.large && n == smallBufferSize:
		smallPool.Put(r.bp)
		r.bp, r.large = largePool.Get().(*[]byte), true
	case r.large && n < largeBufferSize/4:
		largePool.Put(r.bp)
		r.bp, r.large = smallPool.Get().(*[]byte), false
	}
}

func (r *readBuffer) release() {
	if r.large {
		largePool.Put(r.bp)
	} else {
		smallPool.Put(r.bp)
	}
	r.bp = nil
}

// Join copies plain to tunnel, compressed with mode, and tunnel to plain,
// decompressed, until both directions end. A clean end of one direction
// (EOF) is passed on as a half-close; an error in either direction closes
// both connections. Join closes both connections before it returns, and
// returns the first error, or nil when both directions ended cleanly.
func Join(plain, tunnel net.Conn, mode Compression, st Stats) error {
	errc := make(chan error, 2)
	go func() { errc <- pumpOut(plain, tunnel, mode, st) }()
	go func() { errc <- pumpIn(tunnel, plain, mode, st) }()
	first := <-errc
	if first != nil {
		plain.Close()
		tunnel.Close()
	}
	second := <-errc
	plain.Close()
	tunnel.Close()
	if first != nil {
		return first
	}
	return second
}

// pumpOut reads plain bytes, compresses and flushes each chunk, so a
// request/response protocol never waits for a compressor's block to fill.
func pumpOut(src, dst net.Conn, mode Compression, st Stats) error {
	enc, err := newEncoder(mode, countingWriter{dst, st.WireOut})
	if err != nil {
		return err
	}
	rb := newReadBuffer()
	defer rb.release()
	for {
		buf := rb.bytes()
		n, rerr := src.Read(buf)
		if n > 0 {
			add(st.RawOut, n)
			if _, err := enc.Write(buf[:n]); err != nil {
				return fmt.Errorf("write to tunnel: %w", err)
			}
			if err := enc.Flush(); err != nil {
				return fmt.Errorf("flush to tunnel: %w", err)
			}
		}
		rb.read(n) // buf is written out: it may go back to its pool
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) {
				return fmt.Errorf("read: %w", rerr)
			}
			if err := enc.Close(); err != nil {
				return fmt.Errorf("close encoder: %w", err)
			}
			return closeWrite(dst)
		}
	}
}

func pumpIn(src, dst net.Conn, mode Compression, st Stats) error {
	dec, err := newDecoder(mode, countingReader{src, st.WireIn})
	if err != nil {
		// A stream that ends before any compressed header is a clean,
		// empty stream.
		if errors.Is(err, io.EOF) {
			return closeWrite(dst)
		}
		return err
	}
	defer dec.Close()
	rb := newReadBuffer()
	defer rb.release()
	for {
		buf := rb.bytes()
		n, rerr := dec.Read(buf)
		if n > 0 {
			add(st.RawIn, n)
			if _, err := dst.Write(buf[:n]); err != nil {
				return fmt.Errorf("copy from tunnel: %w", err)
			}
		}
		rb.read(n) // buf is written out: it may go back to its pool
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) {
				return fmt.Errorf("copy from tunnel: %w", rerr)
			}
			return closeWrite(dst)
		}
	}
}

// closeWrite half-closes c when it supports it (TCP, unix, tunnel streams), so the peer sees EOF while the other direction goes on.
func closeWrite(c net.Conn) error {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		if err := cw.CloseWrite(); err != nil && !errors.Is(err, net.ErrClosed) {
			return fmt.Errorf("half-close: %w", err)
		}
		return nil
	}
	return nil
}

type countingWriter struct {
	w io.Writer
	c Counter
}

func (cw countingWriter) Write(p []byte) (int, error) {
	n, err := cw.w.Write(p)
	add(cw.c, n)
	return n, err
}

type countingReader struct {
	r io.Reader
	c Counter
}

func (cr countingReader) Read(p []byte) (int, error) {
	n, err := cr.r.Read(p)
	add(cr.c, n)
	return n, err
}

func add(c Counter, n int) {
	if c != nil && n > 0 {
		c.Add(float64(n))
	}
}
