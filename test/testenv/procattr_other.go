//go:build !linux

package testenv

import "syscall"

// childProcAttr has no parent-death signal outside Linux; Env.Stop is the
// only cleanup there.
func childProcAttr() *syscall.SysProcAttr {
	return nil
}
