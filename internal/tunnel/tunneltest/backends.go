package tunneltest

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"
)

// LogLines returns about n bytes of log-like text: journald/kubelet style
// lines with advancing timestamps, a handful of components and messages,
// and varying numbers and ids, the traffic `kubectl logs` carries.
func LogLines(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	comps := []string{"kubelet", "containerd", "kube-proxy", "coredns", "app"}
	levels := []string{"I", "I", "I", "W", "E"}
	msgs := []string{
		`"SyncLoop (PLEG): event for pod" pod="default/web-%x" event={"ID":"%x","Type":"ContainerStarted"}`,
		`"Probe succeeded" probeType="Readiness" pod="kube-system/coredns-%x" containerName="coredns"`,
		`GET /api/v1/namespaces/default/pods/web-%x/log?follow=true 200 %dms`,
		`"Observed a panic" err="runtime error: index out of range [%d]" stack="goroutine %d [running]"`,
		`Successfully pulled image "registry.example/app:v1.%d" in %dms (%d bytes)`,
	}
	var b bytes.Buffer
	b.Grow(n + 256)
	t := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	for b.Len() < n {
		t = t.Add(time.Duration(r.IntN(5000)) * time.Millisecond)
		i := r.IntN(len(msgs))
		var msg string
		switch i {
		case 0:
			msg = fmt.Sprintf(msgs[i], r.Uint32()&0xffff, r.Uint64())
		case 1:
			msg = fmt.Sprintf(msgs[i], r.Uint32()&0xfff)
		case 2:
			msg = fmt.Sprintf(msgs[i], r.Uint32()&0xffff, r.IntN(900))
		case 3:
			msg = fmt.Sprintf(msgs[i], r.IntN(64), r.IntN(5000))
		default:
			msg = fmt.Sprintf(msgs[i], r.IntN(40), r.IntN(9000), r.IntN(1<<28))
		}
		fmt.Fprintf(&b, "%s %s %s[%d]: %s\n", t.Format(time.RFC3339Nano), levels[r.IntN(len(levels))],
			comps[r.IntN(len(comps))], 1000+r.IntN(50), msg)
	}
	return b.Bytes()
}

// ListenLoopback listens on 127.0.0.1 with a free port.
func ListenLoopback() (net.Listener, error) {
	return net.Listen("tcp", "127.0.0.1:0")
}

// EchoServer accepts connections on ln and echoes what it reads; the
// returned stop function closes everything.
func EchoServer(ln net.Listener) (stop func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	return func() { ln.Close(); wg.Wait() }
}

// SinkSource serves, on every connection, size bytes of payload and then
// closes; used for bulk and compression measurements.
func SinkSource(ln net.Listener, payload []byte) (stop func()) {
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.Write(payload)
			}()
		}
	}()
	return func() { ln.Close() }
}

// HTTPServer serves h on ln until stop is called.
func HTTPServer(ln net.Listener, h http.Handler) (stop func()) {
	s := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go s.Serve(ln)
	return func() { s.Close() }
}
