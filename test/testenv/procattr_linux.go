//go:build linux

package testenv

import "syscall"

// childProcAttr makes the kernel kill a child when the process that started
// it dies, even by SIGKILL, so that etcd and kube-apiserver never outlive a
// crashed or killed test binary. Env.Stop is still the normal path; this is
// the backstop.
//
// The child also gets its own process group, so a Ctrl-C in the terminal
// reaches only our process, which then stops the children in order
// (kube-apiserver before etcd) instead of all of them at once.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Pdeathsig: syscall.SIGKILL,
		Setpgid:   true,
	}
}
