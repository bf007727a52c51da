// Package archtest enforces the layering of DESIGN.md section 2: the store
// packages know nothing of the layers above them, and capture knows nothing
// of FUSE.
package archtest

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/ckfs-dev/ckfs"

// forbidden maps a package to the packages of this module it must never
// import, directly or indirectly. "*" forbids every other package of the
// module.
var forbidden = map[string][]string{
	"cas":     {"*"},
	"index":   {"*"},
	"capture": {"remote", "fusefs", "rewind", "workspace", "daemon", "cmd/ckfs"},
	"fusefs":  {"remote", "rewind", "workspace", "daemon", "cmd/ckfs"},
	"rewind":  {"remote", "fusefs", "capture", "workspace", "daemon", "cmd/ckfs", "gc"},
	"gc":      {"remote", "fusefs", "capture", "workspace", "daemon", "cmd/ckfs"},
	// The client side of a workspace (store discovery, the control
	// protocol, rewind, verify and hook set-up) never links the mount: a
	// command or a hook talks to the daemon over the socket.
	"workspace": {"remote", "fusefs", "capture", "daemon", "cmd/ckfs"},
	// The checks of a machine and a workspace read; they never serve.
	"doctor": {"remote", "fusefs", "capture", "daemon", "cmd/ckfs"},
	// The remote side ships a store to a bucket and reads it back; it
	// never serves a mount, and nothing below it knows a bucket.
	"remote": {"fusefs", "capture", "daemon", "cmd/ckfs"},
	// The hook executable starts on every tool call: the hook handler and
	// nothing heavier (no FUSE, no S3 client, no CLI).
	"cmd/ckfs-hook": {"fusefs", "capture", "daemon", "remote", "doctor", "ui", "demo", "cmd/ckfs"},
	// Text for people from what the other rooms return: it reads a store
	// through workspace, and never serves a mount or decides anything.
	"ui": {"fusefs", "capture", "daemon", "demo", "cmd/ckfs"},
	// The demo drives the ckfs binary as a user would, through no library
	// of the mount or the remote.
	"demo": {"fusefs", "capture", "daemon", "remote", "ui", "cmd/ckfs"},
	// The daemon serves the mount; it never reaches up into the CLI.
	"daemon": {"cmd/ckfs"},
	"config": {"*"},
	// The two timelines never know each other: the conversation side
	// imports nothing of the file side, nor the file side of it.
	"session":    {"index", "cas", "capture", "fusefs", "rewind", "gc", "workspace", "daemon", "cmd/ckfs"},
	"transcript": {"*"},
	// The leaf helpers import nothing of ckfs, so any package may use them.
	"internal/proc":     {"*"},
	"internal/durable":  {"*"},
	"internal/safename": {"*"},
	"internal/jsonl":    {"*"},
}

// leaves are the helpers every package may import, "*" rules included.
var leaves = []string{"internal/durable", "internal/safename", "internal/jsonl"}

type pkg struct {
	ImportPath string
	Deps       []string
}

func TestLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Deps", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := map[string]bool{}
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(p.ImportPath, module+"/")
		rules, ok := forbidden[name]
		if !ok {
			continue
		}
		seen[name] = true
		for _, d := range p.Deps {
			dep, ours := strings.CutPrefix(d, module+"/")
			if !ours {
				continue
			}
			if slices.Contains(leaves, dep) && name != dep {
				continue
			}
			for _, f := range rules {
				if f == "*" || dep == f || strings.HasPrefix(dep, f+"/") {
					t.Errorf("%s imports %s: DESIGN.md section 2 forbids it", name, dep)
				}
			}
		}
	}
	for _, must := range []string{"cas", "index", "workspace", "daemon", "doctor", "remote", "ui", "demo", "cmd/ckfs-hook"} {
		if !seen[must] {
			t.Errorf("package %s not found by go list", must)
		}
	}
}
