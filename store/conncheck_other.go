//go:build !(linux || darwin || freebsd)

package store

import "net"

// connHasInput cannot look on this system; pgxpool's own check of
// connections idle for over a second remains.
func connHasInput(net.Conn) bool { return false }
