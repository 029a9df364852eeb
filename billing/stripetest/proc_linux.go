package stripetest

import "syscall"

// procAttr has the kernel kill stripe-mock when the test binary exits, so
// that no test run leaves one behind.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
