//go:build linux || darwin || freebsd

package store

import (
	"net"
	"syscall"
)

// connHasInput reports whether anything is waiting to be read on an idle
// connection, without reading it: nothing should be, so something (the
// server's FATAL message as it shut down, the end of the stream, a reset)
// means the connection must be checked before it is used.
func connHasInput(c net.Conn) bool {
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = tc.NetConn() // TLS: the bytes on the wire are what count
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	input := false
	rc.Control(func(fd uintptr) {
		var b [1]byte
		// Data, the end of the stream (0 bytes) or an error all count;
		// only "nothing yet" does not.
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		input = err != syscall.EAGAIN && err != syscall.EWOULDBLOCK && err != syscall.EINTR
	})
	return input
}
