// Command cluster runs the single-node test cluster of tier 5
// (test/cluster) for use by hand: `make cluster-up` and `make
// cluster-down` call it.
//
//	cluster up [-image ARCHIVE]...   start it in the background; print the
//	                                 kubeconfig, the node's address and the
//	                                 time it took
//	cluster down                     stop it and remove everything it made
//	cluster import ARCHIVE...        import more images into the node
//
// The cluster's components are children of a supervisor process (`cluster
// serve`, started by up) that stops them on SIGTERM; down signals it and
// then removes whatever is left, as after a crash. See docs/testenv.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/causeway/causeway/test/cluster"
)

type images []string

func (i *images) String() string     { return strings.Join(*i, ",") }
func (i *images) Set(v string) error { *i = append(*i, v); return nil }

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	var imgs images
	fs.Var(&imgs, "image", "an image archive to import (repeatable)")
	dir := fs.String("dir", "", "the cluster's directory (default $CAUSEWAY_CLUSTER_DIR or "+cluster.DefaultDir+")")
	logPath := fs.String("log", filepath.Join(os.TempDir(), "causeway-cluster-up.log"), "the supervisor's log")
	fs.Parse(os.Args[2:])
	var err error
	switch os.Args[1] {
	case "up":
		err = up(*dir, *logPath, imgs)
	case "serve":
		err = serve(*dir, imgs)
	case "down":
		start := time.Now()
		if err = cluster.Down(*dir); err == nil {
			fmt.Printf("cluster: down in %s, nothing left on the host\n", time.Since(start).Round(100*time.Millisecond))
		}
	case "import":
		var c *cluster.Cluster
		if c, err = cluster.Attach(*dir); err == nil {
			for _, a := range fs.Args() {
				if err = c.ImportImage(context.Background(), a); err != nil {
					break
				}
			}
		}
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: cluster up [-image ARCHIVE]... | down | import ARCHIVE...")
	os.Exit(2)
}

// up starts the supervisor in its own session, with its output in
// logPath, and waits until the cluster is Ready or the supervisor exits.
func up(dir, logPath string, imgs images) error {
	if cluster.Running(dir) {
		return fmt.Errorf("a cluster is already running; make cluster-down stops it")
	}
	start := time.Now()
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	args := []string{"serve", "-dir", dir}
	for _, i := range imgs {
		abs, err := filepath.Abs(i)
		if err != nil {
			return err
		}
		args = append(args, "-image", abs)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for !cluster.Running(dir) {
		select {
		case err := <-exited:
			tail, _ := os.ReadFile(logPath)
			return fmt.Errorf("the cluster did not start (%v):\n%s", err, tail)
		case <-time.After(250 * time.Millisecond):
		}
	}
	c, err := cluster.Attach(dir)
	if err != nil {
		return err
	}
	fmt.Printf("cluster: up in %s\n", time.Since(start).Round(100*time.Millisecond))
	fmt.Printf("  kubeconfig: %s\n", c.AdminKubeconfig)
	fmt.Printf("  node:       %s (%s)\n", cluster.NodeName, c.NodeIP)
	fmt.Printf("  logs:       %s/logs, supervisor %s\n", c.Dir, logPath)
	fmt.Printf("  stop with:  make cluster-down\n")
	return nil
}

// serve runs the cluster until SIGTERM or SIGINT, then stops it.
func serve(dir string, imgs images) error {
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	logf := func(format string, args ...any) {
		fmt.Printf("%s %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
	}
	c, err := cluster.Up(ctx, cluster.Options{Dir: dir, Images: imgs, Logf: logf})
	if err != nil {
		return err
	}
	<-ctx.Done()
	logf("stopping")
	return c.Down()
}
