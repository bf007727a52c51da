// Package doctor checks everything a mount needs (the FUSE device, the
// permission to mount, kernel passthrough, the configuration, the store
// directory) and a workspace's state, and says how to fix what is wrong.
package doctor

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/ckfs-dev/ckfs/agent"
	"github.com/ckfs-dev/ckfs/config"
	"github.com/ckfs-dev/ckfs/rewind"
	"github.com/ckfs-dev/ckfs/workspace"
	"golang.org/x/sys/unix"
)

// Diagnosis is one check of ckfs doctor.
type Diagnosis struct {
	Check  string `json:"check"`
	Status string `json:"status"` // ok, warn, fail, info
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Diagnose runs every check.
func Diagnose(dir, storeFlagValue string) []Diagnosis {
	var ds []Diagnosis
	add := func(check, status, detail, fix string) {
		ds = append(ds, Diagnosis{check, status, detail, fix})
	}
	if runtime.GOOS != "linux" {
		add("platform", "warn", runtime.GOOS+": ckfs is tested on Linux only", "on macOS install macFUSE and mount at a separate mountpoint: ckfs mount REPO MOUNTPOINT")
	} else {
		add("platform", "ok", "linux", "")
	}
	root := os.Geteuid() == 0
	status, detail, fix := DevFuse()
	add("/dev/fuse", status, detail, fix)
	fm, fmErr := exec.LookPath("fusermount3")
	switch {
	case root:
		add("permission to mount", "ok", "running as root: ckfs mounts directly", "")
	case fmErr == nil:
		add("permission to mount", "ok", "fusermount3 at "+fm, "")
	default:
		add("permission to mount", "fail", "not root and no fusermount3", "apt-get install fuse3 (or your distribution's fuse3 package)")
	}
	if !root {
		if b, err := os.ReadFile("/etc/fuse.conf"); err != nil || !strings.Contains(uncomment(string(b)), "user_allow_other") {
			add("user_allow_other", "info", "not set in /etc/fuse.conf: only needed for ckfs mount --allow-other", "")
		}
	}
	add(passthroughCheck(root))
	add(hookCheck())
	for _, d := range agentChecks() {
		add(d.Check, d.Status, d.Detail, d.Fix)
	}
	if path, err := configPathChecked(dir); err != "" {
		add("configuration", "fail", err, "fix the file named above, or move it away")
	} else {
		add("configuration", "ok", path, "")
	}
	base, err := workspace.Base()
	if err != nil {
		add("store directory", "fail", err.Error(), "set CKFS_HOME or XDG_STATE_HOME")
	} else if abs, aerr := filepath.Abs(dir); aerr == nil && workspace.StoreWithin(base, abs) {
		// A workspace with its store inside fails; a directory that is
		// none yet only could not be mounted with this CKFS_HOME.
		status := "warn"
		if _, ferr := workspace.Locate(storeFlagValue, abs); ferr == nil {
			status = "fail"
		}
		add("store directory", status, base+" resolves inside "+abs+": a mount of it would record its own writes through itself, and is refused", "set CKFS_HOME to a directory outside the repository")
	} else {
		add(storeDirCheck(base))
	}
	ds = append(ds, workspaceChecks(dir, storeFlagValue)...)
	return ds
}

func uncomment(s string) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		l := sc.Text()
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}

// passthroughCheck: FUSE passthrough (Linux 6.9 and later, and the
// capability to use it) lets large reads and writes bypass the daemon.
func passthroughCheck(root bool) (string, string, string, string) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "kernel passthrough", "warn", "cannot read the kernel version", ""
	}
	rel := unix.ByteSliceToString(u.Release[:])
	parts := strings.SplitN(rel, ".", 3)
	major, _ := strconv.Atoi(parts[0])
	minor := 0
	if len(parts) > 1 {
		minor, _ = strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	}
	switch {
	case major < 6 || major == 6 && minor < 9:
		return "kernel passthrough", "warn", "Linux " + rel + " has no FUSE passthrough: ckfs works, but large reads and writes go through the daemon (slower)", "a 6.9 or later kernel"
	case !root:
		return "kernel passthrough", "warn", "Linux " + rel + " supports it, but it needs CAP_SYS_ADMIN: without root, large I/O goes through the daemon", "run ckfs mount as root for native-speed large I/O"
	}
	return "kernel passthrough", "ok", "Linux " + rel + ": available (capture.io = passthrough mounts use it; the file I/O line says what a mount uses)", ""
}

func configPathChecked(dir string) (string, string) {
	root, err := workspace.AbsDir(dir)
	if err != nil {
		root = dir
	}
	_, path, err := config.For(root)
	if err != nil {
		return "", err.Error()
	}
	if _, err := os.Stat(path); err != nil {
		return path + " (absent: every default applies)", ""
	}
	return path, ""
}

func storeDirCheck(base string) (string, string, string, string) {
	st, err := os.Stat(base)
	switch {
	case os.IsNotExist(err):
		parent := filepath.Dir(base)
		if unix.Access(nearestExisting(parent), unix.W_OK) != nil {
			return "store directory", "fail", base + " does not exist and cannot be created here", "set CKFS_HOME to a writable directory"
		}
		return "store directory", "ok", base + " (created at the first mount)", ""
	case err != nil:
		return "store directory", "fail", err.Error(), "check the permissions of " + base
	case !st.IsDir():
		return "store directory", "fail", base + " is not a directory", "move it away or set CKFS_HOME"
	}
	if unix.Access(base, unix.W_OK) != nil {
		return "store directory", "fail", base + " is not writable", "chown or chmod it, or set CKFS_HOME"
	}
	ents, _ := os.ReadDir(base)
	for _, e := range ents {
		if info, err := e.Info(); err == nil && e.IsDir() && e.Name() != "mounts" && info.Mode().Perm()&0o077 != 0 {
			return "store directory", "warn", filepath.Join(base, e.Name()) + " is readable by others (it holds copies of your files)", "chmod 700 " + filepath.Join(base, e.Name())
		}
	}
	return "store directory", "ok", base, ""
}

func nearestExisting(p string) string {
	for {
		if _, err := os.Stat(p); err == nil || p == filepath.Dir(p) {
			return p
		}
		p = filepath.Dir(p)
	}
}

// workspaceChecks look at the workspace at dir: its mount and daemon, and
// unfinished rewinds.
func workspaceChecks(dir, flag string) []Diagnosis {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return []Diagnosis{{"workspace", "fail", err.Error(), ""}}
	}
	if _, err := os.Stat(abs); err != nil && IsNotConnected(err) {
		return []Diagnosis{{"workspace", "fail", abs + " is a dead ckfs mount (transport endpoint is not connected): its daemon is gone", "ckfs mount " + abs + " (it detaches the dead mount and mounts again; or ckfs unmount " + abs + ")"}}
	}
	ws, err := workspace.Locate(flag, abs)
	if err != nil {
		if workspace.MountedAt(abs) {
			return []Diagnosis{{"workspace", "fail", abs + " has a ckfs mount but no store answers for it", "ckfs unmount " + abs}}
		}
		return []Diagnosis{{"workspace", "info", abs + " is not a ckfs workspace yet", "ckfs mount " + abs}}
	}
	store, meta := ws.Store, ws.Meta
	var ds []Diagnosis
	st, derr := workspace.ReadDaemonState(store)
	switch {
	case derr == nil && workspace.ProcessAlive(st.PID):
		ds = append(ds, Diagnosis{"workspace", "ok", fmt.Sprintf("%s is mounted at %s (daemon pid %d, store %s)", meta.Root, st.Mountpoint, st.PID, store), ""})
		if cwd, hidden := ws.HiddenCwd(); hidden {
			ds = append(ds, Diagnosis{"this shell", "fail", "it is in the directory under the mount (it was there before ckfs mount): what it writes bypasses ckfs and is never recorded", fmt.Sprintf("cd %q", cwd)})
		}
		if st.IO != "" {
			ds = append(ds, Diagnosis{"file I/O", "info", st.IO, ""})
		}
		if st.Supervisor > 0 && workspace.ProcessAlive(st.Supervisor) {
			ds = append(ds, Diagnosis{"daemon death", "ok", fmt.Sprintf("if the daemon dies, a successor takes the mount over (supervisor pid %d)", st.Supervisor), ""})
		} else {
			ds = append(ds, Diagnosis{"daemon death", "info", "if the daemon dies, the mount goes with it (a mount in place with capture.io = cached on Linux 6.9 or later survives; the daemon log says why not)", "ckfs mount " + meta.Root + " after a death detaches the dead mount and mounts again"})
		}
	case derr == nil:
		ds = append(ds, Diagnosis{"workspace", "fail", fmt.Sprintf("the daemon of %s (pid %d) is gone", meta.Root, st.PID), "ckfs mount " + meta.Root + " (it detaches the dead mount and mounts again)"})
	case workspace.MountedAt(meta.Root):
		ds = append(ds, Diagnosis{"workspace", "fail", meta.Root + " has a ckfs mount whose daemon is gone", "ckfs mount " + meta.Root + " (it detaches the dead mount and mounts again)"})
	default:
		ds = append(ds, Diagnosis{"workspace", "ok", fmt.Sprintf("%s is not mounted (store %s)", meta.Root, store), ""})
	}
	ds = append(ds, storeSpaceCheck(store, ws.Alive()))
	if ops, err := rewind.PendingJournals(workspace.Layout(store).Journals()); err == nil && len(ops) > 0 {
		ds = append(ds, Diagnosis{"unfinished rewind", "fail", "rewind " + strings.Join(ops, ", ") + " did not finish; file rewinds are blocked",
			"ckfs rewind --rollback " + ops[0] + " (put back what it changed) or ckfs rewind --abandon " + ops[0]})
	}
	return ds
}

func IsNotConnected(err error) bool { return errors.Is(err, unix.ENOTCONN) }

// lowStoreSpace is the free space under which doctor warns: a few large
// post-images more and writes start being refused.
const lowStoreSpace = 256 << 20

// storeSpaceCheck reports the free space of the store's disk, and what a
// running daemon met when it was full.
func storeSpaceCheck(store string, live bool) Diagnosis {
	var fs unix.Statfs_t
	if err := unix.Statfs(store, &fs); err != nil {
		return Diagnosis{"store space", "warn", "cannot read the free space of " + store + ": " + err.Error(), ""}
	}
	free := int64(fs.Bavail) * int64(fs.Bsize)
	policy := "when it is full, writes whose pre-image cannot be stored are refused with ENOSPC and changes whose post-image cannot be stored are recorded as not restorable"
	fix := "free space on that disk, run ckfs gc, or move the store (CKFS_HOME) to a larger disk"
	if live {
		if st, err := workspace.DaemonOf(store).Status(); err == nil && st != nil && (st.StoreFull > 0 || st.StoreFullNow) {
			status := "warn"
			if st.StoreFullNow {
				status = "fail"
			}
			return Diagnosis{"store space", status, config.FormatSize(free) + " free; " + st.FullLine(), fix}
		}
	}
	if free < lowStoreSpace {
		return Diagnosis{"store space", "warn", config.FormatSize(free) + " free on the store's disk; " + policy, fix}
	}
	return Diagnosis{"store space", "ok", config.FormatSize(free) + " free on the store's disk", ""}
}

// hookCheck says whether the agents' hooks will run the small hook
// executable or the whole ckfs binary.
func hookCheck() (check, status, detail, fix string) {
	exe, err := os.Executable()
	if err != nil {
		return "agent hooks", "info", "cannot tell where ckfs is: " + err.Error(), ""
	}
	a, _ := agent.Lookup(agent.Names()[0]) // every agent's hook runs the same program
	cmd := a.HookCommands(exe)[0]
	build := "CGO_ENABLED=0 go build -o " + filepath.Dir(exe) + "/ ./cmd/ckfs-hook"
	if !strings.Contains(cmd, agent.HookExecutable) {
		return "agent hooks", "info", "run " + cmd + " (the whole binary, about 4 ms slower per tool call)",
			"build the hook executable beside ckfs: " + build
	}
	if dynamic(filepath.Join(filepath.Dir(exe), agent.HookExecutable)) {
		return "agent hooks", "info", "run " + cmd + ", which is linked dynamically (built with cgo): it starts through the dynamic loader, about 1 ms slower per tool call",
			"rebuild it static: " + build
	}
	return "agent hooks", "ok", "run " + cmd, ""
}

// agentChecks says, for each agent ckfs has hooks for, whether it is
// installed and how its hooks reach it.
func agentChecks() []Diagnosis {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	var ds []Diagnosis
	for _, name := range agent.Names() {
		a, _ := agent.Lookup(name)
		s := a.Setup(exe)
		status := "ok"
		switch {
		case s.Fix != "" && s.Binary != "":
			status = "warn"
		case s.Binary == "":
			status = "info"
		}
		ds = append(ds, Diagnosis{"agent " + name, status, s.String(), s.Fix})
	}
	return ds
}

// dynamic says whether the executable at path starts through a dynamic
// loader (an ELF program interpreter).
func dynamic(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return true
		}
	}
	return false
}
