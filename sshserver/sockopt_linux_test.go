package sshserver

import "syscall"

func getSndBuf(fd uintptr) int {
	v, err := syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF)
	if err != nil {
		return -1
	}
	return v
}
