package workspace

import "syscall"

// ctimeNs is st's status change time, ns since the epoch.
func ctimeNs(st *syscall.Stat_t) int64 { return st.Ctim.Sec*1e9 + st.Ctim.Nsec }
