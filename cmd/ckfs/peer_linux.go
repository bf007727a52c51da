package main

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// checkPeer refuses peers that run as another user.
func checkPeer(c *net.UnixConn, uid int) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var cerr error
	raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) })
	if cerr != nil {
		return cerr
	}
	if int(cred.Uid) != uid {
		return fmt.Errorf("peer uid %d is not the daemon's uid %d", cred.Uid, uid)
	}
	return nil
}
