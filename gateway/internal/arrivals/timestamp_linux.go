package arrivals

import (
	"io"
	"net"
	"syscall"
	"time"
	"unsafe"
)

// timed asks the kernel to stamp what arrives on c, and reads it with
// recvmsg to learn the stamp. A connection that cannot be stamped is
// timed by the clock when it is read.
func timed(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return &conn{Conn: c, read: plainRead(c)}
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return &conn{Conn: c, read: plainRead(c)}
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return &conn{Conn: c, read: plainRead(c)}
	}
	oob := make([]byte, syscall.CmsgSpace(int(unsafe.Sizeof(syscall.Timespec{}))))
	return &conn{Conn: c, read: func(b []byte) (int, time.Time, error) {
		var n, oobn int
		var rerr error
		err := raw.Read(func(fd uintptr) bool {
			n, oobn, _, _, rerr = syscall.Recvmsg(int(fd), b, oob, 0)
			return rerr != syscall.EAGAIN
		})
		if err == nil {
			err = rerr
		}
		if err != nil {
			return 0, time.Time{}, err
		}
		if n == 0 && len(b) > 0 {
			return 0, time.Time{}, io.EOF
		}
		return n, stamp(oob[:oobn]), nil
	}}
}

// stamp reads SCM_TIMESTAMPNS out of a control message.
func stamp(oob []byte) time.Time {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}
	}
	for _, m := range msgs {
		if m.Header.Level == syscall.SOL_SOCKET && m.Header.Type == syscall.SCM_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(syscall.Timespec{})) {
			ts := (*syscall.Timespec)(unsafe.Pointer(&m.Data[0]))
			return time.Unix(ts.Unix())
		}
	}
	return time.Time{}
}

func plainRead(c net.Conn) func([]byte) (int, time.Time, error) {
	return func(b []byte) (int, time.Time, error) {
		n, err := c.Read(b)
		return n, time.Time{}, err
	}
}
