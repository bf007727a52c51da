package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/internal/testenv"
	"github.com/google/go-cmp/cmp"
)

// fleetRepo is the repository every agent of the fleet starts from, as
// clones of one repository would: the same files, so the bucket holds
// their baselines once.
const fleetRepo = `
git init -q .
mkdir -p src/api src/util docs empty
for i in $(seq 1 30); do printf 'package api\n\n// Handler%d serves /v1/item/%d.\nfunc Handler%d() int { return %d }\n' $i $i $i $i > src/api/h$i.go; done
printf 'package util\n\nfunc Shout(s string) string { return s + "!" }\n' > src/util/strings.go
printf '#!/bin/sh\necho build\n' > build.sh && chmod 755 build.sh
printf '# fleet\n' > docs/README.md
ln -s docs/README.md README.md
head -c 20000 /dev/urandom > blob.bin
git add -A >/dev/null && git -c user.name=t -c user.email=t@example.com commit -qm init
`

// fileTree is a directory's paths with their type, mode and content (a
// symlink's target).
type fileTree map[string]string

func readFileTree(t *testing.T, root string) fileTree {
	t.Helper()
	out := fileTree{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if rel == ".git" {
			return filepath.SkipDir
		}
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "symlink -> " + target
		case st.IsDir():
			out[rel] = fmt.Sprintf("dir %o", st.Mode().Perm())
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("file %o %s", st.Mode().Perm(), b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fleetAgent is what one agent's sandbox left in the bucket, and the trees
// its checkpoints must restore to.
type fleetAgent struct {
	id string
	// needed and uploaded count the objects its pushes needed (records'
	// and baseline's) and those the bucket did not have yet.
	needed, uploaded int
	uploadedBytes    int64
	trees            map[string]fileTree // checkpoint (a window id: just before it; "" the last) -> fileTree
}

// Ten agents work at once in their own sandboxes (a repository mounted
// with its own store), each pushing to one SeaweedFS bucket; then every
// sandbox is deleted, and every checkpoint of every agent is restored
// byte for byte into a fresh directory.
func TestFleetRestoresEveryCheckpointAfterTheSandboxesAreGone(t *testing.T) {
	t.Parallel() // its own workspace, daemon and server: runs beside the other long sessions
	testenv.RequireFUSE(t)
	endpoint := testenv.SeaweedFS(t, "ckfs")
	url := "s3://ckfs/fleet"
	creds := []string{"AWS_ACCESS_KEY_ID=ckfs-test", "AWS_SECRET_ACCESS_KEY=ckfs-test", "AWS_ENDPOINT_URL=" + endpoint}
	const n = 10
	agents := make([]fleetAgent, n)
	claude, err := installAgent(claudePackage, claudeVersion, "claude")
	if err != nil {
		if os.Getenv("CKFS_REQUIRE_AGENTS") == "1" {
			t.Fatalf("CKFS_REQUIRE_AGENTS=1 but Claude Code cannot be installed: %v", err)
		}
		t.Logf("Claude Code is not available (%v): every agent is shell tool windows", err)
	}
	t.Run("agents", func(t *testing.T) {
		for i := range n {
			t.Run(fmt.Sprint("agent", i), func(t *testing.T) {
				t.Parallel()
				agents[i] = runFleetAgent(t, i, url, creds, claude)
			})
		}
	})
	if t.Failed() {
		return
	}
	// Another machine: no store, only the bucket.
	elsewhere := t.TempDir()
	run := func(args ...string) (string, error) {
		c := exec.Command(ckfsBin, args...)
		c.Dir = elsewhere
		c.Env = append(os.Environ(), append(creds, "CKFS_HOME="+filepath.Join(elsewhere, "home"), "XDG_CACHE_HOME="+filepath.Join(elsewhere, "cache"), "NO_COLOR=1")...)
		out, err := c.CombinedOutput()
		return string(out), err
	}
	out, err := run("workspaces", "--remote", url, "--json")
	if err != nil {
		t.Fatalf("workspaces: %v\n%s", err, out)
	}
	var heads []struct{ Workspace string }
	if err := json.Unmarshal([]byte(out), &heads); err != nil {
		t.Fatalf("workspaces --json: %v\n%s", err, out)
	}
	listed := map[string]bool{}
	for _, h := range heads {
		listed[h.Workspace] = true
	}
	needed, uploaded, bytes := 0, 0, int64(0)
	for _, a := range agents {
		needed, uploaded, bytes = needed+a.needed, uploaded+a.uploaded, bytes+a.uploadedBytes
	}
	t.Logf("%d agents' pushes needed %d objects and uploaded %d (%d bytes): the rest were in the bucket already", n, needed, uploaded, bytes)
	restores := 0
	for i, a := range agents {
		if !listed[a.id] {
			t.Errorf("agent %d's workspace %s is not listed: %s", i, a.id, out)
		}
		for cp, want := range a.trees {
			dir := filepath.Join(elsewhere, fmt.Sprintf("agent%d-%s", i, cp))
			args := []string{"restore", "--remote", url, "--workspace", a.id, dir}
			if cp != "" {
				args = append(args, "--to", cp)
			}
			if out, err := run(args...); err != nil {
				t.Fatalf("agent %d, checkpoint %q: %v\n%s", i, cp, err, out)
			}
			if diff := cmp.Diff(want, readFileTree(t, dir)); diff != "" {
				t.Errorf("agent %d, checkpoint %q restored differently (-want +got):\n%s", i, cp, diff)
			}
			restores++
		}
	}
	t.Logf("%d checkpoints of %d workspaces restored byte for byte", restores, n)
	// The log, a file at a checkpoint and a diff, read from the bucket.
	a := agents[3]
	// With several workspaces in the bucket, one must be named.
	if out, err := run("log", "--remote", url); err == nil || !strings.Contains(out, fmt.Sprintf("holds %d workspaces: name one with --workspace ID", n)) || !strings.Contains(out, a.id) {
		t.Fatalf("log --remote of a bucket of %d workspaces without --workspace: %v\n%s", n, err, out)
	}
	out, err = run("log", "--remote", url, "--workspace", a.id, "--json")
	if err != nil || !strings.Contains(out, `"call_3_2"`) || !strings.Contains(out, "docs/README.md") {
		t.Fatalf("log --remote: %v\n%s", err, out)
	}
	out, err = run("show", "--remote", url, "--workspace", a.id, "call_3_1:docs/README.md")
	if want := strings.TrimPrefix(a.trees["call_3_1"]["docs/README.md"], "file 644 "); err != nil || out != want {
		t.Fatalf("show --remote: %v\n%q, want %q", err, out, want)
	}
	out, err = run("diff", "--remote", url, "--workspace", a.id, "call_3_0", "call_3_1")
	if err != nil || !strings.Contains(out, "+agent 3") || !strings.Contains(out, "return 103") {
		t.Fatalf("diff --remote: %v\n%s", err, out)
	}
	// A window alone is its own change there too, not the rest of the
	// timeline after it; no checkpoint is the last window that wrote.
	out, err = run("diff", "--remote", url, "--workspace", a.id, "call_3_1")
	if err != nil || !strings.Contains(out, "src/agent3/new.go") || strings.Contains(out, "src/util/str.go") {
		t.Fatalf("diff --remote of one window: %v\n%s", err, out)
	}
	out, err = run("diff", "--remote", url, "--workspace", a.id)
	if err != nil || !strings.Contains(out, "src/util/str.go") || strings.Contains(out, "src/agent3/new.go") {
		t.Fatalf("diff --remote of the last window: %v\n%s", err, out)
	}
	if claude != "" {
		// The real agent's turns came along: its marks and session log.
		out, err = run("log", "--remote", url, "--workspace", agents[0].id)
		if err != nil || !strings.Contains(out, "mark 3") || !strings.Contains(out, "window call_0_2") {
			t.Fatalf("log --remote of the Claude Code workspace: %v\n%s", err, out)
		}
	}
	// A restore never writes into a directory that has something in it.
	busy := filepath.Join(elsewhere, "busy")
	os.MkdirAll(busy, 0o755)
	os.WriteFile(filepath.Join(busy, "mine.txt"), []byte("mine\n"), 0o644)
	out, err = run("restore", "--remote", url, "--workspace", agents[0].id, busy)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || !strings.Contains(out, "not empty") {
		t.Fatalf("restore into a non-empty directory: %v\n%s", err, out)
	}
	if got := readFileTree(t, busy); len(got) != 1 {
		t.Fatalf("a refused restore changed the directory: %v", got)
	}
}

func (a *fleetAgent) push(t *testing.T, w *workspace) {
	out := w.ckfs("push", "--json")
	var res struct {
		Workspace                   string
		Uploaded, Objects, Baseline int
		UploadedBytes               int64 `json:"uploaded_bytes"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Workspace == "" {
		t.Fatalf("push --json: %v\n%s", err, out)
	}
	a.id = res.Workspace
	a.needed += res.Objects + res.Baseline
	a.uploaded += res.Uploaded
	a.uploadedBytes += res.UploadedBytes
}

// runFleetAgent is one sandbox: a clone, mounted, three windows of shell
// edits with a push in between and at the end, then unmounted and deleted
// with its store.
func runFleetAgent(t *testing.T, i int, url string, creds []string, claude string) fleetAgent {
	w := newWorkspace(t, fleetRepo)
	w.extraEnv = creds
	w.mount()
	w.ckfs("remote", "add", "fleet", url)
	a := fleetAgent{trees: map[string]fileTree{}}
	// The first agent is the real Claude Code (against the stand-in for
	// its model API), its edits made by its Bash tool through ckfs-hook;
	// the others are shell tool windows.
	var c *claudeRun
	if i == 0 && claude != "" {
		c = claudeRunOf(t, w, claude)
	}
	edits := []string{
		fmt.Sprintf(`sed -i 's/return %d/return %d/' src/api/h%d.go && echo 'agent %d' >> docs/README.md`, i+1, 100+i, i+1, i),
		fmt.Sprintf(`mkdir -p src/agent%d && printf 'package agent\n// %d\n' > src/agent%d/new.go && rm src/api/h%d.go && chmod 700 build.sh`, i, i, i, 30-i),
		fmt.Sprintf(`mv src/util/strings.go src/util/str.go && printf 'x%d\n' >> src/util/str.go && ln -sf build.sh run%d && rmdir empty`, i, i),
	}
	for k, script := range edits {
		id := fmt.Sprintf("call_%d_%d", i, k)
		a.trees[id] = readFileTree(t, w.root)
		if c != nil {
			c.api.queue(
				standInReply{calls: []standInCall{{id, "Bash", map[string]any{"command": script, "description": "edit"}}}},
				standInReply{text: "Done."},
			)
			c.agent("-p", "make the edit", "--allowedTools", "Bash")
		} else {
			w.window(id, script)
		}
		if k == 1 {
			a.push(t, w)
		}
	}
	a.trees[""] = readFileTree(t, w.root)
	a.push(t, w)
	w.unmount()
	if err := os.RemoveAll(filepath.Dir(w.root)); err != nil {
		t.Fatal(err)
	}
	return a
}

// With a remote added, a mounted workspace ships its checkpoints in the
// background and at unmount, without ckfs push; with its remote down,
// nothing waits for it, status says so, and collection keeps every
// checkpoint the remote lacks.
func TestBackgroundPushAndARemoteDown(t *testing.T) {
	t.Parallel() // its own workspace, daemon and server: runs beside the other long sessions
	testenv.RequireFUSE(t)
	endpoint := testenv.SeaweedFS(t, "bgpush")
	creds := []string{"AWS_ACCESS_KEY_ID=ckfs-test", "AWS_SECRET_ACCESS_KEY=ckfs-test"}

	w := newWorkspace(t, fleetRepo)
	w.extraEnv = creds
	w.mount()
	w.ckfs("remote", "add", "team", "s3://bgpush/ws", "--endpoint", endpoint)
	before := readFileTree(t, w.root)
	w.window("call_1", `echo one >> docs/README.md`)
	var rs []struct {
		Unpushed uint64 `json:"unpushed_records"`
		Pushed   uint64 `json:"pushed_seq"`
	}
	for i := 0; ; i++ {
		var st struct {
			Remotes []struct {
				Unpushed uint64 `json:"unpushed_records"`
				Pushed   uint64 `json:"pushed_seq"`
			}
		}
		json.Unmarshal([]byte(w.ckfs("status", "--json")), &st)
		if len(st.Remotes) == 1 && st.Remotes[0].Pushed > 0 && st.Remotes[0].Unpushed == 0 {
			rs = st.Remotes
			break
		}
		if i == 300 {
			t.Fatalf("the daemon did not push within 30 s: %s", w.ckfs("status"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("pushed in the background to seq %d", rs[0].Pushed)
	// The last window goes at unmount.
	w.window("call_2", `echo two >> docs/README.md && rm build.sh`)
	after := readFileTree(t, w.root)
	out := w.ckfs("remote", "list")
	id := strings.TrimSpace(strings.TrimPrefix(strings.Split(out, "\n")[0], "workspace id:"))
	w.unmount()
	os.RemoveAll(filepath.Dir(w.root))
	for cp, want := range map[string]fileTree{"call_1": before, "": after} {
		dir := filepath.Join(t.TempDir(), "out")
		args := []string{"restore", "--remote", "s3://bgpush/ws", "--endpoint", endpoint, "--workspace", id, dir}
		if cp != "" {
			args = append(args, "--to", cp)
		}
		c := exec.Command(ckfsBin, args...)
		c.Env = append(os.Environ(), creds...)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("restore %q: %v\n%s", cp, err, out)
		}
		if diff := cmp.Diff(want, readFileTree(t, dir)); diff != "" {
			t.Errorf("checkpoint %q (-want +got):\n%s", cp, diff)
		}
	}

	// A remote in the configuration file: a new workspace gets it at its
	// first mount and pushes there, and reading it back needs no
	// --workspace (the bucket's prefix holds that one workspace).
	cw := newWorkspace(t, fleetRepo)
	cw.extraEnv = creds
	os.WriteFile(cw.config, []byte("[remote]\nurl = \"s3://bgpush/configured\"\nendpoint = \""+endpoint+"\"\n"), 0o644)
	out = cw.ckfs("mount", cw.root)
	if !strings.Contains(out, "remote origin: s3://bgpush/configured (set at "+cw.config+":2)") {
		t.Fatalf("mount of a new workspace with a configured remote:\n%s", out)
	}
	cw.refreshPids()
	t.Cleanup(cw.unmount)
	cw.window("cfg_1", `echo configured >> docs/README.md`)
	if out := cw.ckfs("unmount", cw.root); strings.Contains(out, "warning") {
		t.Fatalf("unmount after the daemon's last push warns:\n%s", out)
	}
	c := exec.Command(ckfsBin, "log", "--remote", "s3://bgpush/configured", "--endpoint", endpoint, "--oneline")
	c.Env = append(os.Environ(), creds...)
	if out, err := c.CombinedOutput(); err != nil || !strings.Contains(string(out), "cfg_1") {
		t.Fatalf("log --remote without --workspace: %v\n%s", err, out)
	}

	// A remote that is down: windows go on, status names the failure,
	// and a collection keeps what the remote lacks.
	down := newWorkspace(t, fleetRepo)
	down.extraEnv = creds
	down.mount()
	// remote add asks the bucket first: an endpoint nothing serves is
	// refused, and added with --no-check.
	if out, err := down.ckfsErr("remote", "add", "gone", "s3://bgpush/ws", "--endpoint", "http://127.0.0.1:1"); err == nil || !strings.Contains(out, "is the server running") || !strings.Contains(out, "nothing was added") {
		t.Fatalf("remote add of an endpoint nothing serves: %v\n%s", err, out)
	}
	down.ckfs("remote", "add", "gone", "s3://bgpush/ws", "--endpoint", "http://127.0.0.1:1", "--no-check")
	for i := range 4 {
		down.window(fmt.Sprintf("d%d", i), fmt.Sprintf(`echo %d >> docs/README.md`, i))
	}
	for i := 0; !strings.Contains(down.ckfs("status"), "the last push failed"); i++ {
		if i == 300 {
			t.Fatalf("status does not report the failed push: %s", down.ckfs("status"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	out = down.ckfs("gc", "--keep-last", "1")
	if !strings.Contains(out, "held back") || !strings.Contains(out, "not yet pushed to remote gone") {
		t.Fatalf("gc with an unpushed remote:\n%s", out)
	}
	down.ckfs("rewind", "--files", "--to", "d0")
	if got := readFileTree(t, down.root)["docs/README.md"]; got != before["docs/README.md"] {
		t.Fatalf("rewind to the first window after gc: README is %q", got)
	}
	// An unmount says what the remote still lacks.
	if out := down.ckfs("unmount", down.root); !regexp.MustCompile(`warning: remote gone lacks \d+ records`).MatchString(out) {
		t.Fatalf("unmount with records the remote lacks:\n%s", out)
	}
	down.mount()
	// Without the remote, collection is the local policy's again.
	down.ckfs("remote", "remove", "gone")
	if out := down.ckfs("gc", "--keep-last", "1"); strings.Contains(out, "held back") {
		t.Fatalf("gc after the remote was removed:\n%s", out)
	}

	// A push killed midway (SIGKILL, through a slow network) is completed
	// by the next one.
	slow := slowProxy(t, endpoint, 50*time.Millisecond)
	k := newWorkspace(t, fleetRepo+`for i in $(seq 1 300); do echo "file $i $$" > gen$i.txt; done`)
	k.extraEnv = creds
	k.mount()
	k.ckfs("remote", "add", "slow", "s3://bgpush/killed", "--endpoint", slow)
	push := exec.Command(ckfsBin, "push")
	push.Dir, push.Env = k.root, k.env()
	if err := push.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	push.Process.Kill()
	if err := push.Wait(); err == nil {
		t.Fatal("the push finished before it was killed: make the proxy slower")
	}
	k.ckfs("push")
	want := readFileTree(t, k.root)
	id = strings.TrimSpace(strings.TrimPrefix(strings.Split(k.ckfs("remote", "list"), "\n")[0], "workspace id:"))
	dir := filepath.Join(t.TempDir(), "out")
	c = exec.Command(ckfsBin, "restore", "--remote", "s3://bgpush/killed", "--endpoint", endpoint, "--workspace", id, dir)
	c.Env = append(os.Environ(), creds...)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("restore after a killed push: %v\n%s", err, out)
	}
	if diff := cmp.Diff(want, readFileTree(t, dir)); diff != "" {
		t.Errorf("restored after a killed push (-want +got):\n%s", diff)
	}
}

// slowProxy forwards to target, each request delay late.
func slowProxy(t *testing.T, target string, delay time.Duration) string {
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ErrorLog = log.New(io.Discard, "", 0) // the faults are on purpose
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		rp.ServeHTTP(w, r)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String()
}

// scripts/s3-local, as the README's fleet quick start runs it: a server
// started in the background on free ports, the remote add line it prints
// used as printed (no credentials set), a push and a read back, and a
// stop that leaves no process and no socket behind.
func TestS3LocalScript(t *testing.T) {
	t.Parallel() // its own workspace, daemon and server: runs beside the other long sessions
	testenv.RequireFUSE(t)
	testenv.RequireSeaweedFS(t)
	script, err := testenv.RepoFile("scripts/s3-local")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "s3")
	out, err := exec.Command("bash", script, "--background", dir, "quick").CombinedOutput()
	if err != nil {
		t.Fatalf("s3-local --background: %v\n%s", err, out)
	}
	stopped := false
	stop := func() {
		if out, err := exec.Command("bash", script, "--stop", dir).CombinedOutput(); err != nil {
			t.Errorf("s3-local --stop: %v\n%s", err, out)
		}
		stopped = true
	}
	t.Cleanup(func() {
		if !stopped {
			stop()
		}
	})
	pidb, _ := os.ReadFile(filepath.Join(dir, "weed.pid"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(pidb)))
	ports, _ := os.ReadFile(filepath.Join(dir, "weed.ports"))
	testenv.NoteWeedPorts(strings.Fields(string(ports)))
	add := regexp.MustCompile(`ckfs remote add origin (s3://quick/fleet) --endpoint (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(string(out))
	if add == nil || pid == 0 || !alive(pid) {
		t.Fatalf("s3-local printed no remote add line, or no server runs (pid %d):\n%s", pid, out)
	}

	w := newWorkspace(t, fleetRepo)
	w.extraEnv = []string{"AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY="}
	w.mount()
	w.ckfs("remote", "add", "origin", add[1], "--endpoint", add[2])
	w.window("quick_1", `echo quick >> docs/README.md`)
	if out := w.ckfs("push"); !strings.Contains(out, "in s3://quick/fleet: up to seq") {
		t.Fatalf("push: %s", out)
	}
	if out := w.ckfs("log", "--remote", "origin", "--oneline"); !strings.Contains(out, "quick_1") {
		t.Fatalf("log --remote: %s", out)
	}
	w.unmount()

	stop()
	for i := 0; i < 50 && alive(pid); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if alive(pid) {
		t.Fatalf("weed pid %d still runs after s3-local --stop", pid)
	}
	for _, p := range strings.Fields(string(ports)) {
		if m, _ := filepath.Glob("/tmp/seaweedfs-*-grpc-" + p + ".sock"); len(m) > 0 {
			t.Errorf("s3-local --stop left %v", m)
		}
	}
}
