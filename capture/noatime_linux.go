package capture

import "golang.org/x/sys/unix"

const oNoatime = unix.O_NOATIME
