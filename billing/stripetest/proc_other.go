//go:build !linux

package stripetest

import "syscall"

// procAttr: outside Linux there is no parent-death signal, and stripe-mock
// is left running after the tests (on loopback ports only); stop it by hand.
func procAttr() *syscall.SysProcAttr { return nil }
