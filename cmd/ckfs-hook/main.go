// Command ckfs-hook answers agent hook events for ckfs: it is ckfs hook
// and nothing else, so that the agent waits about half as long for it as
// for the whole ckfs binary. ckfs hooks print and ckfs agent install it
// when it sits beside ckfs. Like ckfs hook, it reads one event as JSON on
// stdin, always exits 0 and prints nothing; problems go to hook.log in
// the store.
//
//	ckfs-hook (claude|codex) < event.json
package main

import (
	"os"
	"time"

	"github.com/ckfs-dev/ckfs/agent"
)

func main() {
	if len(os.Args) == 2 {
		agent.RunHook(os.Args[1], os.Stdin, os.Stderr, time.Now())
	}
}
