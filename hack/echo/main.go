// Command echo runs one or more echo backends for the demo:
//
//	go run ./hack/echo web=127.0.0.11:8080 api=127.0.0.12:8080
package main

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/causeway/causeway/test/echo"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: echo NAME=ADDR:PORT ...")
		os.Exit(2)
	}
	errc := make(chan error, len(os.Args))
	for _, arg := range os.Args[1:] {
		name, addr, ok := strings.Cut(arg, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "echo: %q is not NAME=ADDR:PORT\n", arg)
			os.Exit(2)
		}
		srv := &http.Server{Addr: addr, Handler: echo.Handler(name, addr), ReadHeaderTimeout: 5 * time.Second}
		go func() { errc <- srv.ListenAndServe() }()
		fmt.Printf("echo backend %q listening on %s\n", name, addr)
	}
	fmt.Fprintln(os.Stderr, "echo:", <-errc)
	os.Exit(1)
}
