// Command echo runs one or more echo backends, for the demo and, packed
// into an image (make cluster-images), as the test cluster's backend Pods:
//
//	go run ./hack/echo web=127.0.0.11:8080 api=127.0.0.12:8080
//
// ECHO_ENDPOINT, when set, is the endpoint the replies name instead of the
// listening address (a Pod sets it to its own name). On SIGTERM the
// backends keep serving for ECHO_DRAIN (default 0, 5s in the test
// cluster's Pods) and then shut down gracefully, as a well-behaved backend
// does while its endpoint is being removed.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/causeway/causeway/test/echo"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: echo NAME=ADDR:PORT ...")
		os.Exit(2)
	}
	drain := time.Duration(0)
	if v := os.Getenv("ECHO_DRAIN"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			fmt.Fprintf(os.Stderr, "echo: ECHO_DRAIN=%q is not a duration\n", v)
			os.Exit(2)
		}
		drain = d
	}
	errc := make(chan error, len(os.Args))
	var servers []*http.Server
	for _, arg := range os.Args[1:] {
		name, addr, ok := strings.Cut(arg, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "echo: %q is not NAME=ADDR:PORT\n", arg)
			os.Exit(2)
		}
		endpoint := addr
		if e := os.Getenv("ECHO_ENDPOINT"); e != "" {
			endpoint = e
		}
		srv := &http.Server{Addr: addr, Handler: echo.Handler(name, endpoint), ReadHeaderTimeout: 5 * time.Second}
		servers = append(servers, srv)
		go func() { errc <- srv.ListenAndServe() }()
		fmt.Printf("echo backend %q listening on %s\n", name, addr)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	select {
	case err := <-errc:
		fmt.Fprintln(os.Stderr, "echo:", err)
		os.Exit(1)
	case sig := <-sigs:
		fmt.Printf("echo: %v: serving %v more, then shutting down\n", sig, drain)
		time.Sleep(drain)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		for _, srv := range servers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
					fmt.Fprintln(os.Stderr, "echo: shutdown:", err)
				}
			}()
		}
		wg.Wait()
	}
}
